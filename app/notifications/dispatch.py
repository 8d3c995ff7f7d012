"""The notifications reader: each event becomes, for each user it concerns and who wants it, a
notice on the pages and (when they have an address and did not opt out of mail) a mail with an
unsubscribe link. What a mail says follows the boards' rules: no score of any phase is written
in one (the link shows each reader what they may see)."""

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth.hosts import hosts
from app.events import stream as ev
from app.mail.outbox import enqueue_mail
from app.models import (
    Announcement,
    Competition,
    Event,
    Notification,
    NotificationSettings,
    OutboundMail,
    Phase,
    User,
)
from app.notifications import preferences, unsubscribe
from app.registration.announcements import recipients
from app.registration.participants import participants
from app.registration.schemas import Audience

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Context:
    base_url: str
    secret_key: str
    # Mails waiting beyond which notifications go to the pages only (PODIUM_MAIL_MAX_PENDING):
    # a flood of events cannot grow the outbox without bound.
    max_pending: int = 10_000


@dataclass(frozen=True)
class Notice:
    kind: str | None  # the preference it answers to (None: always)
    title: str
    body: str
    link: str


def _approved(session: Session, competition: Competition) -> list[int]:
    return [
        p.user_id for p in participants(session, competition=competition) if p.status == "approved"
    ]


def _hosts(session: Session, competition: Competition) -> list[int]:
    return [h.user_id for h in hosts(session, competition=competition)]


def _phase_words(session: Session, event: Event, competition: Competition) -> str:
    phase = session.get(Phase, event.phase_id) if event.phase_id else None
    if phase is None or len(competition.phases) <= 1:
        return competition.title
    return f"{competition.title}, phase '{phase.title}'"


def plan(session: Session, event: Event, ctx: Context) -> tuple[list[int], Notice] | None:
    """Who hears of the event, and what they are told; None for an event that tells nobody."""
    competition = session.get(Competition, event.competition_id) if event.competition_id else None
    if competition is None:
        return None
    page = f"{ctx.base_url.rstrip('/')}/c/{competition.slug}"
    title = competition.title
    payload = event.payload or {}
    if event.kind in (ev.SUBMISSION_SCORED, ev.SUBMISSION_FAILED):
        link = f"{page}/submissions"
        if event.kind == ev.SUBMISSION_FAILED and payload.get("platform"):
            # The scorer failed on the platform's side: the hosts hear of it.
            return _hosts(session, competition), Notice(
                "scorer_failures",
                f"{title}: a submission could not be scored (platform side)",
                f"Submission {event.submission_id} failed for a reason on the platform's side; "
                "the host view of the submission has the details.",
                link,
            )
        if event.user_id is None:
            return None
        scored = event.kind == ev.SUBMISSION_SCORED
        return [event.user_id], Notice(
            "submission",
            f"{title}: your submission {event.submission_id} was "
            + ("scored" if scored else "refused"),
            "Its result is on your submissions page."
            if scored
            else ("The reason is on your submissions page."),
            link,
        )
    if event.kind == ev.PHASE_OPENED:
        return _approved(session, competition), Notice(
            "phase_opened",
            f"{_phase_words(session, event, competition)} is open",
            "You can submit now.",
            page,
        )
    if event.kind == ev.PHASE_CLOSING:
        return _approved(session, competition), Notice(
            "phase_closing",
            f"{_phase_words(session, event, competition)} closes within 24 hours",
            f"It closes at {payload.get('end', '')} (UTC). Remember to select your final "
            "submissions if the competition asks you to.",
            page,
        )
    if event.kind == ev.BOARD_REVEALED:
        return _approved(session, competition), Notice(
            "board_revealed",
            f"{_phase_words(session, event, competition)}: the private leaderboard is revealed",
            "The final standings are on the leaderboard.",
            f"{page}/leaderboard",
        )
    if event.kind == ev.REGISTRATION_REQUESTED:
        return _hosts(session, competition), Notice(
            "registration_requests",
            f"{title}: {payload.get('user', 'someone')} asks to take part",
            "Approve or deny the request on the Participants tab.",
            f"{page}/host/participants",
        )
    if event.kind == ev.REGISTRATION_DECIDED and event.user_id is not None:
        approved = payload.get("status") == "approved"
        note = payload.get("message") or ""
        body = "You can submit now." if approved else "The hosts declined your request."
        if note:
            body += f"\n\nThe hosts wrote:\n{note}"
        return [event.user_id], Notice(
            "registration",
            f"{title}: your registration was " + ("approved" if approved else "denied"),
            body,
            page,
        )
    if event.kind == ev.TEAM_INVITED and event.user_id is not None:
        return [event.user_id], Notice(
            "team_invitation",
            f"{title}: {payload.get('team', 'a team')} invites you to join",
            "Accept or decline on the competition's Team tab.",
            f"{page}/team",
        )
    if event.kind == ev.ANNOUNCEMENT:
        announcement = session.get(Announcement, payload.get("announcement_id") or 0)
        if announcement is None:
            return None
        audience = Audience.model_validate(announcement.audience)
        users = [p.user_id for p in recipients(session, competition=competition, audience=audience)]
        return users, Notice(
            "announcements", f"{title}: {announcement.subject}", announcement.body, page
        )
    if event.kind == ev.WEBHOOK_DISABLED:
        return _hosts(session, competition), Notice(
            None,
            f"{title}: a webhook endpoint was disabled",
            f"The endpoint {payload.get('url', '')} failed {payload.get('failures', 'many')} "
            "times in a row and was disabled. Check it, then enable it again "
            f"(POST /api/v1/competitions/{competition.slug}/webhooks/{payload.get('endpoint_id')}"
            "/enable).",
            f"{page}/host",
        )
    return None


def handle(session: Session, event: Event, ctx: Context) -> int:
    """Write the event's notices and mails; returns how many users were told."""
    planned = plan(session, event, ctx)
    if planned is None:
        return 0
    user_ids, notice = planned
    return tell(session, sorted(set(user_ids)), notice, event, ctx)


def tell(
    session: Session, user_ids: Iterable[int], notice: Notice, event: Event, ctx: Context
) -> int:
    ids = list(user_ids)
    if not ids:
        return 0
    users = session.scalars(select(User).where(User.id.in_(ids))).all()
    settings = {
        row.user_id: row
        for row in session.scalars(
            select(NotificationSettings).where(NotificationSettings.user_id.in_(ids))
        )
    }
    waiting = session.scalar(
        select(func.count()).select_from(OutboundMail).where(OutboundMail.status == "pending")
    )
    room = max(0, ctx.max_pending - (waiting or 0))
    if room < len(users):
        log.warning(
            "the outbox is full: %s notice(s) of event %s go unmailed", len(users), event.id
        )
    told = 0
    for user in users:
        row = settings.get(user.id)
        if not user.is_active or not preferences.wants(row, notice.kind):
            continue
        told += 1
        session.add(
            Notification(
                user_id=user.id,
                competition_id=event.competition_id,
                kind=event.kind,
                title=notice.title[:300],
                body=notice.body[:5000],
                link=notice.link[:500],
            )
        )
        if user.email and preferences.wants_mail(row, notice.kind) and room > 0:
            room -= 1
            enqueue_mail(
                session,
                to=user.email,
                subject=notice.title,
                body=mail_body(user, notice, ctx),
            )
    session.flush()
    return told


def mail_body(user: User, notice: Notice, ctx: Context) -> str:
    base = ctx.base_url.rstrip("/")
    lines = [f"Hello {user.name},", "", notice.body, "", notice.link, "", "--"]
    if notice.kind is not None:
        what = preferences.KINDS[notice.kind][1]
        lines += [
            f"You receive this because you chose to hear when {what}.",
            "Stop these mails (no sign-in needed): "
            f"{base}/unsubscribe?token={unsubscribe.token(user.id, notice.kind, ctx.secret_key)}",
        ]
    lines += [
        "Stop every mail from Podium: "
        f"{base}/unsubscribe?token={unsubscribe.token(user.id, None, ctx.secret_key)}",
        f"Your notification settings: {base}/account/notifications",
    ]
    return "\n".join(lines)
