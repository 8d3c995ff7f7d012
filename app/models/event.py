"""The one stream of events: each fact others must hear about, written once as a row in the
transaction of the fact (a transactional outbox), and what its readers made of it."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.types import UTCDateTime, utcnow


class Event(Base):
    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    competition_id: Mapped[int | None] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), default=None, index=True
    )
    # What the event is about, where it applies (no foreign keys: an event outlives a row).
    user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    team_id: Mapped[int | None] = mapped_column(Integer, default=None)
    phase_id: Mapped[int | None] = mapped_column(Integer, default=None)
    submission_id: Mapped[int | None] = mapped_column(Integer, default=None)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # One event per key, whoever writes it first (the time sweep of every process).
    dedupe_key: Mapped[str | None] = mapped_column(String(200), unique=True, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class EventMark(Base):
    """An event a reader has handled: written in the transaction of what it did with it."""

    __tablename__ = "event_marks"

    reader: Mapped[str] = mapped_column(String(32), primary_key=True)
    event_id: Mapped[int] = mapped_column(
        ForeignKey("events.id", ondelete="CASCADE"), primary_key=True
    )


class Notification(Base):
    """A notice on the pages ("recent notifications"), one per user and event."""

    __tablename__ = "notifications"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    competition_id: Mapped[int | None] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), default=None
    )
    kind: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text, default="")
    link: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class NotificationSettings(Base):
    """A user's choices; a kind left out takes its default (app.notifications.preferences)."""

    __tablename__ = "notification_settings"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    choices: Mapped[dict[str, bool]] = mapped_column(JSON, default=dict)
    # Every mail stops, whatever the choices (the unsubscribe link's "all").
    no_mail: Mapped[bool] = mapped_column(default=False)


class WebhookEndpoint(Base):
    __tablename__ = "webhook_endpoints"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(String(2000))
    events: Mapped[list[str]] = mapped_column(JSON)
    # The signing secret (whsec_…), shown once; needed in the clear to sign each delivery.
    secret: Mapped[str] = mapped_column(String(100))
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    failures_in_a_row: Mapped[int] = mapped_column(default=0)
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    disabled_reason: Mapped[str | None] = mapped_column(String(500), default=None)


class WebhookDelivery(Base):
    __tablename__ = "webhook_deliveries"

    id: Mapped[int] = mapped_column(primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), index=True
    )
    event_id: Mapped[int | None] = mapped_column(
        ForeignKey("events.id", ondelete="SET NULL"), default=None
    )
    kind: Mapped[str] = mapped_column(String(64))
    # The webhook-id header: the same on every attempt, so receivers can drop repeats.
    message_id: Mapped[str] = mapped_column(String(64), unique=True)
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    last_status: Mapped[int | None] = mapped_column(default=None)
    last_error: Mapped[str | None] = mapped_column(String(500), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class WebhookAttempt(Base):
    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(primary_key=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True
    )
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    status_code: Mapped[int | None] = mapped_column(default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
