"""What came of a run, from what the host saw (the clock, the kernel's OOM count, the log, the file
received) and what the runner in the jail reported: the file, or the failure that names why not.

Pure: no process, no file; each rule is tested by itself (tests/coderun/test_verdict.py).
"""

import signal
from dataclasses import dataclass
from typing import Any

from app.coderun.limits import CodeLimits
from app.coderun.outcome import Failure, RunLog, RunnerError
from app.jail.runner import read_status as read_status

# Under RLIMIT_AS an allocation fails inside the code: Python's MemoryError (numpy's "Unable to
# allocate"), C's ENOMEM, C++'s bad_alloc.
_MEMORY_WORDS = ("MemoryError", "Unable to allocate", "Cannot allocate memory", "bad_alloc")
_MEMORY_ERRORS = ("MemoryError", "_ArrayMemoryError")
_MESSAGE_CHARS = 1000


@dataclass(frozen=True)
class Facts:
    """What the host saw of the run. ``received``: bytes of submission.csv that came back, None
    where it was more than the limit."""

    timed_out: bool
    oom_kills: int
    returncode: int | None
    received: int | None
    log: RunLog
    memory_by_rlimit: bool


@dataclass(frozen=True)
class Verdict:
    failure: Failure | None
    message: str
    exit_code: int | None = None
    cell: int | None = None


def verdict(
    status: dict[str, Any] | None, facts: Facts, *, limits: CodeLimits, max_output_bytes: int
) -> Verdict:
    """The run's verdict; raises :class:`RunnerError` where the platform's side failed."""
    state = status.get("status") if status else None
    if state == "delivered" and status and facts.received == status.get("bytes"):
        # Complete and confirmed before the end: a kill at the very deadline does not undo it.
        return Verdict(None, "the run wrote submission.csv", exit_code=0)
    if facts.timed_out:
        return Verdict(
            "timeout",
            f"the run did not finish within its limit of {limits.wall_seconds:g} s and was stopped",
        )
    memory = f"the run exceeded its memory limit of {limits.memory_mb} MB"
    if facts.oom_kills:
        return Verdict("memory", memory + " (the kernel stopped it)")
    says_memory = facts.memory_by_rlimit and _says_memory(facts.log)
    if status is None:
        if says_memory:
            return Verdict("memory", memory)
        return Verdict(
            "runtime_error",
            f"the run ended abruptly (exit status {facts.returncode})",
            exit_code=facts.returncode,
        )
    full = (
        f"the run filled its working space (/kaggle/working, {limits.working_mb} MB) and could "
        "not write more"
    )
    working_full = bool(status.get("working_full"))
    if state == "exited":
        code = int(status.get("code") or 0)
        if says_memory:
            return Verdict("memory", memory, exit_code=code)
        if working_full:
            return Verdict("output_too_large", full, exit_code=code)
        raised = last_exception(facts.log) if code > 0 else None
        if raised:
            message = f"the code raised {raised} (exit status {code})"[:_MESSAGE_CHARS]
            return Verdict("runtime_error", message, exit_code=code)
        return Verdict("runtime_error", _exit_message(code), exit_code=code)
    if state == "cell_error":
        cell = status.get("cell") if isinstance(status.get("cell"), int) else None
        ename, evalue = str(status.get("ename")), str(status.get("evalue"))
        where = f"code cell {cell}" if cell else "a cell"
        if ename in _MEMORY_ERRORS:
            return Verdict("memory", f"{memory} ({where} raised {ename})", cell=cell)
        if working_full:
            return Verdict("output_too_large", f"{full} ({where} raised {ename})", cell=cell)
        message = f"{where} raised {ename}: {evalue}"[:_MESSAGE_CHARS]
        return Verdict("runtime_error", message, cell=cell)
    if state == "kernel_died":
        if facts.memory_by_rlimit:
            # Under RLIMIT_AS a kernel dies silently when an allocation fails in C code (pandas'
            # import alone maps hundreds of MB): memory is by far the likeliest cause.
            return Verdict(
                "memory",
                f"the notebook's kernel died under the address-space limit of "
                f"{limits.memory_mb} MB",
            )
        return Verdict("runtime_error", "the notebook's kernel died")
    if state == "no_output":
        reason = status.get("reason") or (
            "the run ended without writing /kaggle/working/submission.csv"
        )
        return Verdict("no_output", str(reason), exit_code=0)
    if state == "output_too_large" or facts.received is None:
        return Verdict(
            "output_too_large",
            f"submission.csv is larger than {max_output_bytes} bytes, the largest submission",
            exit_code=0,
        )
    if state == "delivered":
        return Verdict("runtime_error", "the run was stopped while it handed back submission.csv")
    detail = str(status.get("message", state))[:_MESSAGE_CHARS]
    raise RunnerError(f"the runner in the jail failed: {detail}\n{facts.log.text()[-4000:]}")


_TRACEBACK = "Traceback (most recent call last):"


def last_exception(log: RunLog) -> str | None:
    """The last line of the log's last Python traceback (``KeyError: 'target'``): the
    exception's type and message, which say why the code failed. None without a traceback."""
    text = (log.tail or log.head).decode("utf-8", errors="replace")
    start = text.rfind(_TRACEBACK)
    if start < 0:
        return None
    for line in text[start + len(_TRACEBACK) :].splitlines():
        # Frames and their source lines are indented; the exception's line is not.
        if line.strip() and not line[:1].isspace():
            return line.strip()[:500]
    return None


def _says_memory(log: RunLog) -> bool:
    last = (log.tail or log.head)[-4096:].decode("utf-8", errors="replace")
    return any(word in last for word in _MEMORY_WORDS)


def _exit_message(code: int) -> str:
    if code < 0:
        number = -code
        name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
        return f"the code was killed by {name}"
    return f"the code exited with status {code}"
