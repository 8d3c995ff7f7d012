"""A code submission's run, between the claim and the scoring: the competition's data files
(hidden ones included) are fetched to local files, the code runs in the jail
(:func:`app.coderun.runner.run_code`), and the ``submission.csv`` it wrote is then scored exactly
like an uploaded file. A failure of the code is the participant's (it keeps its quota charge, as
on Kaggle); a failure of the platform (no jail here, the runner crashed) is refunded."""

import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.coderun.code import InvalidCode
from app.coderun.limits import CodeLimits
from app.coderun.outcome import KAGGLE_WORDS, CodeRunOutcome, RunnerError
from app.coderun.runner import InputFile, run_code
from app.config import Settings
from app.jail.bwrap import JailUnavailable
from app.storage import CHUNK, open_blob

log = logging.getLogger(__name__)

RUN_FAILURE = (
    "the code could not be run because of a problem on our side; the host has been notified"
)
_HOST_LOG_CHARS = 4000  # the log's end, kept with the host's reason for a failed run


@dataclass(frozen=True)
class CodeInput:
    """One data file as the claim read it: its name in the layout and where its bytes are."""

    name: str
    storage_key: str
    sha256: str


@dataclass(frozen=True)
class CodePlan:
    """What a code run needs, read while the job is claimed."""

    filename: str
    slug: str
    limits: dict[str, Any]
    inputs: tuple[CodeInput, ...]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "CodePlan":
        return cls(
            filename=data["filename"],
            slug=data["slug"],
            limits=dict(data["limits"]),
            inputs=tuple(CodeInput(**item) for item in data["inputs"]),
        )


@dataclass(frozen=True)
class RunRecord:
    """What a run leaves on its submission: its log, its failure's name, its provenance."""

    log_head: str | None = None
    log_tail: str | None = None
    log_bytes: int | None = None
    failure: str | None = None
    code_sha256: str | None = None
    inputs_sha256: str | None = None
    runtime_fingerprint: str | None = None


@dataclass(frozen=True)
class RunResult:
    """The produced file (None when the run failed), the record, and for a failure the messages
    for the participant and the host, and whose fault it was."""

    output: Path | None
    record: RunRecord
    error: str | None = None
    host_error: str | None = None
    participants_fault: bool = False


def record_of(outcome: CodeRunOutcome) -> RunRecord:
    return RunRecord(
        log_head=outcome.log.head.decode("utf-8", errors="replace"),
        log_tail=outcome.log.tail.decode("utf-8", errors="replace"),
        log_bytes=outcome.log.total_bytes,
        failure=outcome.failure,
        code_sha256=outcome.provenance.code_sha256,
        inputs_sha256=outcome.provenance.inputs_sha256,
        runtime_fingerprint=outcome.provenance.runtime_fingerprint,
    )


def failure_message(failure: str, message: str) -> str:
    """The participant's words for a failed run: Kaggle's name for it, ours, and why."""
    return f"{KAGGLE_WORDS[failure]} ({failure}): {message}"


def _log_end(record: RunRecord) -> str:
    return (record.log_tail or record.log_head or "")[-_HOST_LOG_CHARS:]


@contextmanager
def run_submission_code(
    plan: CodePlan, code_path: Path, settings: Settings, *, submission_id: int
) -> Iterator[RunResult]:
    """Run the code; yield the result while its output file still exists (it is removed after)."""
    with tempfile.TemporaryDirectory(prefix="podium-code-") as tmp:
        work = Path(tmp)
        try:
            inputs = _fetch_inputs(plan, work / "inputs", settings)
            outcome = run_code(
                code=code_path,
                filename=plan.filename,
                slug=plan.slug,
                inputs=inputs,
                limits=CodeLimits.model_validate(plan.limits),
                output_dir=work,
                max_output_bytes=settings.max_upload_bytes,
                max_code_bytes=settings.code_max_bytes,
            )
        except InvalidCode as exc:  # upload checks it too; a stricter runner may still refuse
            yield RunResult(None, RunRecord(failure="runtime_error"), str(exc), None, True)
            return
        except (JailUnavailable, RunnerError, ValueError, OSError) as exc:
            log.error("submission %s: the code could not be run: %r", submission_id, exc)
            yield RunResult(None, RunRecord(), RUN_FAILURE, f"the code run failed: {exc}")
            return
        record = record_of(outcome)
        if outcome.failure is not None:
            yield RunResult(
                None,
                record,
                failure_message(outcome.failure, outcome.message),
                f"{outcome.failure}: {outcome.message}\n--- the log's end ---\n{_log_end(record)}",
                participants_fault=True,
            )
            return
        yield RunResult(outcome.output, record)


def refused_output(result: RunResult, intake_message: str) -> RunResult:
    """The run's submission.csv was refused by intake: ``invalid_output`` with intake's words."""
    record = RunRecord(**{**result.record.__dict__, "failure": "invalid_output"})
    return RunResult(
        None,
        record,
        failure_message("invalid_output", intake_message),
        f"invalid_output: {intake_message}\n--- the log's end ---\n{_log_end(record)}",
        participants_fault=True,
    )


def _fetch_inputs(plan: CodePlan, folder: Path, settings: Settings) -> list[InputFile]:
    """Every data file as a local file (the jail binds them read-only by name)."""
    folder.mkdir(mode=0o711)
    inputs = []
    for item in plan.inputs:
        target = folder / item.name
        with open_blob(item.storage_key, settings=settings) as source, target.open("wb") as out:
            shutil.copyfileobj(source, out, CHUNK)
        inputs.append(InputFile(name=item.name, path=target, sha256=item.sha256))
    return inputs
