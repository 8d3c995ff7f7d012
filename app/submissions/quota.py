"""Submission quotas: a daily limit per team (reset at 00:00 UTC) and an optional lifetime one,
and a rate limit on uploads.

A submission counts unless it was refunded, which happens automatically whenever it fails:
through our fault or through its file's, at upload or while scored. What stops a team from
sending faulty files without end is the rate limit, which counts every upload, failed or not.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Integer, Select, bindparam, func, select
from sqlalchemy.orm import Session

from app.errors import RateLimited, TooManyRequests
from app.models import Competition, Phase, Submission, SubmissionStatus, Team
from app.shared.redis_store import RedisUploadWindow
from app.submissions.schemas import QuotaPublic


def start_of_utc_day(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


RATE_WINDOW = timedelta(minutes=1)


@dataclass(frozen=True)
class UploadCounts:
    """What the upload path counts of a team, in one statement: its submissions in the phase
    (today and in all, refunded ones left out) and its uploads of the last minute (every one)."""

    used_today: int
    used_total: int
    recent: int
    oldest_recent: datetime | None
    # Of ``recent``, those refused at intake: counted only past the refused ceiling.
    recent_refused: int = 0

    def rate_wait(
        self, *, now: datetime, per_minute: int, refused_ceiling: int | None = None
    ) -> float | None:
        """None when the last minute's uploads leave room, else the seconds until the oldest of
        them leaves the window. Uploads refused at intake count only past ``refused_ceiling``
        (None: all count). (Uploads past the limit are refused, not stored, and the team is
        locked while it counts, so the oldest is the one that frees a place.)"""
        counted = self.recent
        if refused_ceiling is not None:
            counted -= min(self.recent_refused, refused_ceiling)
        if counted < per_minute or self.oldest_recent is None:
            return None
        oldest = self.oldest_recent
        if oldest.tzinfo is None:
            oldest = oldest.replace(tzinfo=UTC)
        return (oldest + RATE_WINDOW - now).total_seconds()


def upload_counts(session: Session, *, team: Team, phase: Phase, now: datetime) -> UploadCounts:
    params = {
        "team_id": team.id,
        "phase_id": phase.id,
        "day": start_of_utc_day(now),
        "since": now - RATE_WINDOW,
    }
    row = session.execute(_upload_counts(), params).one()
    return UploadCounts(row[0] or 0, row[1] or 0, row[2] or 0, row[3], row[4] or 0)


@functools.cache
def _upload_counts() -> Select[Any]:
    # Built once (parameters ``team_id``, ``phase_id``, ``day``, ``since``): every upload runs it.
    at = Submission.__table__.c.created_at.type
    counted = (Submission.phase_id == bindparam("phase_id", type_=Integer)) & (
        Submission.refunded.is_(False)
    )
    recent = Submission.created_at > bindparam("since", type_=at)
    return select(
        func.count(Submission.id).filter(
            counted & (Submission.created_at >= bindparam("day", type_=at))
        ),
        func.count(Submission.id).filter(counted),
        func.count(Submission.id).filter(recent),
        func.min(Submission.created_at).filter(recent),
        func.count(Submission.id).filter(recent & REFUSED_AT_INTAKE),
    ).where(Submission.team_id == bindparam("team_id", type_=Integer))


# An upload refused at intake is recorded failed in the instant it was made (its start and end
# are its creation's, app.submissions.service._failed); one that failed later was started later.
REFUSED_AT_INTAKE = (Submission.status == SubmissionStatus.failed) & (
    Submission.started_at == Submission.created_at
)


def quota_for(
    session: Session,
    *,
    competition: Competition,
    team: Team | None,
    now: datetime,
    phase: Phase | None = None,
    counts: UploadCounts | None = None,
) -> QuotaPublic:
    """A team's quota in a phase (quotas are per phase; default: the current one)."""
    phase = phase or competition.current_phase
    assert phase is not None  # every competition has a phase
    day = start_of_utc_day(now)
    used_today = used_total = 0
    if team is not None:
        counts = counts or upload_counts(session, team=team, phase=phase, now=now)
        used_today, used_total = counts.used_today, counts.used_total
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
    session: Session,
    *,
    competition: Competition,
    team: Team,
    now: datetime,
    phase: Phase,
    counts: UploadCounts | None = None,
) -> None:
    """Refuse the upload when the team has no submission left in the phase; call with the team
    locked."""
    quota = quota_for(
        session, competition=competition, team=team, now=now, phase=phase, counts=counts
    )
    total = phase.total_submission_limit
    if total is not None and quota.used_total >= total:
        where = f"phase '{phase.name}'" if len(competition.phases) > 1 else "this competition"
        raise TooManyRequests(f"your team has used all {total} submissions of {where}")
    if quota.daily_limit == 0:
        # CodaLab's max_submissions_per_day: 0: the phase takes no upload of its own (its
        # entries come from the phase before it, migrated).
        raise TooManyRequests(
            f"phase '{phase.name}' takes no submissions of its own (a daily limit of 0)"
        )
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


def check_upload_rate(
    *,
    team: Team,
    now: datetime,
    per_minute: int,
    counts: Callable[[], UploadCounts],
    shared: RedisUploadWindow | None = None,
    refused_ceiling: int | None = None,
    member: str | None = None,
) -> None:
    """Refuse an upload when the team made ``per_minute`` in the last minute; uploads refused
    at intake count only past ``refused_ceiling`` of them (None: every one counts). Call with
    the team locked. The answer says when the next one is accepted.

    With a ``shared`` window (Redis), the upload is counted there as ``member``, atomically for
    every process (:func:`uncount_refused` takes a refused one back out), and the database's
    ``counts`` decide only while Redis is away.
    """

    def counted_in_database() -> float | None:
        return counts().rate_wait(now=now, per_minute=per_minute, refused_ceiling=refused_ceiling)

    if shared is None:
        wait = counted_in_database()
    else:
        wait = shared.take(team.id, limit=per_minute, fallback=counted_in_database, member=member)
    if wait is None:
        return
    seconds = max(int(wait) + 1, 1)
    raise RateLimited(
        f"your team has made {per_minute} uploads in the last minute, the most allowed; "
        f"try again in {seconds} s",
        retry_after=seconds,
    )


def uncount_refused(
    *, team: Team, shared: RedisUploadWindow | None, member: str, refused_ceiling: int
) -> None:
    """An upload refused at intake leaves the shared rate window while the team's refused ones
    of the last minute stay within ``refused_ceiling`` (their own window); past it, it stays
    counted. The database's count tells them apart by itself (:data:`REFUSED_AT_INTAKE`)."""
    if shared is None or refused_ceiling <= 0:
        return
    within = shared.take(team.id, limit=refused_ceiling, fallback=lambda: 1.0, kind="refused")
    if within is None:
        shared.give_back(team.id, member)
