"""Scoring one submission: claim it, score it outside any transaction, record the outcome.

Safe to run twice for the same submission (a retried Celery task, a recovered thread job):
a finished submission is left alone and a score row already written is never written again.

No session is open while a file is parsed or scored: the claim reads what scoring needs into a
:class:`ScoringPlan` and commits, the scoring runs with no connection, and the outcome is written
in a second short transaction. On SQLite, where every transaction holds the write lock, the API
therefore never waits for a scoring job. A large submission is scored in a child process
(:mod:`app.jobs.isolated`), so the memory its parsing takes is returned when the child exits.
"""

import functools
import gzip
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from sqlalchemy import Integer, bindparam, exists, insert, literal_column, select, update
from sqlalchemy.orm import Session, aliased, joinedload, sessionmaker

import app
from app.coderun.limits import CodeLimits
from app.config import Settings
from app.custom_metrics.sandbox import CustomMetricFailure
from app.db import unit_of_work
from app.errors import StorageUnavailable
from app.evaluation.columns import column_defs
from app.evaluation.custom import score_with_custom_metric
from app.evaluation.keys import intake_limits, key_table
from app.evaluation.metric import is_custom, metric_for
from app.events.stream import SUBMISSION_FAILED, SUBMISSION_SCORED, emit_rows
from app.jobs.code_run import CodeInput, CodePlan, RunRecord, refused_output, run_submission_code
from app.jobs.honest import (
    Stats,
    StatsJob,
    add_score_stats,
    inline_stats,
    refresh_bands_after_all,
    stats_job,
    write_new_stats,
)
from app.jobs.lease import (
    Lease,
    advance,
    claimable,
    give_up,
    held_as_parameters,
    lease_parameters,
    put_back,
    renewer,
    try_claim,
    try_claim_many,
)
from app.jobs.lease import now as lease_now
from app.jobs.program import (
    ProgramPlan,
    TaskPlan,
    limits_of,
    program_plan,
    score_with_program,
    task_plans,
)
from app.jobs.tasks import score_tasks
from app.jobs.turns import claim_run
from app.leaderboard.standings import recompute_teams
from app.ledger import facts
from app.models import (
    AnswerKey,
    Competition,
    DataFile,
    Phase,
    Score,
    Submission,
    SubmissionStatus,
)
from app.models.phase import KIND_CODE, KIND_SIMULATION
from app.ops.logs import request_id_context
from app.ops.telemetry import SCORING_FAILURES, SCORING_SECONDS, size_class
from app.scoring.columns import resolve_columns
from app.scoring.core import ScoreResult, ScoringError, score_columns_file
from app.storage import local_file, store_stream

log = logging.getLogger(__name__)

GENERIC_FAILURE = "scoring failed because of a problem on our side; the host has been notified"
KEY_FAILURE = "the answer key could not score this submission; the host has been notified"
_APP_ROOT = Path(app.__file__).resolve().parent.parent
_CHILD_ERROR_SHOWN = 4000  # characters of a crashed scoring child's stderr kept for the host


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Outcome:
    result: ScoreResult | None
    error: str | None = None
    host_error: str | None = None
    # Whose fault a failure is decides whether it counts against the team's quota.
    participants_fault: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "result": asdict(self.result) if self.result is not None else None,
            "error": self.error,
            "host_error": self.host_error,
            "participants_fault": self.participants_fault,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Outcome":
        result = data.get("result")
        return cls(
            result=ScoreResult(**result) if result is not None else None,
            error=data.get("error"),
            host_error=data.get("host_error"),
            participants_fault=bool(data.get("participants_fault")),
        )


@dataclass(frozen=True)
class ScoringPlan:
    """Everything one scoring needs, as plain values read while the job is claimed."""

    submission_path: str
    key_path: str
    key_sha256: str
    metric_name: str
    metric_params: dict[str, Any]
    id_column: str | None
    custom_metric_path: str | None
    custom_metric_direction: str | None
    # The leaderboard column definitions of the submission's phase.
    columns: tuple[dict[str, Any], ...] = ()
    # A code phase's submission: ``submission_path`` is the code, run first (app.jobs.code_run).
    code: CodePlan | None = None
    # A phase scored by its imported program: run in the jail instead (app.jobs.program).
    program: ProgramPlan | None = None
    # A multi-task phase: each task's program in turn (app.jobs.tasks).
    tasks: tuple[TaskPlan, ...] = ()

    @classmethod
    def read(
        cls,
        submission: Submission,
        competition: Competition,
        key: AnswerKey,
        *,
        code: CodePlan | None = None,
    ) -> "ScoringPlan":
        return cls(
            columns=tuple(column_defs(competition, submission.phase)),
            code=code,
            program=program_plan(submission),
            tasks=task_plans(submission),
            # A code submission scored before is rescored from the file its run wrote.
            submission_path=submission.output_path or submission.path,
            key_path=key.path,
            key_sha256=key.sha256,
            metric_name=competition.metric_name,
            metric_params=dict(competition.metric_params or {}),
            id_column=competition.id_column,
            custom_metric_path=competition.custom_metric_path,
            custom_metric_direction=competition.custom_metric_direction,
        )

    def fetched(self, settings: Settings) -> "ScoringPlan":
        """The same plan naming local files: those kept in an object store are fetched into this
        machine's cache first (raises StorageUnavailable while the store is down)."""
        metric = self.custom_metric_path
        return replace(
            self,
            submission_path=str(local_file(self.submission_path, settings=settings)),
            key_path=str(local_file(self.key_path, settings=settings)),
            custom_metric_path=str(local_file(metric, settings=settings)) if metric else None,
        )

    def competition(self) -> Competition:
        # Transient, never added to a session: only what metric_for and the scorers read.
        return Competition(
            metric_name=self.metric_name,
            metric_params=self.metric_params,
            id_column=self.id_column,
            custom_metric_path=self.custom_metric_path,
            custom_metric_direction=self.custom_metric_direction,
        )

    def key(self) -> AnswerKey:
        return AnswerKey(path=self.key_path, sha256=self.key_sha256)


@dataclass(frozen=True)
class Claim:
    lease: Lease
    key_id: int
    plan: ScoringPlan
    time_limit: float
    request_id: str | None
    hold_for: float = 0.0
    # An uploaded file's stats job: on a small key its stats are written with the score.
    stats: StatsJob | None = None
    # A host's reference entry: where every team's Ladder starts from.
    baseline: bool = False


def _claim(factory: sessionmaker[Session], submission_id: int, settings: Settings) -> Claim | None:
    """Take the submission under a lease; None when finished, held by another scorer, out of
    attempts (it fails, refunded) or without a published key yet."""
    with unit_of_work(factory) as session:
        upload = _claim_queued_upload(session, submission_id, settings)
        if upload is not _ANOTHER_CASE:
            return upload
        # One statement for the submission, its competition, its phase and the phase's keys.
        submission = session.get(
            Submission,
            submission_id,
            options=[
                joinedload(Submission.competition),
                joinedload(Submission.phase).joinedload(Phase.answer_keys),
            ],
        )
        if submission is None or submission.status in (
            SubmissionStatus.scored,
            SubmissionStatus.failed,
        ):
            return None
        competition = submission.competition
        key = submission.phase.board_key if competition else None
        if competition is None or key is None:
            return None
        if submission.attempts >= settings.scoring_max_attempts and session.scalar(
            select(Submission.id).where(Submission.id == submission_id, claimable(lease_now()))
        ):
            give_up(submission, settings)
            return None
        seconds = settings.scoring_lease_seconds
        lease = (
            claim_run(session, submission, seconds=seconds)  # one run per team at a time
            if submission.phase.takes_code
            else try_claim(session, submission_id, seconds=seconds)
        )
        if lease is None:
            return None
        code = _code_plan(session, submission, competition)
        return _claim_of(lease, submission, competition, key, settings, code=code)


def _claim_of(
    lease: Lease,
    submission: Submission,
    competition: Competition,
    key: AnswerKey,
    settings: Settings,
    *,
    code: CodePlan | None = None,
) -> Claim:
    """The claim of a submission taken under ``lease``: its plan, limits and stats job."""
    # The scoring's own limit: the competition's, else the server's.
    time_limit = float(
        competition.scoring_time_limit_seconds or settings.scoring_time_limit_seconds
    )
    plan = ScoringPlan.read(submission, competition, key, code=code)
    run_for = 0.0
    if plan.program is not None:
        # A code submission to a phase with an ingestion program runs two steps, each
        # bounded by the wall limit (as Codabench's prediction and scoring runs are).
        steps = 2 if plan.program.ingestion else 1
        run_for = steps * (limits_of(plan.program, settings).wall_seconds + 60)
    for task in plan.tasks:
        if task.program is not None:
            steps = 2 if task.program.ingestion else 1
            run_for += steps * (limits_of(task.program, settings).wall_seconds + 60)
    plain = code is None and plan.program is None and not plan.tasks
    return Claim(
        lease=lease,
        key_id=key.id,
        plan=plan,
        time_limit=time_limit,
        request_id=submission.request_id,
        stats=stats_job(submission, competition, key) if plain else None,
        baseline=submission.baseline,
        # The lease is renewed through the run and then the scoring.
        hold_for=time_limit + (float(code.limits["wall_seconds"]) + 60 if code else 0) + run_for,
    )


def _board_key_id(phase_id: Any) -> Any:
    """The id of the phase's newest published key version (``Phase.board_key`` in SQL), for the
    phase ``phase_id`` of the enclosing statement. Over an alias of the keys: the enclosing
    statement may join them too."""
    keys = aliased(AnswerKey)
    return (
        select(keys.id)
        .where(keys.phase_id == phase_id, keys.published_at.is_not(None))
        .order_by(keys.version.desc())
        .limit(1)
        .scalar_subquery()
    )


class _AnotherCase(Enum):
    token = "another case"


# Not a queued upload to a catalogue-scored phase: the general claim decides.
_ANOTHER_CASE = _AnotherCase.token


@functools.cache
def _queued_upload_plan(many: bool = False):  # type: ignore[no-untyped-def]
    """What a scoring plan reads of a submission, its competition, its phase and the phase's
    published key, in one narrow row (parameter ``submission_id``; with ``many``, the rows of
    the ids in ``submission_ids``)."""
    board_key = _board_key_id(Phase.id)
    which = (
        Submission.id.in_(bindparam("submission_ids", expanding=True))
        if many
        else Submission.id == bindparam("submission_id", type_=Integer)
    )
    return (
        select(
            *(getattr(Submission, name).label(f"submission_{name}") for name in _PLAN_SUBMISSION),
            *(getattr(Competition, name).label(name) for name in _PLAN_COMPETITION),
            Phase.columns.label("phase_columns"),
            Phase.submission_kind,
            Phase.scorer,
            Phase.tasks,
            *(getattr(AnswerKey, name).label(f"key_{name}") for name in _PLAN_KEY),
        )
        .join(Competition, Competition.id == Submission.competition_id)
        .join(Phase, Phase.id == Submission.phase_id)
        .outerjoin(AnswerKey, AnswerKey.id == board_key)
        .where(which)
    )


_PLAN_SUBMISSION = (
    "id",
    "status",
    "attempts",
    "team_id",
    "path",
    "output_path",
    "request_id",
    "baseline",
)
# What ScoringPlan.read, column_defs and stats_job read of the competition.
_PLAN_COMPETITION = (
    "id",
    "metric_name",
    "metric_params",
    "id_column",
    "custom_metric_path",
    "custom_metric_direction",
    "columns",
    "score_intervals",
    "public_board_mode",
    "scoring_time_limit_seconds",
)
_PLAN_KEY = ("id", "path", "sha256", "phase_id", "n_rows", "n_public")


def _claim_queued_upload(
    session: Session, submission_id: int, settings: Settings
) -> Claim | None | _AnotherCase:
    """The common case in narrow Core statements, with no entity loaded: a queued uploaded file
    to a phase its catalogue metrics score, with a published key. Anything else (a code or
    program phase, a lapsed lease taken over, a last attempt, no key yet, a finished
    submission) is :data:`_ANOTHER_CASE`, for the general claim."""
    return _claim_queued_uploads(session, [submission_id], settings)[submission_id]


def _claim_queued_uploads(
    session: Session, submission_ids: list[int], settings: Settings
) -> dict[int, Claim | None | _AnotherCase]:
    """:func:`_claim_queued_upload` for several submissions, in two statements whatever their
    number: their plans' rows, then one UPDATE taking the leases of those it can claim."""
    connection = session.connection()
    if len(submission_ids) == 1:
        rows = connection.execute(_queued_upload_plan(), {"submission_id": submission_ids[0]})
    else:
        rows = connection.execute(_queued_upload_plan(True), {"submission_ids": submission_ids})
    found = {
        row.submission_id: row
        for row in rows
        if row.submission_status == SubmissionStatus.queued
        and row.submission_kind != KIND_CODE
        and not row.scorer
        and not row.tasks
        and row.key_id is not None
        and row.submission_attempts < settings.scoring_max_attempts
    }
    leases = try_claim_many(session, list(found), seconds=settings.scoring_lease_seconds)
    claims: dict[int, Claim | None | _AnotherCase] = {}
    for submission_id in submission_ids:
        if submission_id not in found:
            claims[submission_id] = _ANOTHER_CASE
        elif submission_id not in leases:
            claims[submission_id] = None  # another scorer took it in between
        else:
            claims[submission_id] = _upload_claim(
                found[submission_id], leases[submission_id], settings
            )
    return claims


def _upload_claim(found: Any, lease: Lease, settings: Settings) -> Claim:
    """A queued upload's claim from its narrow row, as the general claim makes it from entities."""
    # Transient copies, never added to the session: what the plan's readers take.
    competition = Competition(**{name: found._mapping[name] for name in _PLAN_COMPETITION})
    key = AnswerKey(**{name: found._mapping[f"key_{name}"] for name in _PLAN_KEY})
    submission = Submission(
        **{name: found._mapping[f"submission_{name}"] for name in _PLAN_SUBMISSION},
        phase=Phase(columns=found.phase_columns, scorer=None),
    )
    return _claim_of(lease, submission, competition, key, settings)


def _code_plan(
    session: Session, submission: Submission, competition: Competition
) -> CodePlan | None:
    phase = submission.phase
    if not phase.takes_code:
        return None
    files = session.scalars(
        select(DataFile).where(DataFile.competition_id == competition.id).order_by(DataFile.name)
    )
    return CodePlan(
        filename=submission.filename,
        slug=competition.slug,
        limits=CodeLimits.model_validate(phase.code_limits or {}).model_dump(),
        # Every data file, hidden ones included: a code competition's test set is hidden.
        inputs=tuple(CodeInput(f.name, f.storage_key, f.sha256) for f in files),
    )


def _score(plan: ScoringPlan, settings: Settings) -> ScoreResult:
    competition = plan.competition()
    if is_custom(competition):
        return score_with_custom_metric(
            competition,
            key_path=Path(plan.key_path),
            submission_path=Path(plan.submission_path),
            settings=settings,
        )
    return score_columns_file(
        Path(plan.submission_path),
        columns=resolve_columns(plan.columns),
        key=key_table(competition, plan.key(), settings),
        details=True,
        limits=intake_limits(settings),
    )


def evaluate_here(plan: ScoringPlan, settings: Settings, *, submission_id: int) -> Outcome:
    """Score in this process and turn any failure into an outcome; never raises."""
    try:
        return Outcome(result=_score(plan, settings))
    except CustomMetricFailure as exc:
        return Outcome(None, exc.participant_message, exc.host_message, exc.source == "submission")
    except ScoringError as exc:
        if exc.source == "submission":
            return Outcome(None, exc.message, None, participants_fault=True)
        return Outcome(None, KEY_FAILURE, f"answer key problem: {exc.message}")
    except Exception:  # noqa: BLE001 - any crash must fail the one submission, not the worker
        log.exception("scoring submission %s crashed", submission_id)
        return Outcome(None, GENERIC_FAILURE, traceback.format_exc(limit=20))


def estimated_size(path: Path) -> int:
    """The bytes a submission will be parsed from: a compressed file's declared unpacked size.

    Only an estimate to choose where to score; the intake enforces the real limits as it reads.
    """
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            magic = fh.read(4)
            if magic[:2] == b"\x1f\x8b" and size >= 18:
                fh.seek(-4, os.SEEK_END)  # gzip's trailer: the unpacked size modulo 4 GiB
                return max(size, int.from_bytes(fh.read(4), "little"))
        if magic == b"PK\x03\x04":
            with zipfile.ZipFile(path) as archive:
                return max(size, sum(info.file_size for info in archive.infolist()))
    except (OSError, zipfile.BadZipFile, gzip.BadGzipFile):
        return 0
    return size


def _evaluate(
    plan: ScoringPlan, settings: Settings, *, submission_id: int, time_limit: float | None = None
) -> Outcome:
    if plan.program is not None or plan.tasks:  # in the jail, with its own wall limit
        return _evaluate_program(plan, settings, submission_id=submission_id)[0]
    # A custom metric already runs in a child of its own (the jail).
    if not is_custom(plan.competition()) and (
        estimated_size(Path(plan.submission_path)) > settings.scoring_in_child_bytes
    ):
        return _evaluate_in_child(
            plan, settings, submission_id=submission_id, time_limit=time_limit
        )
    try:
        with alarm(time_limit):
            return evaluate_here(plan, settings, submission_id=submission_id)
    except TimeLimitExceeded:
        return timed_out(time_limit)


def _evaluate_program(
    plan: ScoringPlan, settings: Settings, *, submission_id: int
) -> "tuple[Outcome, Ran | None]":
    """Score with the phase's imported program; a code submission to a phase with an ingestion
    program runs that first, and its run's record comes back to be kept like a code run's.
    A multi-task phase's programs run in turn, one a task (no ingestion step)."""
    if plan.tasks:
        scored = score_tasks(
            plan.tasks,
            columns=plan.columns,
            submission_path=Path(plan.submission_path),
            key_path=Path(plan.key_path),
            settings=settings,
            submission_id=submission_id,
            maximize=metric_for(plan.competition()).greater_is_better,
            id_column=plan.id_column,
        )
        return Outcome(
            scored.result, scored.error, scored.host_error, scored.participants_fault
        ), None
    assert plan.program is not None
    ran = score_with_program(
        plan.program,
        submission_path=Path(plan.submission_path),
        key_path=Path(plan.key_path),
        columns=plan.columns,
        settings=settings,
        submission_id=submission_id,
    )
    outcome = Outcome(ran.result, ran.error, ran.host_error, ran.participants_fault)
    return outcome, (Ran(ran.record, charged=ran.charged) if ran.record is not None else None)


class TimeLimitExceeded(BaseException):
    """Raised into a job that passed its time limit (a BaseException: no handler eats it)."""


TIMED_OUT = "scoring passed its time limit"


def timed_out(limit: float | None) -> Outcome:
    log.error("scoring passed its time limit of %s s", limit)
    return Outcome(None, GENERIC_FAILURE, f"{TIMED_OUT} of {limit:g} s; the job was stopped")


@contextmanager
def alarm(seconds: float | None) -> Iterator[None]:
    """Interrupt the block after ``seconds``, where a signal can (a worker's main thread).

    Elsewhere (the embedded scoring thread) the lease stops being renewed at the limit and the
    sweep takes over; large files are scored in a child process, which is killed at the limit.
    """
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum, _frame):  # type: ignore[no-untyped-def]
        raise TimeLimitExceeded

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _evaluate_in_child(
    plan: ScoringPlan, settings: Settings, *, submission_id: int, time_limit: float | None = None
) -> Outcome:
    request = {
        "plan": asdict(plan),
        "settings": settings.model_dump(mode="json"),
        "submission_id": submission_id,
    }
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_APP_ROOT), env.get("PYTHONPATH")]))
    try:
        process = subprocess.run(
            [sys.executable, "-m", "app.jobs.isolated"],
            input=json.dumps(request).encode(),
            capture_output=True,
            env=env,
            check=False,
            timeout=time_limit or None,
        )
        if process.returncode == 0:
            return Outcome.from_json(json.loads(process.stdout))
        detail = process.stderr.decode("utf-8", errors="replace")[-_CHILD_ERROR_SHOWN:]
        host_error = f"the scoring process exited with status {process.returncode}:\n{detail}"
    except subprocess.TimeoutExpired:
        return timed_out(time_limit)
    except (OSError, ValueError, TypeError) as exc:
        host_error = f"the scoring process could not run: {exc!r}"
    log.error("scoring submission %s in a child failed: %s", submission_id, host_error)
    return Outcome(None, GENERIC_FAILURE, host_error)


def _scored(submission_id: Any, key_id: int):  # type: ignore[no-untyped-def]
    """Whether the submission has a score row for this key already."""
    return exists().where(Score.submission_id == submission_id, Score.answer_key_id == key_id)


def _score_values(submission_id: int, key_id: int, outcome: Outcome) -> dict[str, Any]:
    """The score row of an outcome: its scores, or the failure kept in its details."""
    result = outcome.result
    return {
        "submission_id": submission_id,
        "answer_key_id": key_id,
        "score": result.score if result else None,
        "public_score": result.public if result else None,
        "private_score": result.private if result else None,
        "details": result.details
        if result
        else {"error": outcome.error, "host_error": outcome.host_error},
        "columns": result.columns if result else None,
        "public_tie": result.public_tie if result else "",
        "private_tie": result.private_tie if result else "",
    }


def _write_score(
    session: Session,
    submission_id: int,
    key_id: int,
    outcome: Outcome,
) -> Score | None:
    """The score row written, or None when the submission had one for this key already."""
    if session.scalar(select(_scored(submission_id, key_id))):
        return None
    score = Score(**_score_values(submission_id, key_id, outcome))
    session.add(score)
    return score


def score_submission(
    factory: sessionmaker[Session], submission_id: int, settings: Settings | None = None
) -> None:
    """Score a new submission against the published key and settle its status."""
    settings = settings or Settings()
    claim = _claim(factory, submission_id, settings)
    if claim is not None:
        _score_claimed(factory, [claim], settings)


def score_submissions(
    factory: sessionmaker[Session], submission_ids: list[int], settings: Settings | None = None
) -> None:
    """Score several new submissions, as the embedded scorer finds them waiting in its queue.

    The common case (queued uploaded files) is claimed in one transaction and settled in one,
    the standings of each competition recomputed once for all its teams: most statements a
    job sent alone are shared out (a flood of uploads on a deadline is when the queue is
    deep). Anything else is scored one by one, as :func:`score_submission` does."""
    settings = settings or Settings()
    ids = list(dict.fromkeys(submission_ids))
    with unit_of_work(factory) as session:
        claims = _claim_queued_uploads(session, ids, settings)
    for submission_id, claim in claims.items():
        if claim is _ANOTHER_CASE:
            score_submission(factory, submission_id, settings)
    for run in _runs([c for c in claims.values() if isinstance(c, Claim)]):
        _score_claimed(factory, run, settings)


def _runs(claims: list[Claim]) -> list[list[Claim]]:
    """The claims in runs written together, in submission order: a baseline alone. A team's
    Ladder threshold is taken against its best and the best baseline as they stood before it
    (one by one, a baseline scored later was not there yet); within a run only the team's own
    earlier entries come before it, and those are written in order."""
    runs: list[list[Claim]] = [[]]
    for claim in sorted(claims, key=lambda c: c.lease.submission_id):
        if claim.baseline:
            runs += [[claim], []]
        else:
            runs[-1].append(claim)
    return [run for run in runs if run]


@dataclass(frozen=True)
class _Scored:
    """A claimed submission scored, its outcome not written yet."""

    claim: Claim
    outcome: Outcome
    ran: "Ran | None" = None
    stats: Stats | None = None
    seconds: float = 0.0


# A batch's scores are written at least this often: a batch of large files must not keep the
# first one's score from its team until the last one is scored.
WRITE_EVERY_SECONDS = 0.5


def _score_claimed(factory: sessionmaker[Session], claims: list[Claim], settings: Settings) -> None:
    """Score claimed submissions in turn, writing their outcomes together: all at the end, or
    those scored so far every :data:`WRITE_EVERY_SECONDS` (each write before the next scoring,
    as one by one)."""
    # Every lease is renewed from now until its outcome is written, each for at most the limits
    # of the turns before it and its own: one waiting behind a slow file keeps its lease too.
    tokens: dict[int, int] = {}
    until = 0.0
    for claim in claims:
        until += max(claim.time_limit, claim.hold_for)
        tokens[claim.lease.submission_id] = renewer.hold(factory, claim.lease, until=until)
    scored: list[_Scored] = []
    since = time.monotonic()
    try:
        for claim in claims:
            try:
                found = _score_one(factory, claim, settings)
            except Exception:  # noqa: BLE001 - the batch's others are written all the same
                if len(claims) == 1:
                    raise
                # As when it was scored alone: its lease lapses and the sweep delivers it again.
                log.exception("scoring submission %s crashed", claim.lease.submission_id)
                continue
            if found is not None:
                scored.append(found)
            if scored and time.monotonic() - since >= WRITE_EVERY_SECONDS:
                _write(factory, scored, tokens, settings)
                scored, since = [], time.monotonic()
        _write(factory, scored, tokens, settings)
    finally:
        for token in tokens.values():
            renewer.release(token)


def _write(
    factory: sessionmaker[Session],
    scored: list[_Scored],
    tokens: dict[int, int],
    settings: Settings,
) -> None:
    """Write these outcomes together, their leases no longer renewed from here."""
    for each in scored:
        renewer.release(tokens.pop(each.claim.lease.submission_id))
    for each, settled in zip(scored, _settle_all(factory, scored, settings), strict=True):
        _after_settle(factory, each, settled, settings)


def _score_one(factory: sessionmaker[Session], claim: Claim, settings: Settings) -> _Scored | None:
    """Run and score one claimed submission; None when it was put back for later."""
    submission_id = claim.lease.submission_id
    with request_id_context(claim.request_id):
        log.info(
            "scoring submission %s (attempt %s)",
            submission_id,
            claim.lease.attempt,
            extra={"submission_id": submission_id},
        )
        started = time.perf_counter()
        ran: Ran | None = None
        try:
            plan = claim.plan.fetched(settings)
            if plan.code is not None:
                outcome, ran = _run_then_score(factory, plan, settings, claim, submission_id)
            elif plan.program is not None or plan.tasks:
                outcome, ran = _evaluate_program(plan, settings, submission_id=submission_id)
            else:
                outcome = _evaluate(
                    plan, settings, submission_id=submission_id, time_limit=claim.time_limit
                )
        except StorageUnavailable:
            # Not the submission's fault: back to the queue, scored once the store returns.
            log.warning("submission %s: the file store is unavailable; put back", submission_id)
            put_back(factory, claim.lease)
            return None
        seconds = time.perf_counter() - started
        _observe(plan, outcome, seconds)
        stats = None
        if outcome.result is not None and claim.stats is not None:
            stats = inline_stats(claim.stats, settings)
        return _Scored(claim, outcome, ran, stats, seconds)


def _after_settle(
    factory: sessionmaker[Session], scored: _Scored, settled: "Settled", settings: Settings
) -> None:
    submission_id = scored.claim.lease.submission_id
    with request_id_context(scored.claim.request_id):
        if settled is Settled.unwritten:
            return  # logged where it failed; the lease lapses and the sweep delivers it again
        if settled is Settled.lost:
            log.warning(
                "submission %s: the lease was lost while scoring; another scorer has it",
                submission_id,
            )
            return
        log.info(
            "submission %s %s in %.3f s",
            submission_id,
            "scored" if scored.outcome.result is not None else "failed",
            scored.seconds,
            extra={"submission_id": submission_id},
        )
        if scored.outcome.result is not None and settled is not Settled.with_stats:
            # The score is committed and visible; intervals and the Ladder's threshold come after.
            add_score_stats(factory, submission_id, scored.claim.key_id, settings)


@dataclass(frozen=True)
class Ran:
    """A code run's record and, when its output was scored, where that file is kept."""

    record: RunRecord
    output_ref: str | None = None
    # Whether a failure through the participant's fault counts against the quota (a code
    # phase's run, an ingestion run; not a scoring program's failure after an ingestion).
    charged: bool = True


def _run_then_score(
    factory: sessionmaker[Session],
    plan: ScoringPlan,
    settings: Settings,
    claim: Claim,
    submission_id: int,
) -> tuple[Outcome, Ran]:
    """Run the code, then score its submission.csv exactly as an uploaded file is scored."""
    assert plan.code is not None
    with run_submission_code(
        plan.code, Path(plan.submission_path), settings, submission_id=submission_id
    ) as run:
        if run.output is None:
            failed = Outcome(None, run.error, run.host_error, run.participants_fault)
            return failed, Ran(run.record)
        advance(factory, claim.lease, SubmissionStatus.scoring)  # the run is over: readers see it
        scored = replace(plan, code=None, submission_path=str(run.output))
        outcome = _evaluate(
            scored, settings, submission_id=submission_id, time_limit=claim.time_limit
        )
        if outcome.result is None:
            if outcome.participants_fault and outcome.error:
                run = refused_output(run, outcome.error)
                outcome = Outcome(None, run.error, run.host_error, participants_fault=True)
            return outcome, Ran(run.record)
        # Kept, so that a new key version rescores the file the run wrote without running again.
        with run.output.open("rb") as source:
            stored = store_stream(
                source,
                prefix=f"submissions/outputs/{submission_id}",
                settings=settings,
                max_bytes=settings.max_upload_bytes,
                suffix=".csv",
            )
        return outcome, Ran(run.record, stored.ref)


class Settled(Enum):
    lost = "lost"  # the lease no longer held the submission: nothing written
    written = "written"
    with_stats = "with_stats"  # and its stats, computed beside the score
    unwritten = "unwritten"  # writing failed (logged): the sweep delivers it again


def _outer(name: str) -> Any:
    """A column of the submission being settled, as its subqueries in RETURNING refer to it.

    Spelled out: SQLAlchemy writes RETURNING's columns unqualified on SQLite, so a subquery's
    ``submission_id = id`` would compare the score's columns with each other."""
    return literal_column(f"{Submission.__tablename__}.{name}")


def _of_competition(column: Any) -> Any:
    """One column of the submission's competition, read in the settling statement."""
    return select(column).where(Competition.id == _outer("competition_id")).scalar_subquery()


@functools.cache
def _settle_statement(names: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """The submission's outcome (its columns ``names``, parameters ``v_<name>``) written while
    the lease still holds it, returning what the rest of the settling reads: its team, whether
    it has this key's score already (parameter ``key_id``), its competition's settings and
    whether the key is its phase's published one. Built once per set of columns: building a
    statement this size cost as much as running it."""
    key_id = bindparam("key_id", type_=Integer)
    published = _board_key_id(_outer("phase_id"))
    return (
        update(Submission)
        .where(held_as_parameters())
        .values({name: bindparam(f"v_{name}") for name in names})
        .returning(
            Submission.competition_id,
            Submission.team_id,
            Submission.user_id,
            Submission.phase_id,
            select(Phase.board)
            .where(Phase.id == _outer("phase_id"))
            .scalar_subquery()
            .label("phase_board"),
            _scored(_outer("id"), key_id).label("scored"),
            (published == key_id).label("published"),
            *(
                _of_competition(getattr(Competition, name)).label(name)
                for name in _SETTLED_COMPETITION
            ),
        )
    )


# Several rows in one statement, their ids returned in the order of the rows given.
_INSERT_SCORES = insert(Score).returning(Score.id, sort_by_parameter_order=True)


# What the standings and the stats read of the competition (app.jobs.honest, metric_for).
_SETTLED_COMPETITION = (
    "metric_name",
    "custom_metric_direction",
    "score_intervals",
    "public_board_mode",
    "ladder_step",
)


def _settle(
    factory: sessionmaker[Session],
    claim: Claim,
    outcome: Outcome,
    ran: Ran | None = None,
    *,
    stats: Stats | None = None,
    settings: Settings | None = None,
) -> Settled:
    """Write one outcome if the lease still holds the submission (:func:`_settle_all`)."""
    return _settle_all(factory, [_Scored(claim, outcome, ran, stats)], settings)[0]


def _settle_all(
    factory: sessionmaker[Session], scored: list[_Scored], settings: Settings | None
) -> list[Settled]:
    """Write the outcomes whose leases still hold their submissions, in one transaction, with
    the stats computed beside the scores. When that fails, each is written in a transaction of
    its own, so that one submission's trouble is not its batch's."""
    if not scored:
        return []
    try:
        with unit_of_work(factory) as session:
            return _settle_in(session, factory, scored, settings)
    except Exception:
        if len(scored) == 1:
            raise
        log.warning(
            "settling %s submissions together failed; each is settled alone",
            len(scored),
            exc_info=True,
        )
    settled = []
    for each in scored:
        try:
            settled += _settle_all(factory, [each], settings)
        except Exception:  # noqa: BLE001 - the others are written all the same
            log.exception(
                "submission %s: its outcome could not be written", each.claim.lease.submission_id
            )
            settled.append(Settled.unwritten)
    return settled


def _settle_in(
    session: Session,
    factory: sessionmaker[Session],
    scored: list[_Scored],
    settings: Settings | None,
) -> list[Settled]:
    """Core statements on the session's connection, no entity loaded or flushed (the ORM's
    bookkeeping cost more than the statements): each submission's row in one UPDATE (its row
    lock, taken in id order), the new score rows in one INSERT, then the standings of the teams
    they belong to, recomputed explicitly (no session event sees these writes), once per
    competition, and the stats."""
    connection = session.connection()
    order = sorted(range(len(scored)), key=lambda i: scored[i].claim.lease.submission_id)
    found: dict[int, Any] = {}
    for i in order:
        each = scored[i]
        values = _outcome_values(each.outcome, each.ran)
        found[i] = connection.execute(
            _settle_statement(tuple(values)),
            {
                **lease_parameters(each.claim.lease),
                "key_id": each.claim.key_id,
                **{f"v_{name}": value for name, value in values.items()},
            },
        ).first()
    settled = [Settled.lost if found[i] is None else Settled.written for i in range(len(scored))]
    # The stream's events, in this transaction: an outcome is heard of if and only if written.
    emit_rows(connection, [_settled_event(scored[i], found[i]) for i in order if found[i]])
    _record_outcomes(session, scored, found, order)
    # A failure moves no board: it was never scored.
    moved = [i for i in order if found[i] is not None and scored[i].outcome.result is not None]
    if not moved:
        return settled
    new = [i for i in moved if not found[i].scored]
    score_ids: dict[int, int] = {}
    if new:
        rows = [
            _score_values(
                scored[i].claim.lease.submission_id, scored[i].claim.key_id, scored[i].outcome
            )
            for i in new
        ]
        score_ids = dict(zip(new, connection.execute(_INSERT_SCORES, rows).scalars(), strict=True))
    # Transient, never added: what metric_for and the stats read of each competition.
    competitions: dict[int, Competition] = {}
    teams: dict[int, set[int]] = {}
    for i in moved:
        row = found[i]
        if row.competition_id not in competitions:
            competitions[row.competition_id] = Competition(
                id=row.competition_id, **{name: row._mapping[name] for name in _SETTLED_COMPETITION}
            )
        teams.setdefault(row.competition_id, set()).add(row.team_id)
    # The standings first, in this transaction: the stats below go in a savepoint of their
    # own, and a failure there must not take the boards' update with it.
    for competition_id in sorted(teams):
        recompute_teams(session, competitions[competition_id], teams[competition_id])
    if settings is None:
        return settled
    jobs = {
        i: replace(scored[i].claim.stats, score_id=score_ids[i])  # type: ignore[type-var]
        for i in new
        if scored[i].stats is not None and scored[i].claim.stats is not None
    }
    if not jobs:
        return settled
    try:
        with session.begin_nested():
            # In submission order: a team's Ladder threshold is against its best before it.
            by_competition: dict[int, list[tuple[StatsJob, Stats]]] = {}
            for i, job in jobs.items():
                stats = scored[i].stats
                assert stats is not None
                by_competition.setdefault(found[i].competition_id, []).append((job, stats))
            for competition_id, entries in by_competition.items():
                write_new_stats(
                    session, entries, settings, competition=competitions[competition_id]
                )
            by_key: dict[int, list[int]] = {}
            for i, job in jobs.items():
                by_key.setdefault(job.key.id, []).append(i)
            for places in by_key.values():
                refresh_bands_after_all(
                    session,
                    [jobs[i] for i in places],
                    factory=factory,
                    every=settings.bands_every_seconds,
                    competition=competitions[found[places[0]].competition_id],
                    published=bool(found[places[0]].published),
                )
    except Exception:  # noqa: BLE001 - the scores stand; the second step tries again
        log.warning(
            "stats of submissions %s left to the second step",
            sorted(job.submission_id for job in jobs.values()),
            exc_info=True,
        )
        return settled
    for i in jobs:
        settled[i] = Settled.with_stats
    return settled


def _settled_event(each: "_Scored", row: Any) -> dict[str, Any]:
    outcome = each.outcome
    return dict(
        kind=SUBMISSION_SCORED if outcome.result is not None else SUBMISSION_FAILED,
        competition_id=row.competition_id,
        team_id=row.team_id,
        user_id=row.user_id,
        phase_id=row.phase_id,
        submission_id=each.claim.lease.submission_id,
        # A failure on the platform's side (not the file's, not the participant's code's) is
        # the hosts' to hear of.
        payload={"platform": outcome.host_error is not None and not outcome.participants_fault}
        if outcome.result is None
        else {},
    )


def _record_outcomes(
    session: Session, scored: list[_Scored], found: dict[int, Any], order: list[int]
) -> None:
    """Each settled outcome in the record: one entry a submission (a retried job that finds its
    score written appends nothing)."""
    for i in order:
        row, each = found[i], scored[i]
        if row is None or row.scored:
            continue
        submission_id, key_id = each.claim.lease.submission_id, each.claim.key_id
        if each.outcome.result is None:
            facts.failed(
                session,
                competition_id=row.competition_id,
                submission_id=submission_id,
                key_id=key_id,
                error=each.outcome.error,
            )
            continue
        facts.scored(
            session,
            competition_id=row.competition_id,
            submission_id=submission_id,
            key_id=key_id,
            values=_score_values(submission_id, key_id, each.outcome),
            clear_public=facts.public_in_clear(row.phase_board, row.public_board_mode),
        )


def _outcome_values(outcome: Outcome, ran: Ran | None) -> dict[str, Any]:
    """The submission's columns an outcome sets."""
    values = _finished(ran)
    if outcome.result is None:
        values.update(
            status=SubmissionStatus.failed, error=outcome.error, host_error=outcome.host_error
        )
        # No failure of a file counts against the quota (README, Quotas); a code run that
        # failed through its own fault does, as on Kaggle (charged at upload, kept).
        # A host's rerun never charges again what was refunded before.
        if not (ran is not None and ran.charged and outcome.participants_fault):
            values["refunded"] = True
    else:
        values.update(status=SubmissionStatus.scored, error=None, host_error=None)
    return values


def _finished(ran: Ran | None) -> dict[str, Any]:
    """The columns every settled submission sets: finished, unleased, and a run's record."""
    values: dict[str, Any] = {"finished_at": _now(), "lease_expires_at": None}
    if ran is not None:
        record = ran.record
        values.update(
            log_head=record.log_head,
            log_tail=record.log_tail,
            log_bytes=record.log_bytes,
            run_failure=record.failure,
            code_sha256=record.code_sha256,
            inputs_sha256=record.inputs_sha256,
            runtime_fingerprint=record.runtime_fingerprint,
            output_path=ran.output_ref,
        )
    return values


def _observe(plan: ScoringPlan, outcome: Outcome, seconds: float) -> None:
    size = estimated_size(Path(plan.submission_path))
    SCORING_SECONDS.labels(plan.metric_name, size_class(size)).observe(seconds)
    if outcome.result is None:
        if outcome.participants_fault:
            kind = "participant"
        elif outcome.error == KEY_FAILURE:
            kind = "answer_key"
        elif outcome.host_error and outcome.host_error.startswith(TIMED_OUT):
            kind = "timeout"
        else:
            kind = "internal"
        SCORING_FAILURES.labels(kind).inc()


def _rescore_plan(
    factory: sessionmaker[Session], submission_id: int, key_id: int
) -> ScoringPlan | None:
    with unit_of_work(factory) as session:
        done = session.scalar(
            select(Score.id).where(
                Score.submission_id == submission_id, Score.answer_key_id == key_id
            )
        )
        submission = session.get(Submission, submission_id)
        key = session.get(AnswerKey, key_id)
        if done is not None or submission is None or key is None:
            return None
        return ScoringPlan.read(submission, submission.competition, key)


def rescore_submission(
    factory: sessionmaker[Session],
    submission_id: int,
    key_id: int,
    settings: Settings | None = None,
) -> None:
    """Score a submission against another key version, into a score row of its own.

    The submission's status is not touched: boards move only when the version is published.
    A failure is kept as a score row without scores, so the rescore is known to be complete.
    """
    settings = settings or Settings()
    plan = _rescore_plan(factory, submission_id, key_id)
    if plan is None:
        return
    # A store outage propagates: nothing is written, so starting the rescore again completes it.
    outcome = _evaluate(plan.fetched(settings), settings, submission_id=submission_id)
    with unit_of_work(factory) as session:
        if _write_score(session, submission_id, key_id, outcome) is not None:
            _record_rescore(session, submission_id, key_id, outcome)
    if outcome.result is not None:
        add_score_stats(factory, submission_id, key_id, settings)


def _record_rescore(session: Session, submission_id: int, key_id: int, outcome: Outcome) -> None:
    submission = session.get(Submission, submission_id)
    if submission is None:
        return
    if outcome.result is None:
        facts.failed(
            session,
            competition_id=submission.competition_id,
            submission_id=submission_id,
            key_id=key_id,
            error=outcome.error,
            kind=facts.RESCORED,
        )
        return
    facts.scored(
        session,
        competition_id=submission.competition_id,
        submission_id=submission_id,
        key_id=key_id,
        values=_score_values(submission_id, key_id, outcome),
        clear_public=facts.public_in_clear(
            submission.phase.board, submission.competition.public_board_mode
        ),
        kind=facts.RESCORED,
    )


def run_job(
    factory: sessionmaker[Session],
    submission_id: int,
    key_id: int | None,
    settings: Settings | None,
) -> list[int]:
    """One job of either lane; the ids of simulation episodes it queued, for the code lane."""
    if key_id is None:
        if _plays_episodes(factory, submission_id):
            from app.jobs.episodes import validate_agent  # the simulation lane's own imports

            return validate_agent(factory, submission_id, settings or Settings())
        score_submission(factory, submission_id, settings)
    else:
        rescore_submission(factory, submission_id, key_id, settings)
    return []


def _plays_episodes(factory: sessionmaker[Session], submission_id: int) -> bool:
    """Whether the submission is an agent of a simulation phase (validated, never scored)."""
    with factory() as session:
        kind = session.scalar(
            select(Phase.submission_kind)
            .join(Submission, Submission.phase_id == Phase.id)
            .where(Submission.id == submission_id)
        )
    return kind == KIND_SIMULATION
