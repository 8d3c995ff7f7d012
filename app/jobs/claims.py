"""Claiming the due rows of a send-later table (the mail outbox, webhook deliveries) under a
lease: each sender takes a batch in one transaction, so two processes never send one row at
once, and a sender that died is taken over once its lease lapses."""

from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from app.db import unit_of_work


class SendLater(Protocol):
    """The columns a send-later table has."""

    id: Any
    status: Any
    next_attempt_at: Any
    lease_expires_at: Any
    attempts: Any


def claim_due(
    factory: sessionmaker[Session],
    table: type[SendLater],
    *,
    at: datetime,
    lease: timedelta,
    batch: int,
) -> list[int]:
    """The ids of up to ``batch`` pending rows due at ``at`` and held by no live lease, now
    leased to the caller with one more attempt counted, oldest first."""
    lease_expires: InstrumentedAttribute[Any] = table.lease_expires_at
    with unit_of_work(factory) as session:
        due = session.scalars(
            select(table)
            .where(
                table.status == "pending",
                table.next_attempt_at <= at,
                or_(lease_expires.is_(None), lease_expires < at),
            )
            .order_by(table.id)
            .limit(batch)
            .with_for_update(skip_locked=True)
        ).all()
        for row in due:
            row.lease_expires_at = at + lease
            row.attempts += 1
        return [row.id for row in due]
