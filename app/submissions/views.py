"""What each caller may see of a submission: the competition's hosts everything, a team its own
submissions, with the private score only after the deadline and scores rounded to the
competition's decimals."""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.competitions.hosts import is_host
from app.models import Competition, Score, Submission, User
from app.submissions.schemas import (
    ScoreVersion,
    SubmissionHost,
    SubmissionPublic,
    SubmissionRevealed,
)


def board_score(session: Session, submission: Submission, competition: Competition) -> Score | None:
    key = competition.board_key
    if key is None:
        return None
    return session.scalar(
        select(Score).where(Score.submission_id == submission.id, Score.answer_key_id == key.id)
    )


def _rounded(value: float | None, decimals: int | None) -> float | None:
    return value if value is None or decimals is None else round(value, decimals)


def view(
    session: Session, *, submission: Submission, competition: Competition, user: User
) -> SubmissionPublic:
    """The view of a submission this user is entitled to: host, revealed, or public."""
    score = board_score(session, submission, competition)
    host = is_host(session, competition, user)
    return _view(submission=submission, score=score, competition=competition, host=host)


def views(
    session: Session, *, submissions: list[Submission], competition: Competition, user: User
) -> list[SubmissionPublic]:
    """:func:`view` for many submissions of one competition, their scores read in one query."""
    key = competition.board_key
    scores: dict[int, Score] = {}
    if key is not None and submissions:
        rows = session.scalars(
            select(Score).where(
                Score.submission_id.in_([s.id for s in submissions]),
                Score.answer_key_id == key.id,
            )
        )
        scores = {row.submission_id: row for row in rows}
    host = is_host(session, competition, user)
    return [
        _view(submission=s, score=scores.get(s.id), competition=competition, host=host)
        for s in submissions
    ]


def _view(
    *, submission: Submission, score: Score | None, competition: Competition, host: bool
) -> SubmissionPublic:
    decimals = None if host else competition.score_decimals
    base = dict(
        id=submission.id,
        status=submission.status,
        public_score=_rounded(score.public_score if score else None, decimals),
        error=submission.error,
        created_at=submission.created_at,
        description=submission.description,
        selected=submission.selected,
        late=submission.late,
    )
    private = _rounded(score.private_score if score else None, decimals)
    if host:
        return SubmissionHost(
            **base,
            private_score=private,
            team=submission.team.name,
            user=submission.user.name,
            score=score.score if score else None,
            host_error=submission.host_error,
            details=score.details if score else None,
            filename=submission.filename,
            size_bytes=submission.size_bytes,
            started_at=submission.started_at,
            finished_at=submission.finished_at,
            hidden=submission.hidden,
            baseline=submission.baseline,
            refunded=submission.refunded,
        )
    if competition.is_past_deadline(datetime.now(UTC)):
        return SubmissionRevealed(**base, private_score=private)
    return SubmissionPublic(**base)


def score_versions(session: Session, *, submission: Submission) -> list[ScoreVersion]:
    """The submission's score against every key version it was scored on (hosts only)."""
    rows = session.scalars(
        select(Score).where(Score.submission_id == submission.id).order_by(Score.answer_key_id)
    )
    return [
        ScoreVersion(
            version=row.answer_key.version,
            published=row.answer_key.published_at is not None,
            score=row.score,
            public_score=row.public_score,
            private_score=row.private_score,
            details=row.details,
            created_at=row.created_at,
        )
        for row in rows
    ]
