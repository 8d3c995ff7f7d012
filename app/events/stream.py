"""Writing events: one row in the caller's transaction, so an event exists if and only if its
fact was committed. A keyed event (the time sweep's) is written once, whoever writes it first:
the second insert of its key does nothing, on SQLite and PostgreSQL alike."""

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.db import after_commit
from app.models import Event
from app.models.types import utcnow

# What a host's webhook may subscribe to; the rest of the stream is for notifications.
SUBMISSION_SCORED = "submission.scored"
SUBMISSION_FAILED = "submission.failed"
PHASE_OPENED = "phase.opened"
PHASE_CLOSING = "phase.closing"
PHASE_CLOSED = "phase.closed"
BOARD_REVEALED = "board.revealed"
REGISTRATION_REQUESTED = "registration.requested"
REGISTRATION_DECIDED = "registration.decided"
TEAM_INVITED = "team.invited"
ANNOUNCEMENT = "announcement.posted"
WEBHOOK_DISABLED = "webhook.disabled"
WEBHOOK_EVENTS = (
    SUBMISSION_SCORED,
    SUBMISSION_FAILED,
    PHASE_OPENED,
    PHASE_CLOSED,
    BOARD_REVEALED,
    REGISTRATION_REQUESTED,
)

# Wakes this process's events thread after a commit (it polls anyway, for other processes').
_wakers: list[Callable[[], None]] = []


def register_waker(wake: Callable[[], None]) -> None:
    _wakers.append(wake)


def unregister_waker(wake: Callable[[], None]) -> None:
    if wake in _wakers:
        _wakers.remove(wake)


def _wake(session: Session) -> None:
    for wake in list(_wakers):
        after_commit(session, wake)


def emit(
    session: Session,
    kind: str,
    *,
    competition_id: int | None,
    user_id: int | None = None,
    team_id: int | None = None,
    phase_id: int | None = None,
    submission_id: int | None = None,
    payload: dict[str, Any] | None = None,
    key: str | None = None,
) -> bool:
    """Write the event; with ``key``, only if no event has that key yet. True when written."""
    values = dict(
        kind=kind,
        competition_id=competition_id,
        user_id=user_id,
        team_id=team_id,
        phase_id=phase_id,
        submission_id=submission_id,
        payload=payload or {},
        dedupe_key=key,
        created_at=utcnow(),
    )
    written = emit_rows(session.connection(), [values], keyed=key is not None)
    _wake(session)
    return written > 0


def emit_rows(connection: Connection, rows: list[dict[str, Any]], *, keyed: bool = False) -> int:
    """Core inserts (the scorer settles with Core statements): each row's columns as
    :func:`emit` takes them. ``keyed``: rows whose ``dedupe_key`` exists already are skipped."""
    if not rows:
        return 0
    for row in rows:
        row.setdefault("created_at", utcnow())
        row.setdefault("payload", {})
    if not keyed:
        connection.execute(Event.__table__.insert(), rows)
        return len(rows)
    insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
    written = 0
    for row in rows:
        # RETURNING, not rowcount: the row returned is the proof it was this insert's.
        made = connection.execute(
            insert(Event.__table__)
            .values(**row)
            .on_conflict_do_nothing(index_elements=["dedupe_key"])
            .returning(Event.__table__.c.id)
        ).first()
        written += made is not None
    return written
