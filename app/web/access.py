"""Who may host a competition: the one question every host page asks, answered by the same
rule as the API (owner, co-hosts and site admins: :func:`app.auth.hosts.is_host`)."""

from sqlalchemy.orm import Session

from app.auth.hosts import is_host
from app.models import Competition, User


def may_host(session: Session, *, competition: Competition, user: User | None) -> bool:
    return user is not None and is_host(session, competition, user)
