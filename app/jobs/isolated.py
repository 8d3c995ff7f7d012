"""Scoring one large submission in a child process, so the server's memory returns after it.

Started by :mod:`app.jobs.score` as ``python -m app.jobs.isolated``: reads the plan and the
settings as JSON on stdin, writes the outcome as JSON on stdout, and exits. Whatever the parse of
a big file took goes back to the system with the process, however the allocators held on to it.
"""

import ctypes
import json
import os
import signal
import sys


def _die_with_parent() -> None:
    """Ask Linux to kill this process if the scorer that waits for it dies (best effort)."""
    try:
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main() -> int:
    _die_with_parent()
    request = json.load(sys.stdin)
    # The outcome goes to the real stdout; anything printed while scoring goes to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)

    from app.config import Settings
    from app.jobs.score import ScoringPlan, evaluate_here

    outcome = evaluate_here(
        ScoringPlan(**request["plan"]),
        Settings(**request["settings"]),
        submission_id=request["submission_id"],
    )
    with os.fdopen(result_fd, "w", encoding="utf-8") as out:
        json.dump(outcome.to_json(), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
