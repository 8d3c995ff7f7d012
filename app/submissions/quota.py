"""Submission quotas: a daily limit per team (reset at 00:00 UTC) and an optional lifetime one.

A submission counts unless it was refunded, which happens automatically when it failed through
our fault rather than the participant's file.
"""

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.errors import TooManyRequests
from app.models import Competition, Submission, Team
from app.submissions.schemas import QuotaPublic


def start_of_utc_day(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _counted(team_id: int):  # type: ignore[no-untyped-def]
    return select(func.count(Submission.id)).where(
        Submission.team_id == team_id, Submission.refunded.is_(False)
    )


def quota_for(
    session: Session, *, competition: Competition, team: Team | None, now: datetime
) -> QuotaPublic:
    day = start_of_utc_day(now)
    used_today = used_total = 0
    if team is not None:
        used_today = session.scalar(_counted(team.id).where(Submission.created_at >= day)) or 0
        used_total = session.scalar(_counted(team.id)) or 0
    remaining = max(competition.daily_submission_limit - used_today, 0)
    if competition.total_submission_limit is not None:
        remaining = min(remaining, max(competition.total_submission_limit - used_total, 0))
    return QuotaPublic(
        used_today=used_today,
        daily_limit=competition.daily_submission_limit,
        remaining_today=remaining,
        resets_at=day + timedelta(days=1),
        used_total=used_total,
        total_limit=competition.total_submission_limit,
    )


def charge(session: Session, *, competition: Competition, team: Team, now: datetime) -> None:
    """Refuse the upload when the team has no submission left; call with the team locked."""
    quota = quota_for(session, competition=competition, team=team, now=now)
    total = competition.total_submission_limit
    if total is not None and quota.used_total >= total:
        raise TooManyRequests(f"your team has used all {total} submissions of this competition")
    if quota.used_today >= quota.daily_limit:
        raise TooManyRequests(
            f"your team has used all {quota.daily_limit} submissions for today; "
            f"the count resets at {quota.resets_at.isoformat()}"
        )
