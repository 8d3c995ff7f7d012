"""Accepting submissions (cheap checks at upload, the rest when scored) and showing them."""

import functools
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import BinaryIO

from sqlalchemy import Select, insert, inspect, select
from sqlalchemy.orm import Session, joinedload

from app.auth.hosts import host_or_refuse_former, is_host
from app.auth.service import require_may_take_part
from app.coderun.outcome import KAGGLE_WORDS
from app.competitions.entry_fields import parse_details
from app.competitions.migration import due, migrate_phase
from app.competitions.phases import upload_phase
from app.config import Settings
from app.db import after_commit
from app.entry.gate import require_may_submit
from app.errors import AppError, Conflict, Forbidden, NotFound, PayloadTooLarge, Unprocessable
from app.evaluation.keys import intake_limits
from app.evaluation.metric import is_custom, label_set
from app.events.stream import SUBMISSION_FAILED, emit
from app.jobs.queue import ScoringQueue
from app.ledger import facts
from app.ledger.record import Appended
from app.models import Competition, Phase, Submission, SubmissionStatus, TeamMember, User
from app.ops.logs import current_request_id
from app.pagination import Page, Paged, paginate
from app.scoring.intake import IntakeError, check_upload
from app.scoring.intake_errors import MAX_MESSAGE, cut
from app.scoring.intake_labels import check_labels
from app.scoring.tasks import runnable_task
from app.shared.state import upload_window
from app.storage import open_stored, remove_stored, store_stream
from app.submissions.kinds import (
    checked_agent,
    checked_code,
    is_code,
    refuse_other_kind,
    wrong_kind,
)
from app.submissions.quota import charge, check_upload_rate, uncount_refused, upload_counts
from app.submissions.schemas import RunLogPublic
from app.teams.service import locked_team_for


def create_submission(
    session: Session,
    *,
    competition: Competition,
    user: User,
    source: BinaryIO,
    filename: str,
    description: str,
    settings: Settings,
    queue: ScoringQueue,
    baseline: bool = False,
    phase_name: str | None = None,
    details: str | None = None,
) -> "Upload":
    """Store an upload as a submission: queued for scoring, or failed at once when the cheap
    checks (format, size, encoding, header) already find the file at fault.

    A failed submission stays in the team's history with its reason and never counts against
    the quota; uploads are rate limited per team instead (:func:`check_upload_rate`).
    """
    now = datetime.now(UTC)
    require_may_take_part(user)
    host = host_or_refuse_former(session, competition, user)
    if baseline and not host:
        raise Forbidden("only the competition's hosts can make baseline submissions")
    if host and not baseline:
        raise Forbidden(
            "hosts do not compete in their own competition: submit with baseline=true "
            "for an unranked reference entry"
        )
    if not host:
        # Approved, rules accepted (the current version): nothing read for an open competition.
        require_may_submit(session, competition=competition, user=user)
    phase, late = upload_phase(competition, phase_name, now, host=host)
    if due(phase, now):
        # The first upload into a phase since it opened carries its migrated entries first.
        migrate_phase(session, competition=competition, phase=phase, queue=queue, now=now)
    program = phase.scorer is not None or bool(phase.tasks)
    if program:
        # Its file goes to the program as it is: no kind, no CSV intake (as its platform did).
        refuse_unrunnable(phase)
    else:
        refuse_other_kind(phase, filename)
    # Checked before anything is stored or counted: a bad detail is the uploader's to fix.
    entry = parse_details(details, list(phase.entry_fields or [])) if not baseline else {}
    key = phase.board_key
    if key is None and not phase.takes_agents:  # agents are rated by episodes, not a key
        which = f"its phase '{phase.name}'" if len(competition.phases) > 1 else "it"
        raise Conflict(
            f"this competition does not accept submissions yet: {which} has no answer key"
        )
    if is_custom(competition) and not competition.custom_metric_path:
        raise Conflict(
            "this competition does not accept submissions yet: its metric file is missing"
        )
    # Locked until commit: the quota check below cannot be raced past, nor the team merged away.
    team = locked_team_for(session, competition=competition, user=user)
    if team.banned_at is not None:
        raise Forbidden("your team has been banned from this competition")
    # The quota and the rate from one statement, made at most once (none for a baseline when
    # Redis keeps the rate).
    counts = functools.cache(lambda: upload_counts(session, team=team, phase=phase, now=now))
    shared, member = upload_window(settings), uuid.uuid4().hex
    check_upload_rate(
        team=team,
        now=now,
        per_minute=settings.uploads_per_minute,
        counts=counts,
        shared=shared,
        refused_ceiling=settings.refused_uploads_per_minute,
        member=member,
    )

    def refused(refusal: AppError) -> "Upload":
        # A file refused at intake does not count toward the rate (up to its own ceiling).
        uncount_refused(
            team=team,
            shared=shared,
            member=member,
            refused_ceiling=settings.refused_uploads_per_minute,
        )
        return _failed(session, submission, refusal, now=now, names=names)

    if not baseline:
        charge(session, competition=competition, team=team, now=now, phase=phase, counts=counts())
    submission = Submission(
        competition_id=competition.id,
        phase_id=phase.id,
        team_id=team.id,
        user_id=user.id,
        description=description,
        filename=filename[:255],
        created_at=now,
        late=late,
        baseline=baseline,
        details=entry or None,
        request_id=current_request_id(),
    )
    # Named in the record's entry of this upload (app.ledger.facts.received).
    names = (team.name, phase.name)
    try:
        stored = store_stream(
            source,
            prefix=f"submissions/{competition.id}/{team.id}",
            settings=settings,
            max_bytes=settings.code_max_bytes
            if phase.takes_code or phase.takes_agents
            else settings.max_upload_bytes,
        )
    except (PayloadTooLarge, Unprocessable) as exc:
        submission.path, submission.size_bytes, submission.sha256 = "", 0, ""
        return refused(exc)
    submission.path, submission.size_bytes, submission.sha256 = (
        stored.ref,
        stored.size,
        stored.sha256,
    )
    if program:
        return _queued(session, submission, queue, names=names)
    if phase.takes_agents:
        # Checked (not run) here; its validation episode runs on the code lane.
        try:
            checked_agent(stored.path, filename, max_bytes=settings.code_max_bytes)
        except Unprocessable as refusal:
            _discard(session, stored.ref, settings)
            return refused(refusal)
        return _queued(session, submission, queue, names=names, code=True)
    if phase.takes_code:
        # Code is checked (not run) here; its submission.csv meets intake when the run wrote it.
        try:
            checked_code(stored.path, filename, max_bytes=settings.code_max_bytes)
        except Unprocessable as refusal:
            _discard(session, stored.ref, settings)
            return refused(refusal)
        return _queued(session, submission, queue, names=names, code=True)  # its run's own lane
    try:
        # The key row carries the same id_column / target_columns the parsed table would.
        check_upload(stored.path, key=key, limits=intake_limits(settings))  # type: ignore[arg-type]
        # The public label set only: whether a file is accepted never depends on hidden targets.
        labels = label_set(competition)
        if labels is not None:
            check_labels(
                stored.path,
                column=key.target_columns[0],
                labels=labels,
                limits=intake_limits(settings),
            )
    except IntakeError as exc:
        refusal = Unprocessable(exc.message, extra={"kind": exc.kind})
        if is_code(stored.path, filename, max_bytes=settings.code_max_bytes):
            refusal = wrong_kind(phase, f"'{filename[:100]}' holds code")
        # Refused files are not kept (a flood of them would fill the disk); the row is.
        _discard(session, stored.ref, settings)
        return refused(refusal)
    return _queued(session, submission, queue, names=names)


def refuse_unrunnable(phase: Phase) -> None:
    """A 409 for a program phase whose program cannot run: none came with it, or it is Python 2
    (imported before such programs were refused). A multi-task phase runs when one of its
    tasks' programs can (the others' columns stay blank)."""
    if phase.tasks:
        runnable = [t for t in phase.tasks if runnable_task(t)]
        if not runnable:
            raise Conflict(
                f"phase '{phase.name}' has tasks but none that can be scored here (each needs "
                "catalogue columns or an imported program); it takes no submissions"
            )
        return
    scorer = phase.scorer or {}
    if not scorer.get("kind"):
        raise Conflict(
            f"phase '{phase.name}' has no scoring program of its own while its columns are "
            "written by one; it takes no submissions"
        )
    if scorer.get("python2"):
        raise Conflict(
            f"phase '{phase.name}' is scored by a Python 2 program, which cannot run here; it "
            "takes no submissions until the host imports a converted one"
        )


def _queued(
    session: Session,
    submission: Submission,
    queue: ScoringQueue,
    *,
    names: tuple[str, str],
    code: bool = False,
) -> "Upload":
    # A Core INSERT of the columns set above (the others take their defaults), on the session's
    # connection: the ORM's flush of this one row cost more than the statement, and a queued
    # upload is nobody's entry yet, so no standings hook has anything to see. The object stays
    # transient: the callers read its id and status only.
    submission.status = SubmissionStatus.queued
    state = inspect(submission)
    values = {column.key: state.dict[column.key] for column in _COLUMNS if column.key in state.dict}
    submission.id = submission_id = session.connection().scalar(_INSERT, values)
    after_commit(session, lambda: queue.enqueue(submission_id, code=code))
    return Upload(submission, entry=_received(session, submission, names))


def _received(
    session: Session, submission: Submission, names: tuple[str, str], refusal: str | None = None
) -> Appended:
    # The record's one statement of an upload, written last, at the commit.
    team_name, phase_name = names
    return facts.received(
        session,
        competition_id=submission.competition_id,
        submission=submission,
        team_name=team_name,
        phase=phase_name,
        refusal=refusal,
    )


_COLUMNS = inspect(Submission).column_attrs
_INSERT = insert(Submission).returning(Submission.id)


@dataclass(frozen=True)
class Upload:
    """A stored submission, its entry in the record (placed in the chain at the commit) and,
    when its file was refused at upload, the error to answer."""

    submission: Submission
    refusal: AppError | None = None
    entry: Appended | None = None


def _failed(
    session: Session,
    submission: Submission,
    refusal: AppError,
    *,
    now: datetime,
    names: tuple[str, str],
) -> Upload:
    """Record an upload refused for its file: in the history with its reason, quota-free."""
    submission.status = SubmissionStatus.failed
    submission.error = cut(refusal.detail, MAX_MESSAGE)
    submission.refunded = True  # a file fault never counts against the quota
    submission.started_at = submission.finished_at = now
    session.add(submission)
    session.flush()
    emit(
        session,
        SUBMISSION_FAILED,
        competition_id=submission.competition_id,
        team_id=submission.team_id,
        user_id=submission.user_id,
        phase_id=submission.phase_id,
        submission_id=submission.id,
    )
    refusal.extra["submission_id"] = submission.id
    refusal.recorded = True
    entry = _received(session, submission, names, refusal=submission.error or "")
    return Upload(submission, refusal, entry)


def _discard(session: Session, ref: str, settings: Settings) -> None:
    # The same bytes may already be stored for an earlier submission of this team.
    if session.scalar(select(Submission.id).where(Submission.path == ref)) is None:
        remove_stored(ref, settings=settings)


def visible_submission(session: Session, *, submission_id: int, user: User) -> Submission:
    """Load a submission the user may see; anyone else's is reported as not existing."""
    submission = session.get(Submission, submission_id)
    if submission is None:
        raise NotFound(f"no submission {submission_id}")
    if is_host(session, submission.competition, user) or is_member(
        session, team_id=submission.team_id, user=user
    ):
        return submission
    raise NotFound(f"no submission {submission_id}")


def submission_log(session: Session, *, submission_id: int, user: User) -> "RunLogPublic":
    """A code submission's run log, for its team and the hosts (anyone else: no such thing).

    A code submission to an imported phase with an ingestion program has one too: the ingestion
    step's output (its program and the team's code, no reference data in that jail), shown to
    the team unless the bundle hid it (``hide_output``, ``hide_prediction_output``)."""
    submission = visible_submission(session, submission_id=submission_id, user=user)
    ingestion = (submission.phase.scorer or {}).get("ingestion")
    if not submission.phase.takes_code and not (ingestion and submission.log_bytes is not None):
        raise NotFound(f"submission {submission_id} ran no code: it has no log")
    if (
        not submission.phase.takes_code
        and ingestion.get("hide_log")
        and not is_host(session, submission.competition, user)
    ):
        raise NotFound(f"the hosts keep the logs of submission {submission_id}'s phase hidden")
    head, tail = submission.log_head or "", submission.log_tail or ""
    total = submission.log_bytes or 0
    kept = len(head.encode()) + len(tail.encode())
    text = head + tail
    if total > kept:
        text = f"{head}\n[... {total - kept} bytes of output left out ...]\n{tail}"
    return RunLogPublic(
        submission_id=submission.id,
        status=submission.status.value,
        failure=submission.run_failure,
        kaggle_words=KAGGLE_WORDS.get(submission.run_failure or ""),
        log=text if submission.log_bytes is not None else None,
        total_bytes=submission.log_bytes,
        truncated=total > kept,
        code_sha256=submission.code_sha256,
        inputs_sha256=submission.inputs_sha256,
        runtime_fingerprint=submission.runtime_fingerprint,
    )


def submission_file(
    session: Session, *, submission_id: int, user: User, settings: Settings
) -> tuple[Submission, BinaryIO]:
    """A visible submission and its file, streamed from the store."""
    submission = visible_submission(session, submission_id=submission_id, user=user)
    refused = NotFound(f"submission {submission_id} was refused at upload; its file is not kept")
    if not submission.path:
        raise refused
    try:
        return submission, open_stored(submission.path, settings=settings)
    except NotFound:
        raise refused from None


def team_submissions(session: Session, *, competition: Competition, user: User) -> list[Submission]:
    """The team's submissions, newest first (an organiser's: every team's)."""
    return list(session.scalars(_team_submissions(session, competition=competition, user=user)))


def team_submissions_page(
    session: Session,
    *,
    competition: Competition,
    user: User,
    page: Page,
    phase: Phase | None = None,
) -> Paged[Submission]:
    """One page of :func:`team_submissions` (of one phase, when given)."""
    query = _team_submissions(session, competition=competition, user=user)
    if phase is not None:
        query = query.where(Submission.phase_id == phase.id)
    # An organiser's view names each submission's team and user: loaded with the page.
    return paginate(
        session, query, page, options=[joinedload(Submission.team), joinedload(Submission.user)]
    )


def _team_submissions(
    session: Session, *, competition: Competition, user: User
) -> Select[Submission]:
    query = select(Submission).where(Submission.competition_id == competition.id)
    if not is_host(session, competition, user):
        team_ids = select(TeamMember.team_id).where(
            TeamMember.competition_id == competition.id, TeamMember.user_id == user.id
        )
        query = query.where(Submission.team_id.in_(team_ids))
    return query.order_by(Submission.created_at.desc(), Submission.id.desc())


def is_member(session: Session, *, team_id: int, user: User) -> bool:
    return (
        session.scalar(
            select(TeamMember.id).where(
                TeamMember.team_id == team_id, TeamMember.user_id == user.id
            )
        )
        is not None
    )
