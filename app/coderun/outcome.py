"""The typed result of one code run: the file it produced, or the failure that named why not."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.coderun.limits import CodeLimits

# The log's shape and budgets are the shared runner's (every kind's log is the same).
from app.jail.runner import LOG_HEAD_BYTES as LOG_HEAD_BYTES
from app.jail.runner import LOG_TAIL_BYTES as LOG_TAIL_BYTES
from app.jail.runner import RunLog as RunLog

Failure = Literal[
    "timeout",  # the wall limit was reached; everything was killed
    "memory",  # the memory limit was reached (the kernel killed a process, or MemoryError)
    "runtime_error",  # the code exited non-zero or a cell raised (exit code / cell kept)
    "no_output",  # it ended well but wrote no /kaggle/working/submission.csv
    "output_too_large",  # submission.csv past the upload limit, or /kaggle/working filled up
    "invalid_output",  # reserved for intake's verdict on submission.csv (set by the caller)
]

# The words Kaggle's own pages use for each failure, shown beside ours.
KAGGLE_WORDS: dict[str, str] = {
    "timeout": "Notebook Timeout",
    "memory": "Notebook Exceeded Allowed Compute",
    "runtime_error": "Notebook Threw Exception",
    "no_output": "Submission CSV Not Found",
    "output_too_large": "Notebook Exceeded Allowed Compute",
    "invalid_output": "Submission Scoring Error",
}


class RunnerError(RuntimeError):
    """The platform's side of a run failed (the notebook kernel never started, the runner in the
    jail crashed): not the participant's doing, so the caller retries or refunds. The message is
    for the host and the logs."""


@dataclass(frozen=True)
class Provenance:
    """What makes a run reproducible: the same three give the same file."""

    code_sha256: str
    inputs_sha256: str
    runtime_fingerprint: str


@dataclass(frozen=True)
class CodeRunOutcome:
    """One run. ``output`` is the host path of the ``submission.csv`` it wrote (in the caller's
    ``output_dir``) when it succeeded; else ``failure`` names why, ``message`` says it to the
    participant (and host), ``exit_code`` is the code's exit status for ``runtime_error`` (or the
    failing cell's number as ``cell``). ``enforced`` names how each limit was held on this
    machine (e.g. ``{"memory": "cgroup"}`` or ``"rlimit"``)."""

    output: Path | None
    failure: Failure | None
    message: str
    log: RunLog
    provenance: Provenance
    limits: CodeLimits
    seconds: float
    exit_code: int | None = None
    cell: int | None = None
    enforced: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def kaggle_words(self) -> str | None:
        return None if self.failure is None else KAGGLE_WORDS[self.failure]
