"""The events thread of an API process (or ``podium events run``): each pass writes the moments
that came (the time sweep), lets the readers (notifications, webhooks) handle what is new, and
sends the webhook deliveries that are due. Every part is safe beside the same thread in other
processes."""

import logging
import threading
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import unit_of_work
from app.events import stream
from app.events.moments import sweep_moments
from app.events.readers import read_new
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


class EventsThread:
    def __init__(
        self, factory: sessionmaker[Session], settings: Settings, *, interval: float = 5.0
    ) -> None:
        self._factory = factory
        self._settings = settings
        self._interval = interval
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _poke(self) -> None:
        self._wake.set()

    def start(self) -> None:
        stream.register_waker(self._poke)
        self._thread = threading.Thread(target=self._run, name="podium-events", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        stream.unregister_waker(self._poke)
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        last_prune = 0.0
        while not self._stop.is_set():
            try:
                process_once(self._factory, self._settings)
                if time.monotonic() - last_prune >= PRUNE_EVERY_SECONDS:
                    last_prune = time.monotonic()
                    prune(self._factory)
            except Exception:  # noqa: BLE001 - the database may be away; the next pass retries
                log.warning("events pass failed", exc_info=True)
            self._wake.wait(self._interval)
            self._wake.clear()
