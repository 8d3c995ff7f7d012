"""Secrets sent in links (verify an address, reset a password, an invitation to sign up, an
OpenID sign-in in flight): one kind of thing, one table, one helper.

A secret is 256 random bits, shown once (in the mail or the redirect) and stored as a keyed hash;
it has a purpose (a reset link cannot verify an address), an expiry and a number of uses. Using
one is a conditional UPDATE, so two requests racing with one single-use link cannot both win.
"""

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.auth.tokens import hash_token
from app.errors import Unprocessable
from app.models import LinkSecret

VERIFY_EMAIL = "verify_email"
RESET_PASSWORD = "reset_password"
INVITE = "invite"
OIDC_STATE = "oidc_state"

LINK_PREFIX = "pdl_"
MAX_SECRET_LENGTH = 200


class LinkRefused(Unprocessable):
    """A link that is unknown, used up, expired, or made for something else: one message for
    all, so that a link reveals nothing about why."""

    code = "link_invalid"

    def __init__(self) -> None:
        super().__init__(
            "this link is not valid any more: it was used, it expired, or it was mistyped"
        )


@dataclass(frozen=True)
class Issued:
    secret: str
    row: LinkSecret


def issue(
    session: Session,
    *,
    purpose: str,
    secret_key: str,
    lifetime: timedelta,
    uses: int = 1,
    user_id: int | None = None,
    email: str | None = None,
    data: dict[str, Any] | None = None,
    created_by_id: int | None = None,
) -> Issued:
    secret = LINK_PREFIX + secrets.token_urlsafe(32)
    row = LinkSecret(
        purpose=purpose,
        secret_hash=hash_token(secret, secret_key=secret_key),
        prefix=secret[:10],
        user_id=user_id,
        email=email,
        data=data,
        uses_left=uses,
        expires_at=datetime.now(UTC) + lifetime,
        created_by_id=created_by_id,
    )
    session.add(row)
    session.flush()
    return Issued(secret, row)


def peek(session: Session, *, purpose: str, secret: str, secret_key: str) -> LinkSecret:
    """The live link behind ``secret`` without using it (a page showing what it is for)."""
    if not secret or len(secret) > MAX_SECRET_LENGTH:
        raise LinkRefused()
    row = session.scalar(
        select(LinkSecret).where(
            LinkSecret.secret_hash == hash_token(secret, secret_key=secret_key),
            LinkSecret.purpose == purpose,
        )
    )
    if row is None or row.uses_left < 1 or row.expires_at <= datetime.now(UTC):
        raise LinkRefused()
    return row


def use(session: Session, *, purpose: str, secret: str, secret_key: str) -> LinkSecret:
    """Use the link once (its uses counted down atomically); refused if it cannot be."""
    row = peek(session, purpose=purpose, secret=secret, secret_key=secret_key)
    taken = session.execute(
        update(LinkSecret)
        .where(LinkSecret.id == row.id, LinkSecret.uses_left >= 1)
        .values(uses_left=LinkSecret.uses_left - 1)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        raise LinkRefused()
    session.refresh(row)
    return row


def revoke(session: Session, *, purpose: str, user_id: int) -> None:
    """End every live link of ``purpose`` for the user (a new reset link voids the older)."""
    session.execute(
        delete(LinkSecret).where(LinkSecret.purpose == purpose, LinkSecret.user_id == user_id)
    )


def prune(session: Session, *, now: datetime | None = None) -> int:
    """Forget links that expired or were used up (the sweep): the table stays bounded."""
    at = now or datetime.now(UTC)
    result = session.execute(
        delete(LinkSecret).where((LinkSecret.expires_at <= at) | (LinkSecret.uses_left < 1))
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
