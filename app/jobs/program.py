"""Scoring a submission with the scoring program imported with its phase's bundle.

The claim reads a :class:`ProgramPlan` (plain values) from the phase's ``scorer``; the job fetches
the stored program, the phase's answer key (the program's reference data, a zip of its files) and
the submission, runs the program in the jail (:mod:`app.programs.jailed`), and turns its scores
into the same :class:`~app.scoring.core.ScoreResult` a catalogue metric gives, so that boards rank
it like any other: per column, EvalAI's splits mapped to the public and private boards by their
visibility; a Codabench or CodaLab program's one board on both (like a key without a Usage
column). Safe to run twice: nothing is written here, the caller writes the one score row.
"""

import hashlib
import io
import json
import logging
import math
import tempfile
import traceback
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.bundles.archive import Limits, unzip_submission
from app.bundles.errors import BundleError
from app.bundles.model import BundleFile, Column, Computed, Ingestion, Program, Split
from app.bundles.runner import ProgramScores, is_code_submission
from app.config import Settings
from app.errors import StorageUnavailable
from app.jail.bwrap import JailUnavailable
from app.jobs.code_run import RunRecord
from app.models import Submission
from app.programs.jailed import ProgramLimits, SubmissionUnreadable, run_ingestion, run_program
from app.programs.verdict import ingestion_verdict, verdict
from app.scoring.columns import combine, resolve_columns, tie_key
from app.scoring.core import ScoreResult
from app.storage import local_file

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 64 * 1024  # EvalAI's submission_result kept with the score, as JSON
INGESTION_PLATFORM_FAILURE = (
    "your code could not be run because of a problem on our side; the host has been notified"
)
PLATFORM_FAILURE = (
    "the scoring program could not be run because of a problem on our side; the host has been "
    "notified"
)


@dataclass(frozen=True)
class ProgramPlan:
    """What a run of the phase's program needs, read while the job is claimed."""

    kind: str
    ref: str  # the stored zip of the program's files (under program/)
    command: str | None
    phase_codename: str
    splits: tuple[dict[str, str], ...]
    reference_names: tuple[str, ...]  # the reference data's files as imported
    filename: str  # the submission's uploaded name
    execution_time_limit: float | None  # the bundle's own, in seconds
    metadata: dict[str, Any] = field(default_factory=dict)
    # The phase's ingestion program (its command, hide_log), its files and input data in the
    # program's zip: a code submission runs it first (Codabench's prediction step).
    ingestion: dict[str, Any] | None = None
    # A task of a multi-task phase: its reference data is the key's files under this folder.
    reference_folder: str = ""


@dataclass(frozen=True)
class TaskPlan:
    """One task of a multi-task phase: its key, its own (unqualified) columns and its program
    (None: the task came without one, and is missing from every row)."""

    key: str
    columns: tuple[dict[str, Any], ...]
    program: ProgramPlan | None


@dataclass(frozen=True)
class ProgramOutcome:
    result: ScoreResult | None
    error: str | None = None
    host_error: str | None = None
    participants_fault: bool = False
    # A code submission's ingestion run: its log and failure, kept on the submission.
    record: RunRecord | None = None
    # Whether a failure counts against the quota: the participant's code failed, as a code
    # phase's run does (a scoring program's failure is refunded, as for a results submission).
    charged: bool = False


def program_plan(submission: Submission) -> ProgramPlan | None:
    """The plan of a submission to a program-scored phase, else None."""
    scorer = submission.phase.scorer
    if not scorer:
        return None
    return _plan(submission, scorer)


def task_plans(submission: Submission) -> tuple[TaskPlan, ...]:
    """The plans of a submission to a multi-task phase, one a task; () for another phase."""
    return tuple(
        TaskPlan(
            key=str(task["key"]),
            columns=tuple(dict(c) for c in task.get("columns") or ()),
            program=_plan(submission, task["scorer"], f"{task['key']}/")
            if task.get("scorer")
            else None,
        )
        for task in submission.phase.tasks or ()
    )


def _plan(submission: Submission, scorer: Mapping[str, Any], folder: str = "") -> ProgramPlan:
    team = submission.team
    details = dict(submission.details or {})
    return ProgramPlan(
        kind=str(scorer.get("kind") or ""),
        ref=str(scorer.get("ref") or ""),
        command=scorer.get("command"),
        phase_codename=str(scorer.get("program_phase") or submission.phase.name),
        splits=tuple(dict(s) for s in scorer.get("splits") or ()),
        reference_names=tuple(str(f["path"]) for f in scorer.get("reference") or ()),
        filename=submission.filename,
        execution_time_limit=scorer.get("execution_time_limit"),
        ingestion=_ingestion_spec(scorer),
        reference_folder=folder,
        metadata={
            # What EvalAI's worker passes as submission_metadata (the fields scripts read).
            "id": submission.id,
            "participant_team": submission.team_id,
            "participant_team_name": team.name if team is not None else None,
            "created_by": submission.user.name if submission.user is not None else None,
            "challenge_phase": submission.phase.name,
            "submitted_at": submission.created_at.isoformat() if submission.created_at else None,
            "method_name": str(details.get("method_name") or ""),
            "method_description": str(details.get("method_description") or ""),
            "project_url": str(details.get("project_url") or ""),
            "publication_url": str(details.get("publication_url") or ""),
            "submission_metadata": details,
        },
    )


def _ingestion_spec(scorer: Mapping[str, Any]) -> dict[str, Any] | None:
    spec = scorer.get("ingestion")
    if not spec or scorer.get("kind") == "evalai":
        return None
    return {"command": str(spec["command"]), "hide_log": bool(spec.get("hide_log"))}


def limits_of(plan: ProgramPlan, settings: Settings) -> ProgramLimits:
    """The server's limits; the bundle's own execution_time_limit where it gives one, up to the
    server's wall clock."""
    ceiling, own = settings.program_wall_seconds, plan.execution_time_limit
    return ProgramLimits(
        wall_seconds=float(min(own, ceiling) if own else ceiling),
        memory_mb=settings.program_memory_mb,
        cpus=settings.program_cpus,
        output_mb=settings.program_output_mb,
    )


def score_with_program(
    plan: ProgramPlan,
    *,
    submission_path: Path,
    key_path: Path,
    columns: Sequence[Mapping[str, Any]],
    settings: Settings,
    submission_id: int,
) -> ProgramOutcome:
    """Run the program on the submission; a failure is an outcome, never an exception (a store
    outage excepted: it propagates, so the job is put back)."""
    try:
        return _score(
            plan,
            submission_path=submission_path,
            key_path=key_path,
            columns=columns,
            settings=settings,
            submission_id=submission_id,
        )
    except StorageUnavailable:
        raise
    except Exception:  # noqa: BLE001 - any crash fails the one submission, not the worker
        log.exception("submission %s: running its scoring program crashed", submission_id)
        return ProgramOutcome(None, PLATFORM_FAILURE, traceback.format_exc(limit=20))


def _score(
    plan: ProgramPlan,
    *,
    submission_path: Path,
    key_path: Path,
    columns: Sequence[Mapping[str, Any]],
    settings: Settings,
    submission_id: int,
) -> ProgramOutcome:
    stored = local_file(plan.ref, settings=settings)
    program = Program(
        kind=plan.kind,  # type: ignore[arg-type]
        files=_program_files(stored),
        command=plan.command,
    )
    reference = _reference(key_path, plan.reference_names, plan.reference_folder)
    bundle_columns = [_column(raw) for raw in columns]
    splits = [Split(s["key"], s.get("title") or s["key"], s["visibility"]) for s in plan.splits]  # type: ignore[arg-type]
    limits = limits_of(plan, settings)
    unzip_limits = Limits(max_total_bytes=settings.bundle_max_unpacked_bytes)
    submission, name = submission_path.read_bytes(), plan.filename
    record: RunRecord | None = None
    if plan.ingestion is not None:
        try:
            unzipped = unzip_submission(submission, limits=unzip_limits, name=name)
        except BundleError as exc:
            return ProgramOutcome(
                None, f"the submission cannot be unpacked: {exc.detail}", None, True
            )
        if is_code_submission(unzipped):
            assert unzipped is not None
            ingested = _ingest(plan, stored, unzipped, limits, submission_id, submission)
            if ingested.output is None:
                return ingested.outcome
            submission, name, record = ingested.output, "predictions.zip", ingested.outcome.record
    try:
        run = run_program(
            program,
            reference,
            submission,
            submission_name=name,
            limits=limits,
            phase_codename=plan.phase_codename,
            submission_metadata=plan.metadata,
            unzip_limits=unzip_limits,
        )
    except SubmissionUnreadable as exc:
        what = "the ingestion program's output" if record else "the submission"
        return ProgramOutcome(None, f"{what} cannot be unpacked: {exc}", None, True, record)
    except (JailUnavailable, OSError) as exc:
        log.error("submission %s: the scoring program could not run: %r", submission_id, exc)
        return ProgramOutcome(
            None, PLATFORM_FAILURE, f"the scoring program could not run: {exc}", record=record
        )
    found = verdict(run, kind=plan.kind, columns=bundle_columns, splits=splits, limits=limits)
    if found.scores is None:
        return ProgramOutcome(
            None, found.error, found.host_error, found.participants_fault, record=record
        )
    return ProgramOutcome(result=_result(plan, found.scores, columns, splits), record=record)


@dataclass(frozen=True)
class _Ingested:
    output: bytes | None  # what the scoring step scores (a zip), None when the step failed
    outcome: ProgramOutcome  # the failure, or (output set) only the run's record


def _ingest(
    plan: ProgramPlan,
    stored: Path,
    code: Mapping[str, bytes],
    limits: ProgramLimits,
    submission_id: int,
    submission: bytes,
) -> _Ingested:
    """Codabench's prediction step: the ingestion program runs the participant's code in the
    jail, without the reference data; its output folder is what the scoring program scores,
    with the ``metadata`` Codabench's worker leaves beside it."""
    assert plan.ingestion is not None
    ingestion = Ingestion(
        command=plan.ingestion["command"],
        files=_program_files(stored, "ingestion_program/"),
        input_data=_program_files(stored, "input_data/"),
    )
    code_sha256 = hashlib.sha256(submission).hexdigest()
    with tempfile.TemporaryDirectory(prefix="podium-ingested-") as tmp:
        output = Path(tmp) / "output.zip"
        try:
            run = run_ingestion(ingestion, code, limits=limits, output=output)
        except (JailUnavailable, OSError) as exc:
            log.error("submission %s: the ingestion program could not run: %r", submission_id, exc)
            failed = ProgramOutcome(
                None,
                INGESTION_PLATFORM_FAILURE,
                f"the ingestion program could not run: {exc}",
                record=RunRecord(code_sha256=code_sha256),
            )
            return _Ingested(None, failed)
        found = ingestion_verdict(run, limits=limits)
        record = RunRecord(
            log_head=run.log.head.decode("utf-8", errors="replace"),
            log_tail=run.log.tail.decode("utf-8", errors="replace"),
            log_bytes=run.log.total_bytes,
            failure=found.failure,
            code_sha256=code_sha256,
        )
        if found.failure is not None:
            error = found.error or INGESTION_PLATFORM_FAILURE
            if not plan.ingestion.get("hide_log"):
                error += "; your submission's log shows its output"
            failed = ProgramOutcome(None, error, found.host_error, True, record, charged=True)
            return _Ingested(None, failed)
        data = output.read_bytes()
    try:
        predictions = _with_metadata(data, seconds=run.seconds)
    except (zipfile.BadZipFile, ValueError) as exc:
        words = f"its output cannot be passed on to scoring ({exc})"
        failed = ProgramOutcome(
            None,
            f"your code failed in the ingestion program: {words}",
            f"the ingestion step failed: {words}",
            True,
            replace(record, failure="invalid_output"),
            charged=True,
        )
        return _Ingested(None, failed)
    return _Ingested(predictions, ProgramOutcome(None, record=record))


def _with_metadata(data: bytes, *, seconds: float) -> bytes:
    """The ingestion's output zip with Codabench's ``metadata`` added (v1.5-era scorers read
    ``elapsedTime`` there); like Codabench, an output that wrote its own is refused."""
    out = io.BytesIO(data)
    with zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        if "metadata" in archive.namelist():
            raise ValueError(
                "the output folder already holds a metadata file, which the platform writes"
            )
        elapsed = round(seconds, 3)
        archive.writestr(
            "metadata",
            f"elapsedTime: {elapsed}\nexitCode: null\ningestionElapsedTime: {elapsed}\n"
            "ingestionExitCode: 0\n",
        )
    return out.getvalue()


def _program_files(path: Path, folder: str = "program/") -> tuple[BundleFile, ...]:
    """The program's files from the zip the import stored (``program/...``; the ingestion
    program's under ``ingestion_program/``, its input data under ``input_data/``)."""
    with zipfile.ZipFile(path) as archive:
        return tuple(
            BundleFile(info.filename.removeprefix(folder), archive.read(info))
            for info in archive.infolist()
            if info.filename.startswith(folder) and not info.is_dir()
        )


def _reference(path: Path, names: Sequence[str], folder: str = "") -> tuple[BundleFile, ...]:
    """The answer key as reference files: the zip the import stored (a task's: its files under
    ``folder``), or (a key uploaded later as one file) that file under its imported name."""
    data = path.read_bytes()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return tuple(
                BundleFile(info.filename.removeprefix(folder), archive.read(info))
                for info in archive.infolist()
                if not info.is_dir() and info.filename.startswith(folder)
            )
    return (BundleFile(names[0] if len(names) == 1 else "answer_key", data),)


def _column(raw: Mapping[str, Any]) -> Column:
    computed = raw.get("computed")
    return Column(
        key=str(raw["key"]),
        title=str(raw.get("title") or raw["key"]),
        direction=raw.get("direction") or "maximize",
        source_key=raw.get("source_key"),
        computed=Computed(computed["op"], tuple(computed["of"])) if computed else None,
    )


def _result(
    plan: ProgramPlan,
    scores: ProgramScores,
    definitions: Sequence[Mapping[str, Any]],
    splits: Sequence[Split],
) -> ScoreResult:
    columns = resolve_columns(definitions)
    has_private = any(s.visibility != "public" for s in splits)
    scored: dict[str, dict[str, float | None]] = {}
    for column in columns:
        if column.computed:
            continue
        # NaN and infinities are no score (and no JSON value a database takes): blank cells.
        cells = {k: v for k, v in scores.scores.get(column.key, {}).items() if _finite(v)}
        if plan.kind != "evalai":
            # One board (Codabench, CodaLab): the same values on the public and private boards.
            value = cells.get("public")
            scored[column.key] = {"score": value, "public": value, "private": value}
            continue
        public = cells.get("public")
        private = cells.get("private")
        if private is None:
            private = cells.get("hidden")  # EvalAI's host-only split: the board revealed later
        if not has_private:
            private = public  # no private split: every value counts for both boards
        score = private if private is not None else public
        scored[column.key] = {"score": score, "public": public, "private": private}
    values = combine(columns, scored)
    ranking = values[columns[0].key]
    return ScoreResult(
        score=ranking["score"],  # type: ignore[arg-type]
        public=ranking["public"],
        private=ranking["private"],
        details={
            "scorer": plan.kind,
            "notes": list(scores.notes[:50]),
            "submission_result": _kept(scores.extra),
        },
        has_usage=has_private,
        columns=values,
        public_tie=tie_key(columns, values, "public"),
        private_tie=tie_key(columns, values, "private"),
    )


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _kept(extra: Any) -> Any:
    """EvalAI's ``submission_result`` as strict JSON (no NaN), or a note when it is too large."""
    try:
        text = json.dumps(extra, allow_nan=False, default=str)
    except ValueError:
        return "(not kept: it holds NaN or infinite numbers)"
    if len(text) > MAX_RESULT_CHARS:
        return f"(not kept: {len(text)} characters as JSON)"
    return json.loads(text)
