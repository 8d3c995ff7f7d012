"""Rescoring after an answer-key fix: score a phase's submissions against its newest key version
into new score rows, preview how the ranks move, then publish that version to its boards. Each
phase has its own keys; a route without a phase means the current one.

A benchmark (app.competitions.benchmark) turns the order round: a version is published first
and every scored submission is rescored against it afterwards, as jobs.
"""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.db import after_commit
from app.errors import Conflict
from app.jobs.queue import ScoringQueue
from app.leaderboard.schemas import Board, RankChange, RescorePreview, RescoreStarted
from app.leaderboard.service import board_standings
from app.ledger.facts import key_published
from app.models import AnswerKey, Competition, Phase, Score, Submission, SubmissionStatus, User


def _phase(competition: Competition, phase: Phase | None) -> Phase:
    found = phase or competition.current_phase
    assert found is not None  # every competition has a phase
    return found


def _versions(phase: Phase) -> tuple[AnswerKey, AnswerKey]:
    """The phase's published key version and the newer one to move to."""
    board, newest = phase.board_key, (phase.answer_keys or [None])[-1]
    if board is None or newest is None:
        raise Conflict(f"phase '{phase.name}' has no answer key yet")
    if newest.id == board.id:
        raise Conflict(
            f"version {board.version} is the newest key and already published; "
            "upload a corrected key first"
        )
    return board, newest


def _submission_ids(session: Session, phase: Phase) -> list[int]:
    return list(
        session.scalars(
            select(Submission.id).where(Submission.phase_id == phase.id).order_by(Submission.id)
        )
    )


def _pending(session: Session, phase: Phase, key: AnswerKey) -> list[int]:
    done = set(session.scalars(select(Score.submission_id).where(Score.answer_key_id == key.id)))
    return [i for i in _submission_ids(session, phase) if i not in done]


def _scored_pending(session: Session, phase: Phase, key: AnswerKey) -> list[int]:
    """A benchmark's scored submissions of the phase with no score row against ``key`` yet."""
    done = select(Score.submission_id).where(Score.answer_key_id == key.id)
    return list(
        session.scalars(
            select(Submission.id)
            .where(
                Submission.phase_id == phase.id,
                Submission.status == SubmissionStatus.scored,
                Submission.id.not_in(done),
            )
            .order_by(Submission.id)
        )
    )


def _queue_rescores(session: Session, queue: ScoringQueue, todo: list[int], key_id: int) -> None:
    # Jobs of the existing lane (app.jobs.score.rescore_submission): each writes its score row
    # once (a second job finds it there and does nothing), appends its 'rescored' fact to the
    # record, and makes no submission, so nothing is charged to any quota.
    after_commit(session, lambda: [queue.enqueue(i, key_id) for i in todo])


def start_rescore(
    session: Session,
    *,
    competition: Competition,
    actor: User,
    queue: ScoringQueue,
    phase: Phase | None = None,
) -> RescoreStarted:
    phase = _phase(competition, phase)
    board_key = phase.board_key
    newest = (phase.answer_keys or [None])[-1]
    if competition.benchmark and board_key is not None and newest is board_key:
        # A benchmark's published version rescores as it is published; asked again, this
        # queues what is not scored against it yet (a job lost with its server, say).
        return _resume_benchmark(session, competition, phase, board_key, actor, queue)
    board, newest = _versions(phase)
    todo = _pending(session, phase, newest)
    key_id = newest.id
    _queue_rescores(session, queue, todo, key_id)
    record(
        session,
        competition=competition,
        actor=actor,
        action="rescore",
        target=f"version {newest.version}",
        before={"board_version": board.version},
        after={"version": newest.version, "queued": len(todo)},
    )
    return RescoreStarted(version=newest.version, queued=len(todo))


def _resume_benchmark(
    session: Session,
    competition: Competition,
    phase: Phase,
    key: AnswerKey,
    actor: User,
    queue: ScoringQueue,
) -> RescoreStarted:
    todo = _scored_pending(session, phase, key)
    _queue_rescores(session, queue, todo, key.id)
    record(
        session,
        competition=competition,
        actor=actor,
        action="rescore",
        target=f"version {key.version}",
        before={"board_version": key.version},
        after={"version": key.version, "queued": len(todo)},
    )
    return RescoreStarted(version=key.version, queued=len(todo))


def _changes(
    session: Session, competition: Competition, old: AnswerKey, new: AnswerKey, board: Board
) -> list[RankChange]:
    # As the board ranks them (an average rank is computed over the board's rows).
    phase = old.phase
    before = {
        s.team_id: s
        for s in board_standings(
            session, competition=competition, phase=phase, key_id=old.id, board=board
        )
    }
    after = {
        s.team_id: s
        for s in board_standings(
            session, competition=competition, phase=phase, key_id=new.id, board=board
        )
    }
    teams = list(after) + [t for t in before if t not in after]
    return [
        RankChange(
            team=(after.get(t) or before[t]).team,
            old_rank=before[t].rank if t in before else None,
            new_rank=after[t].rank if t in after else None,
            old_score=before[t].score if t in before else None,
            new_score=after[t].score if t in after else None,
        )
        for t in teams
    ]


def preview(
    session: Session, *, competition: Competition, phase: Phase | None = None
) -> RescorePreview:
    phase = _phase(competition, phase)
    old, new = _versions(phase)
    return RescorePreview(
        from_version=old.version,
        to_version=new.version,
        pending=len(_pending(session, phase, new)),
        public=_changes(session, competition, old, new, "public"),
        private=_changes(session, competition, old, new, "private"),
    )


def publish(
    session: Session,
    *,
    competition: Competition,
    actor: User,
    queue: ScoringQueue,
    phase: Phase | None = None,
) -> AnswerKey:
    """Publish the phase's newest key version to its boards. A competition waits until every
    submission is scored against it; a benchmark publishes at once and rescores every scored
    submission as jobs, its board showing each row's version meanwhile (and after: a submission
    the new version cannot score keeps its older score, with that version)."""
    phase = _phase(competition, phase)
    old, new = _versions(phase)
    if competition.benchmark:
        return _publish_benchmark(session, competition, phase, old, new, actor, queue)
    pending = _pending(session, phase, new)
    if pending:
        raise Conflict(
            f"{len(pending)} submission(s) are not yet scored against version {new.version}; "
            "rescore and wait before publishing"
        )
    new.published_at = datetime.now(UTC)
    # Each submission's status and reason now follow its score against the published version.
    scores = session.scalars(select(Score).where(Score.answer_key_id == new.id))
    for score in scores:
        submission = score.submission
        if score.score is not None:
            submission.status, submission.error, submission.host_error = (
                SubmissionStatus.scored,
                None,
                None,
            )
        else:
            details = score.details or {}
            submission.status = SubmissionStatus.failed
            submission.error = details.get("error")
            submission.host_error = details.get("host_error")
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="rescore_publish",
        target=f"version {new.version}",
        before={"board_version": old.version},
        after={"board_version": new.version},
    )
    key_published(session, competition_id=competition.id, phase=phase, key=new)
    return new


def _publish_benchmark(
    session: Session,
    competition: Competition,
    phase: Phase,
    old: AnswerKey,
    new: AnswerKey,
    actor: User,
    queue: ScoringQueue,
) -> AnswerKey:
    new.published_at = datetime.now(UTC)
    session.flush()
    todo = _scored_pending(session, phase, new)
    _queue_rescores(session, queue, todo, new.id)
    record(
        session,
        competition=competition,
        actor=actor,
        action="rescore_publish",
        target=f"version {new.version}",
        before={"board_version": old.version},
        after={"board_version": new.version, "queued": len(todo)},
    )
    key_published(session, competition_id=competition.id, phase=phase, key=new)
    return new


def lost_rescores(session: Session) -> list[tuple[int, int]]:
    """(submission id, key id) of every benchmark rescoring not done against its phase's
    published version: at a server's start, jobs an in-memory queue lost with the last process.
    A job queued twice does nothing the second time."""
    phases = session.scalars(
        select(Phase)
        .join(Competition, Competition.id == Phase.competition_id)
        .where(Competition.benchmark.is_(True))
    )
    return [
        (submission_id, key.id)
        for phase in phases
        if (key := phase.board_key) is not None
        for submission_id in _scored_pending(session, phase, key)
    ]
