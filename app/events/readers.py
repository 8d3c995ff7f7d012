"""Reading the stream: each reader handles each event once, at its own pace, safe to run in
every process at once. A reader's mark on an event is written in the transaction of what it
made of it (notices, mails, deliveries); two processes reaching one event race on the mark's
primary key, and the loser skips it. Marks, not a cursor: on PostgreSQL an event with a smaller
id may commit after a larger one, and a cursor would step over it."""

import logging
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db import unit_of_work
from app.models import Event, EventMark
from app.models.types import utcnow

log = logging.getLogger(__name__)

# Events older than this are no reader's news any more (a process down for two days does not
# mail about the phase that opened meanwhile).
HORIZON = timedelta(days=2)
BATCH = 100


def read_new(
    factory: sessionmaker[Session],
    reader: str,
    handle: Callable[[Session, Event], object],
    *,
    batch: int = BATCH,
) -> int:
    """Handle the events this reader has not marked, oldest first; returns how many."""
    with unit_of_work(factory) as session:
        events = session.scalars(
            select(Event)
            .where(
                Event.created_at > utcnow() - HORIZON,
                ~exists().where(EventMark.reader == reader, EventMark.event_id == Event.id),
            )
            .order_by(Event.id)
            .limit(batch)
        ).all()
        handled = 0
        for event in events:
            try:
                with session.begin_nested():
                    session.add(EventMark(reader=reader, event_id=event.id))
                    session.flush()
            except IntegrityError:
                continue  # another process has it
            try:
                with session.begin_nested():
                    handle(session, event)
            except Exception:  # noqa: BLE001 - one bad event must not stop the stream
                log.exception(
                    "%s: event %s (%s) could not be handled", reader, event.id, event.kind
                )
            handled += 1
        return handled
