"""What each caller may see of a submission: the competition's hosts everything, a team its own
submissions, with the private score only after its phase ends and scores rounded to the
competition's decimals. In a blind phase, until it ends, a team learns that a submission was
scored and nothing of its score."""

from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth.hosts import is_host
from app.evaluation.columns import columns_for, stored_values
from app.evaluation.rounding import rounded, rounded_interval, shown_decimals
from app.honest.board.board import hides_public_scores, submission_ladder
from app.models import (
    AnswerKey,
    Competition,
    Score,
    ScoreStats,
    Submission,
    SubmissionStatus,
    User,
)
from app.models.phase import BOARD_BLIND
from app.submissions.schemas import (
    ScoreVersion,
    SubmissionHost,
    SubmissionPublic,
    SubmissionRevealed,
)


def board_score(session: Session, submission: Submission, competition: Competition) -> Score | None:
    if competition.benchmark:
        return benchmark_scores(session, [submission.id]).get(submission.id)
    key = submission.phase.board_key
    if key is None:
        return None
    return session.scalar(
        select(Score).where(Score.submission_id == submission.id, Score.answer_key_id == key.id)
    )


def benchmark_scores(session: Session, submission_ids: list[int]) -> dict[int, Score]:
    """A benchmark's submissions at the score their board rows show: against the newest
    published key version that scored them (one that could not leaves the older score), else
    the newest published version's failure. One query."""
    if not submission_ids:
        return {}
    rows = session.scalars(
        select(Score)
        .join(AnswerKey, AnswerKey.id == Score.answer_key_id)
        .where(Score.submission_id.in_(submission_ids), AnswerKey.published_at.is_not(None))
        .order_by(Score.submission_id, AnswerKey.version.desc())
    )
    found: dict[int, Score] = {}
    for row in rows:
        held = found.get(row.submission_id)
        if held is None or (held.score is None and row.score is not None):
            found[row.submission_id] = row
    return found


def view(
    session: Session, *, submission: Submission, competition: Competition, user: User
) -> SubmissionPublic:
    """The view of a submission this user is entitled to: host, revealed, or public."""
    score = board_score(session, submission, competition)
    return _view(
        session,
        submission=submission,
        score=score,
        stats=_stats(session, score, competition),
        competition=competition,
        host=is_host(session, competition, user),
    )


def views(
    session: Session, *, submissions: list[Submission], competition: Competition, user: User
) -> list[SubmissionPublic]:
    """:func:`view` for many submissions of one competition, their scores and intervals read in
    one query each (a Ladder board adds its replay, once per team and request)."""
    # Each submission is shown against its own phase's board key.
    keys = {s.id: k.id for s in submissions for k in [s.phase.board_key] if k is not None}
    scores: dict[int, Score] = {}
    if keys:
        rows = session.scalars(
            select(Score).where(
                Score.submission_id.in_(list(keys)),
                Score.answer_key_id.in_(set(keys.values())),
            )
        )
        scores = {
            row.submission_id: row for row in rows if keys[row.submission_id] == row.answer_key_id
        }
    if competition.benchmark:
        scores = benchmark_scores(session, [s.id for s in submissions])
    stats: dict[int, ScoreStats] = {}
    if scores and competition.score_intervals:
        found = session.scalars(
            select(ScoreStats).where(ScoreStats.score_id.in_([s.id for s in scores.values()]))
        )
        stats = {row.score_id: row for row in found}
    host = is_host(session, competition, user)
    views_ = []
    for s in submissions:
        score = scores.get(s.id)
        views_.append(
            _view(
                session,
                submission=s,
                score=score,
                stats=stats.get(score.id) if score else None,
                competition=competition,
                host=host,
            )
        )
    return views_


def _view(
    session: Session,
    *,
    submission: Submission,
    score: Score | None,
    stats: ScoreStats | None,
    competition: Competition,
    host: bool,
) -> SubmissionPublic:
    decimals = shown_decimals(competition, host=host)
    phase = submission.phase
    now = datetime.now(UTC)
    note = None
    if not host and phase.board == BOARD_BLIND and not phase.has_ended(now):
        # Blind until the phase ends: scored or not, and nothing of any score.
        score, stats = None, None
        ends = phase.end.isoformat() if phase.end is not None else "the phase's end"
        note = f"blind: phase '{phase.name}' shows no score until it ends ({ends})"
    public = score.public_score if score else None
    public_interval = stats.public_interval if stats else None
    released = None
    if score is not None and not submission.late and hides_public_scores(competition, host):
        # The Ladder's value after this submission; never the exact score or its interval.
        public, released = submission_ladder(
            session, submission=submission, competition=competition
        )
        public_interval = None
    base = dict(
        id=submission.id,
        status=submission.status,
        public_score=rounded(public, decimals),
        error=submission.error,
        created_at=submission.created_at,
        description=submission.description,
        selected=submission.selected,
        late=submission.late,
        released=released,
        public_interval=rounded_interval(public_interval, decimals),
        phase=phase.name,
        details=submission.details,
        failure=submission.run_failure,
        queue_position=_queue_position(session, submission),
        score_note=note,
        migrated_from=submission.migrated_from_id,
    )
    revealed = host or phase.has_ended(now)
    base["scores"] = _column_scores(
        competition, submission, score, host=host, revealed=revealed, decimals=decimals
    )
    if released is not None:
        # A Ladder board shows what the Ladder released, never the exact columns.
        base["scores"] = {}
    private = rounded(score.private_score if score else None, decimals)
    private_interval = rounded_interval(stats.private_interval if stats else None, decimals)
    if host:
        return SubmissionHost(
            **base,
            private_score=private,
            private_interval=private_interval,
            team=submission.team.name,
            user=submission.user.name,
            score=score.score if score else None,
            host_error=submission.host_error,
            metric_details=score.details if score else None,
            filename=submission.filename,
            size_bytes=submission.size_bytes,
            started_at=submission.started_at,
            finished_at=submission.finished_at,
            hidden=submission.hidden,
            baseline=submission.baseline,
            refunded=submission.refunded,
        )
    if revealed:
        return SubmissionRevealed(**base, private_score=private, private_interval=private_interval)
    return SubmissionPublic(**base)


def _column_scores(
    competition: Competition,
    submission: Submission,
    score: Score | None,
    *,
    host: bool,
    revealed: bool,
    decimals: int | None,
) -> dict[str, dict[str, float | None]]:
    """{column key: {"public", "private"}}: hidden columns for hosts only, private values once
    revealed (None before)."""
    if score is None:
        return {}
    columns = columns_for(competition, submission.phase)
    values = stored_values(
        score.columns,
        ranking_key=columns[0].key,
        score=score.score,
        public=score.public_score,
        private=score.private_score,
    )
    shown = {}
    for column in columns:
        if column.hidden and not host:
            continue
        digits = (
            decimals
            if column.precision is None or decimals is None
            else min(decimals, column.precision)
        )
        mine = values.get(column.key, {})
        shown[column.key] = {
            "public": rounded(mine.get("public"), digits),
            "private": rounded(mine.get("private"), digits) if revealed else None,
        }
    return shown


def _stats(session: Session, score: Score | None, competition: Competition) -> ScoreStats | None:
    if score is None or not competition.score_intervals:
        return None
    return session.scalar(select(ScoreStats).where(ScoreStats.score_id == score.id))


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


def _queue_position(session: Session, submission: Submission) -> int | None:
    """How many queued submissions go before it, plus one (the queue takes the oldest first)."""
    if submission.status != SubmissionStatus.queued:
        return None
    ahead = session.scalar(
        select(func.count())
        .select_from(Submission)
        .where(Submission.status == SubmissionStatus.queued, Submission.id < submission.id)
    )
    return int(ahead or 0) + 1
