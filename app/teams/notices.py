"""Notices: what changed for a team without its doing, shown on its team view.

A merge that had to clear final selections and a deadline moved earlier past a selected submission
both leave one, so nothing about a team's standing changes silently.
"""

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import TeamNotice
from app.teams.schemas import NoticePublic

# The team view shows this many, newest first.
SHOWN_NOTICES = 10


def notify(session: Session, *, team_id: int, kind: str, message: str) -> TeamNotice:
    notice = TeamNotice(team_id=team_id, kind=kind, message=message)
    session.add(notice)
    session.flush()
    return notice


def recent(session: Session, *, team_id: int) -> list[NoticePublic]:
    rows = session.scalars(
        select(TeamNotice)
        .where(TeamNotice.team_id == team_id)
        .order_by(TeamNotice.created_at.desc(), TeamNotice.id.desc())
        .limit(SHOWN_NOTICES)
    )
    return [
        NoticePublic(kind=row.kind, message=row.message, created_at=row.created_at) for row in rows
    ]
