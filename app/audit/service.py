"""Writing and reading audit entries: who did what, when, and what it changed."""

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import AuditEntry, Competition, User


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


def entries(session: Session, *, competition: Competition) -> list[AuditEntry]:
    return list(
        session.scalars(
            select(AuditEntry)
            .where(AuditEntry.competition_id == competition.id)
            .order_by(AuditEntry.created_at, AuditEntry.id)
        )
    )
