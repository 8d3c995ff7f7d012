"""Who may host a competition: the one question every host page asks, answered by
:func:`app.competitions.hosts.is_host` (owner, co-hosts, site admins)."""

from sqlalchemy.orm import Session

from app.competitions.hosts import is_host
from app.models import Competition, User


def may_host(session: Session, *, competition: Competition, user: User | None) -> bool:
    return user is not None and is_host(session, competition, user)
