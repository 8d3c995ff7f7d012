"""Unsubscribe links that work without signing in: ``<user id>.<kind>.<keyed HMAC>``. Stateless
(nothing stored per mail), unforgeable without the server's secret key, and good for as long as
the key is: an old mail's link still stops the mail it came with."""

import base64
import hashlib
import hmac

from sqlalchemy.orm import Session

from app.errors import Unprocessable
from app.notifications import preferences
from app.notifications.preferences import KINDS

ALL = "all"
MAX_TOKEN = 200


class UnsubscribeRefused(Unprocessable):
    code = "link_invalid"

    def __init__(self) -> None:
        super().__init__("this unsubscribe link is not valid: it was mistyped or cut short")


def _mac(user_id: int, kind: str, secret_key: str) -> str:
    digest = hmac.new(
        secret_key.encode(), f"unsubscribe:{user_id}:{kind}".encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest[:20]).decode().rstrip("=")


def token(user_id: int, kind: str | None, secret_key: str) -> str:
    which = kind or ALL
    return f"{user_id}.{which}.{_mac(user_id, which, secret_key)}"


def read(value: str, secret_key: str) -> tuple[int, str]:
    """The user id and kind a token stops; refused unless its MAC is the server's."""
    parts = value.split(".") if len(value) <= MAX_TOKEN else []
    if len(parts) != 3 or not parts[0].isdigit() or len(parts[0]) > 10:
        raise UnsubscribeRefused()
    user_id, kind, mac = int(parts[0]), parts[1], parts[2]
    if kind != ALL and kind not in KINDS:
        raise UnsubscribeRefused()
    if not hmac.compare_digest(mac, _mac(user_id, kind, secret_key)):
        raise UnsubscribeRefused()
    return user_id, kind


def apply(session: Session, *, value: str, secret_key: str) -> str:
    """Stop what the token says (one kind, or every mail); returns the kind."""
    user_id, kind = read(value, secret_key)
    from app.models import User

    if session.get(User, user_id) is None:
        raise UnsubscribeRefused()
    if kind == ALL:
        preferences.update(session, user_id=user_id, choices={}, mail=False)
    else:
        preferences.update(session, user_id=user_id, choices={kind: False}, mail=None)
    return kind
