"""Writing and reading audit entries: who did what, when, and what it changed."""

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from app.models import AuditEntry, Competition, User
from app.pagination import Page, Paged, paginate


def snapshot(obj: object, names: list[str]) -> dict[str, Any]:
    """The named attributes of ``obj`` as an audit entry's before or after (times as ISO text)."""
    return {
        name: value.isoformat() if isinstance(value, datetime) else value
        for name in names
        for value in [getattr(obj, name)]
    }


def record(
    session: Session,
    *,
    competition: Competition,
    actor: User,
    action: str,
    target: str = "",
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEntry:
    entry = AuditEntry(
        competition_id=competition.id,
        actor_id=actor.id,
        action=action,
        target=target,
        before=before,
        after=after,
    )
    session.add(entry)
    session.flush()
    return entry


def entries(session: Session, *, competition: Competition, page: Page) -> Paged[AuditEntry]:
    """One page of the competition's log, oldest first, with each entry's actor."""
    query = (
        select(AuditEntry)
        .where(AuditEntry.competition_id == competition.id)
        .order_by(AuditEntry.created_at, AuditEntry.id)
    )
    return paginate(session, query, page, options=[joinedload(AuditEntry.actor)])
