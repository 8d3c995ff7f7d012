"""Each user's choice of what to hear about, by kind, with the issue's defaults."""

from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Notification, NotificationSettings

Kind = Literal[
    "submission",
    "team_invitation",
    "phase_opened",
    "phase_closing",
    "board_revealed",
    "registration",
    "announcements",
    "registration_requests",
    "scorer_failures",
]

# kind → (default, what it is), in the order the pages show them.
KINDS: dict[str, tuple[bool, str]] = {
    "submission": (False, "my submission was scored or failed"),
    "team_invitation": (True, "a team invites me"),
    "phase_opened": (True, "a phase opened"),
    "phase_closing": (True, "a phase closes within 24 hours"),
    "board_revealed": (True, "the private leaderboard was revealed"),
    "registration": (True, "my registration was approved or denied"),
    "announcements": (True, "announcements from the hosts"),
    "registration_requests": (True, "hosts: someone asks to join"),
    "scorer_failures": (True, "hosts: a scorer fails on the platform's side"),
}


def stored(session: Session, user_id: int) -> NotificationSettings | None:
    return session.get(NotificationSettings, user_id)


def choices_of(row: NotificationSettings | None) -> dict[str, bool]:
    given = row.choices if row is not None else {}
    return {kind: bool(given.get(kind, default)) for kind, (default, _) in KINDS.items()}


def wants(row: NotificationSettings | None, kind: str | None) -> bool:
    """Whether the user hears of this kind at all (None: always, e.g. a disabled webhook)."""
    return kind is None or choices_of(row)[kind]


def wants_mail(row: NotificationSettings | None, kind: str | None) -> bool:
    return wants(row, kind) and not (row is not None and row.no_mail)


def update(
    session: Session, *, user_id: int, choices: dict[str, bool], mail: bool | None
) -> NotificationSettings:
    row = stored(session, user_id)
    if row is None:
        row = NotificationSettings(user_id=user_id, choices={}, no_mail=False)
        session.add(row)
    merged = {**row.choices, **choices}
    row.choices = {kind: merged[kind] for kind in KINDS if kind in merged}
    if mail is not None:
        row.no_mail = not mail
    session.flush()
    return row


def recent(session: Session, user_id: int, limit: int = 50) -> list[Notification]:
    return list(
        session.scalars(
            select(Notification)
            .where(Notification.user_id == user_id)
            .order_by(Notification.id.desc())
            .limit(limit)
        )
    )
