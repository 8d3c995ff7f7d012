"""Finding processes on this machine by their command line, to prove a jailed one is gone."""

import os
import time


def _alive(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # dead, waiting for a reaper that may never come in a container


def processes_with_argument(argument: str, *, settle_seconds: float = 2.0) -> list[int]:
    """Live processes on this machine with ``argument`` in their command line, after up to
    ``settle_seconds`` for killed ones to go (a dying PID namespace takes a moment)."""
    wanted = argument.encode()
    deadline = time.monotonic() + settle_seconds
    while True:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    arguments = fh.read().split(b"\0")
            except OSError:
                continue
            if wanted in arguments and _alive(pid):
                found.append(int(pid))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)
