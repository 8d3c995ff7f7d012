"""Scoring a submission with the scoring program imported with its phase's bundle.

The claim reads a :class:`ProgramPlan` (plain values) from the phase's ``scorer``; the job fetches
the stored program, the phase's answer key (the program's reference data, a zip of its files) and
the submission, runs the program in the jail (:mod:`app.programs.jailed`), and turns its scores
into the same :class:`~app.scoring.core.ScoreResult` a catalogue metric gives, so that boards rank
it like any other: per column, EvalAI's splits mapped to the public and private boards by their
visibility; a Codabench or CodaLab program's one board on both (like a key without a Usage
column). Safe to run twice: nothing is written here, the caller writes the one score row.
"""

import io
import json
import logging
import math
import traceback
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.bundles.archive import Limits
from app.bundles.model import BundleFile, Column, Computed, Program, Split
from app.bundles.runner import ProgramScores
from app.config import Settings
from app.errors import StorageUnavailable
from app.jail.bwrap import JailUnavailable
from app.models import Submission
from app.programs.jailed import ProgramLimits, SubmissionUnreadable, run_program
from app.programs.verdict import verdict
from app.scoring.columns import combine, resolve_columns, tie_key
from app.scoring.core import ScoreResult
from app.storage import local_file

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 64 * 1024  # EvalAI's submission_result kept with the score, as JSON
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


@dataclass(frozen=True)
class ProgramOutcome:
    result: ScoreResult | None
    error: str | None = None
    host_error: str | None = None
    participants_fault: bool = False


def program_plan(submission: Submission) -> ProgramPlan | None:
    """The plan of a submission to a program-scored phase, else None."""
    scorer = submission.phase.scorer
    if not scorer:
        return None
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
    program = Program(
        kind=plan.kind,  # type: ignore[arg-type]
        files=_program_files(local_file(plan.ref, settings=settings)),
        command=plan.command,
    )
    reference = _reference(key_path, plan.reference_names)
    bundle_columns = [_column(raw) for raw in columns]
    splits = [Split(s["key"], s.get("title") or s["key"], s["visibility"]) for s in plan.splits]  # type: ignore[arg-type]
    limits = limits_of(plan, settings)
    try:
        run = run_program(
            program,
            reference,
            submission_path.read_bytes(),
            submission_name=plan.filename,
            limits=limits,
            phase_codename=plan.phase_codename,
            submission_metadata=plan.metadata,
            unzip_limits=Limits(max_total_bytes=settings.bundle_max_unpacked_bytes),
        )
    except SubmissionUnreadable as exc:
        return ProgramOutcome(None, f"the submission cannot be unpacked: {exc}", None, True)
    except (JailUnavailable, OSError) as exc:
        log.error("submission %s: the scoring program could not run: %r", submission_id, exc)
        return ProgramOutcome(None, PLATFORM_FAILURE, f"the scoring program could not run: {exc}")
    found = verdict(run, kind=plan.kind, columns=bundle_columns, splits=splits, limits=limits)
    if found.scores is None:
        return ProgramOutcome(None, found.error, found.host_error, found.participants_fault)
    return ProgramOutcome(result=_result(plan, found.scores, columns, splits))


def _program_files(path: Path) -> tuple[BundleFile, ...]:
    """The program's files from the zip the import stored (``program/...``)."""
    with zipfile.ZipFile(path) as archive:
        return tuple(
            BundleFile(info.filename.removeprefix("program/"), archive.read(info))
            for info in archive.infolist()
            if info.filename.startswith("program/") and not info.is_dir()
        )


def _reference(path: Path, names: Sequence[str]) -> tuple[BundleFile, ...]:
    """The answer key as reference files: the zip the import stored, or (a key uploaded later
    as one file) that file under its imported name."""
    data = path.read_bytes()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return tuple(
                BundleFile(info.filename, archive.read(info))
                for info in archive.infolist()
                if not info.is_dir()
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
