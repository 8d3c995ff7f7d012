"""Submission quotas: a daily limit per team (reset at 00:00 UTC) and an optional lifetime one,
and a rate limit on uploads.

A submission counts unless it was refunded, which happens automatically whenever it fails:
through our fault or through its file's, at upload or while scored. What stops a team from
sending faulty files without end is the rate limit, which counts every upload, failed or not.
"""

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.errors import RateLimited, TooManyRequests
from app.models import Competition, Phase, Submission, Team
from app.shared.redis_store import RedisUploadWindow
from app.submissions.schemas import QuotaPublic


def start_of_utc_day(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def quota_for(
    session: Session,
    *,
    competition: Competition,
    team: Team | None,
    now: datetime,
    phase: Phase | None = None,
) -> QuotaPublic:
    """A team's quota in a phase (quotas are per phase; default: the current one)."""
    phase = phase or competition.current_phase
    assert phase is not None  # every competition has a phase
    day = start_of_utc_day(now)
    used_today = used_total = 0
    if team is not None:
        # Both counts in one statement (an upload's path counts its statements).
        counts = session.execute(
            select(
                func.count(Submission.id).filter(Submission.created_at >= day),
                func.count(Submission.id),
            ).where(
                Submission.team_id == team.id,
                Submission.phase_id == phase.id,
                Submission.refunded.is_(False),
            )
        ).one()
        used_today, used_total = counts[0] or 0, counts[1] or 0
    remaining = max(phase.daily_submission_limit - used_today, 0)
    if phase.total_submission_limit is not None:
        remaining = min(remaining, max(phase.total_submission_limit - used_total, 0))
    return QuotaPublic(
        phase=phase.name,
        used_today=used_today,
        daily_limit=phase.daily_submission_limit,
        remaining_today=remaining,
        resets_at=day + timedelta(days=1),
        used_total=used_total,
        total_limit=phase.total_submission_limit,
    )


def charge(
    session: Session, *, competition: Competition, team: Team, now: datetime, phase: Phase
) -> None:
    """Refuse the upload when the team has no submission left in the phase; call with the team
    locked."""
    quota = quota_for(session, competition=competition, team=team, now=now, phase=phase)
    total = phase.total_submission_limit
    if total is not None and quota.used_total >= total:
        where = f"phase '{phase.name}'" if len(competition.phases) > 1 else "this competition"
        raise TooManyRequests(f"your team has used all {total} submissions of {where}")
    if quota.used_today >= quota.daily_limit:
        # Written as the pages write times (the message is shown on them); the field keeps ISO.
        raise TooManyRequests(
            f"your team has used all {quota.daily_limit} submissions for today; the count "
            f"resets at {quota.resets_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC "
            f"(in {_countdown(quota.resets_at - now)})",
            extra={"resets_at": quota.resets_at.isoformat()},
        )


def _countdown(left: timedelta) -> str:
    """'3h 5m', '12m', 'under a minute': how long until the daily count resets."""
    minutes = int(left.total_seconds()) // 60
    if minutes < 1:
        return "under a minute"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m" if hours else f"{minutes}m"


RATE_WINDOW = timedelta(minutes=1)


def check_upload_rate(
    session: Session,
    *,
    team: Team,
    now: datetime,
    per_minute: int,
    shared: RedisUploadWindow | None = None,
) -> None:
    """Refuse an upload when the team made ``per_minute`` in the last minute, failed ones
    included; call with the team locked. The answer says when the next one is accepted.

    With a ``shared`` window (Redis), the upload is counted there, atomically for every process,
    and no statement is spent here; while Redis is away, the database's count decides.
    """

    def counted_in_database() -> float | None:
        return _database_wait(session, team=team, now=now, per_minute=per_minute)

    if shared is None:
        wait = counted_in_database()
    else:
        wait = shared.take(team.id, limit=per_minute, fallback=counted_in_database)
    if wait is None:
        return
    seconds = max(int(wait) + 1, 1)
    raise RateLimited(
        f"your team has made {per_minute} uploads in the last minute, the most allowed; "
        f"try again in {seconds} s",
        retry_after=seconds,
    )


def _database_wait(session: Session, *, team: Team, now: datetime, per_minute: int) -> float | None:
    """None when the team's submissions of the last minute leave room, else the seconds until
    the oldest of them leaves the window."""
    since = now - RATE_WINDOW
    recent = list(
        session.scalars(
            select(Submission.created_at)
            .where(Submission.team_id == team.id, Submission.created_at > since)
            .order_by(Submission.created_at.desc())
            .limit(per_minute)
        )
    )
    if len(recent) < per_minute:
        return None
    oldest = min(recent)
    if oldest.tzinfo is None:
        oldest = oldest.replace(tzinfo=UTC)
    return (oldest + RATE_WINDOW - now).total_seconds()
