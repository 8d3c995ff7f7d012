"""Benchmark mode's rules: a benchmark never ends (no deadline, no phase with an end), and its
board is exact (a Ladder hides what the rows' key versions are there to show). Every door that
writes these settings (create, settings, a phase's end, the launch checklist) asks here.

What a benchmark does differently lives with what it changes: publishing a key version rescores
(app.jobs.rescore), and its boards are read by app.leaderboard.benchmark.
"""

from collections.abc import Iterable
from datetime import datetime


def benchmark_problems(
    *,
    benchmark: bool,
    every_submission: bool,
    public_board_mode: str,
    deadline: datetime | None,
    phase_ends: Iterable[tuple[str, datetime | None]],
) -> list[str]:
    """Each broken rule as one sentence naming the setting to change; none: the settings hold."""
    if not benchmark:
        if every_submission:
            return [
                "board_every_submission: a board of every submission is a benchmark's: set "
                "benchmark: true as well"
            ]
        return []
    problems = []
    # A competition's deadline is its last phase's end (app.competitions.phases.sync_window).
    ended = [name for name, end in phase_ends if end is not None]
    if ended or deadline is not None:
        which = ", ".join(f"phase '{name}'" for name in ended) or "the competition"
        problems.append(
            f"a benchmark never ends: it has no deadline and no phase an end; clear the end of "
            f"{which}"
        )
    if public_board_mode != "exact":
        problems.append(
            f"public_board_mode: a benchmark's board shows exact scores, each with the key "
            f"version it was scored on; '{public_board_mode}' (a Ladder) would hide them: use "
            "'exact'"
        )
    return problems
