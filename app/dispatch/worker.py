"""The events thread of an API process (or ``podium events run``): each pass writes the moments
that came (the time sweep), lets the readers (notifications, webhooks) handle what is new, and
sends the webhook deliveries that are due. Every part is safe beside the same thread in other
processes."""

import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import unit_of_work
from app.events import stream
from app.events.moments import sweep_moments
from app.events.readers import read_new
from app.jobs.woken import WokenLoop
from app.models import Event, Notification, WebhookDelivery
from app.notifications import dispatch
from app.webhooks import delivery
from app.webhooks import service as webhooks

log = logging.getLogger(__name__)


def context(settings: Settings) -> dispatch.Context:
    return dispatch.Context(
        base_url=settings.public_url or "http://localhost:8000",
        secret_key=settings.secret_key,
        max_pending=settings.mail_max_pending,
    )


def process_once(
    factory: sessionmaker[Session], settings: Settings, *, now: datetime | None = None
) -> None:
    ctx = context(settings)
    sweep_moments(factory, now=now)

    def notify(session: Session, event: Event) -> None:
        dispatch.handle(session, event, ctx)

    while read_new(factory, "notify", notify):
        pass
    while read_new(factory, "webhooks", webhooks.handle):
        pass
    delivery.deliver_due(factory, settings)


# What the stream keeps: events (with their readers' marks), webhook deliveries (with their
# attempts) and notices, for this long; older rows are removed by the thread's housekeeping.
KEEP = timedelta(days=30)
PRUNE_EVERY_SECONDS = 600.0


def prune(factory: sessionmaker[Session], *, now: datetime | None = None) -> int:
    """Forget what is older than :data:`KEEP`; returns the rows removed."""
    before = (now or datetime.now(UTC)) - KEEP
    removed = 0
    with unit_of_work(factory) as session:
        for table, column in (
            (WebhookDelivery, WebhookDelivery.created_at),
            (Notification, Notification.created_at),
            (Event, Event.created_at),
        ):
            result = session.execute(delete(table).where(column < before))
            removed += int(result.rowcount or 0)  # type: ignore[attr-defined]
    return removed


class EventsThread(WokenLoop):
    """The readers of the stream (notifications, webhooks, time's moments) in one thread, every
    ``interval`` seconds and at once after this process commits an event; old rows pruned."""

    def __init__(
        self, factory: sessionmaker[Session], settings: Settings, *, interval: float = 5.0
    ) -> None:
        super().__init__(
            "podium-events",
            lambda: process_once(factory, settings),
            interval=interval,
            wakers=(stream.register_waker, stream.unregister_waker),
            chore=lambda: prune(factory),
            chore_every=PRUNE_EVERY_SECONDS,
        )
