"""Who may host a competition: the one question every host page asks.

Today an organiser hosts the competitions they created. Per-competition hosts (co-hosts, site
admins) replace this function's body when they exist; nothing else in the web pages asks.
"""

from sqlalchemy.orm import Session

from app.models import Competition, User


def may_host(session: Session, *, competition: Competition, user: User | None) -> bool:
    return user is not None and user.is_organiser and competition.created_by_id == user.id
