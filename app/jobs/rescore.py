"""Rescoring after an answer-key fix: score everything against the newest key version into new
score rows, preview how the ranks move, then publish that version to the boards."""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.db import after_commit
from app.errors import Conflict
from app.jobs.queue import ScoringQueue
from app.leaderboard.schemas import Board, RankChange, RescorePreview, RescoreStarted
from app.leaderboard.service import standings
from app.models import AnswerKey, Competition, Score, Submission, SubmissionStatus, User


def _versions(competition: Competition) -> tuple[AnswerKey, AnswerKey]:
    """The published key version and the newer one to move to."""
    board, newest = competition.board_key, (competition.answer_keys or [None])[-1]
    if board is None or newest is None:
        raise Conflict("this competition has no answer key yet")
    if newest.id == board.id:
        raise Conflict(
            f"version {board.version} is the newest key and already published; "
            "upload a corrected key first"
        )
    return board, newest


def _submission_ids(session: Session, competition: Competition) -> list[int]:
    return list(
        session.scalars(
            select(Submission.id)
            .where(Submission.competition_id == competition.id)
            .order_by(Submission.id)
        )
    )


def _pending(session: Session, competition: Competition, key: AnswerKey) -> list[int]:
    done = set(session.scalars(select(Score.submission_id).where(Score.answer_key_id == key.id)))
    return [i for i in _submission_ids(session, competition) if i not in done]


def start_rescore(
    session: Session, *, competition: Competition, actor: User, queue: ScoringQueue
) -> RescoreStarted:
    board, newest = _versions(competition)
    todo = _pending(session, competition, newest)
    key_id = newest.id
    after_commit(session, lambda: [queue.enqueue(i, key_id) for i in todo])
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


def _changes(
    session: Session, competition: Competition, old: AnswerKey, new: AnswerKey, board: Board
) -> list[RankChange]:
    before = {
        s.team_id: s
        for s in standings(session, competition=competition, key_id=old.id, board=board)
    }
    after = {
        s.team_id: s
        for s in standings(session, competition=competition, key_id=new.id, board=board)
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


def preview(session: Session, *, competition: Competition) -> RescorePreview:
    old, new = _versions(competition)
    return RescorePreview(
        from_version=old.version,
        to_version=new.version,
        pending=len(_pending(session, competition, new)),
        public=_changes(session, competition, old, new, "public"),
        private=_changes(session, competition, old, new, "private"),
    )


def publish(session: Session, *, competition: Competition, actor: User) -> AnswerKey:
    old, new = _versions(competition)
    pending = _pending(session, competition, new)
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
    return new
