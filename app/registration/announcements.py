"""Announcements: a host writes to the participants (all, or by status, phase and whether they
submitted). Each is news on the competition's page and one event; the notifications reader
mails it to each recipient who has not opted out, after the commit. A competition may send a
few a day (``PODIUM_ANNOUNCEMENTS_PER_DAY``): a flood cannot fill the mail queue."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.errors import RateLimited, Unprocessable
from app.events.stream import ANNOUNCEMENT, emit
from app.models import Announcement, Competition, Phase, Submission, User
from app.registration.participants import Participant, participants
from app.registration.schemas import Audience


class TooManyAnnouncements(RateLimited):
    code = "announcements_limited"


def post(
    session: Session,
    *,
    competition: Competition,
    actor: User,
    subject: str,
    body: str,
    to: Audience,
    per_day: int,
) -> Announcement:
    since = datetime.now(UTC) - timedelta(days=1)
    sent = session.scalar(
        select(func.count())
        .select_from(Announcement)
        .where(Announcement.competition_id == competition.id, Announcement.created_at > since)
    )
    if (sent or 0) >= per_day:
        raise TooManyAnnouncements(
            f"'{competition.slug}' has sent {per_day} announcement(s) in the last 24 hours, "
            "its limit; try again tomorrow",
            retry_after=3600,
        )
    if to.phase is not None and to.phase not in {p.name for p in competition.phases}:
        raise Unprocessable(f"to.phase: '{competition.slug}' has no phase '{to.phase}'")
    announcement = Announcement(
        competition_id=competition.id,
        author_id=actor.id,
        subject=subject,
        body=body,
        audience=to.model_dump(mode="json"),
    )
    session.add(announcement)
    session.flush()
    emit(
        session,
        ANNOUNCEMENT,
        competition_id=competition.id,
        payload={"announcement_id": announcement.id},
    )
    return announcement


def recent(session: Session, *, competition: Competition, limit: int = 20) -> list[Announcement]:
    return list(
        session.scalars(
            select(Announcement)
            .where(Announcement.competition_id == competition.id)
            .order_by(Announcement.id.desc())
            .limit(limit)
        )
    )


def recipients(
    session: Session, *, competition: Competition, audience: Audience
) -> list[Participant]:
    """Who an announcement is for, by its audience."""
    rows = [
        p for p in participants(session, competition=competition) if p.status in audience.status
    ]
    if audience.phase is None and audience.submitted is None:
        return rows
    query = select(Submission.user_id).where(
        Submission.competition_id == competition.id, Submission.baseline.is_(False)
    )
    if audience.phase is not None:
        query = query.join(Phase, Phase.id == Submission.phase_id).where(
            Phase.name == audience.phase
        )
    submitted = set(session.scalars(query.distinct()))
    wanted = True if audience.submitted is None else audience.submitted
    return [p for p in rows if (p.user_id in submitted) == wanted]
