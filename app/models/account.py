"""What accounts need beyond the user row: secrets sent in links, linked OpenID identities, the
mail outbox, and the site's own audit trail (admins' and users' account actions)."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime, utcnow
from app.models.user import User


class LinkSecret(Base):
    """One secret put in a link or a redirect (verify an address, reset a password, an invitation
    to sign up, an OpenID sign-in in flight): random, stored as a keyed hash, with a purpose, an
    expiry and a number of uses left. One table and one helper (app.accounts.links) serve all."""

    __tablename__ = "link_secrets"

    id: Mapped[int] = mapped_column(primary_key=True)
    purpose: Mapped[str] = mapped_column(String(32))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The first characters, so an admin can tell invitations apart without the secret.
    prefix: Mapped[str] = mapped_column(String(16), default="")
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True, default=None
    )
    email: Mapped[str | None] = mapped_column(String(320), default=None)
    data: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    uses_left: Mapped[int] = mapped_column(default=1)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )

    __table_args__ = (Index("ix_link_secrets_purpose_user", "purpose", "user_id"),)


class OidcIdentity(Base):
    """A sign-in at an OpenID provider linked to a user: keyed by issuer and subject, never by
    the e-mail address (which a provider may let anyone claim)."""

    __tablename__ = "oidc_identities"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    provider: Mapped[str] = mapped_column(String(64))
    issuer: Mapped[str] = mapped_column(String(500))
    subject: Mapped[str] = mapped_column(String(255))
    email: Mapped[str | None] = mapped_column(String(320), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_used_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    user: Mapped[User] = relationship()

    __table_args__ = (UniqueConstraint("issuer", "subject", name="uq_oidc_identity"),)


class OutboundMail(Base):
    """A mail waiting to leave, written in the same transaction as what it tells (the outbox):
    the request never talks to a mail server; the sender (app.mail.sender) delivers it, retrying
    with backoff, and marks it sent once."""

    __tablename__ = "outbound_mails"

    id: Mapped[int] = mapped_column(primary_key=True)
    to_addr: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text)
    # pending (waiting or retrying), sent, failed (gave up)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # A sender holds a mail this long while it talks to the server: another sender (a second
    # process) leaves it alone, and takes it over if the first died.
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    last_error: Mapped[str | None] = mapped_column(String(500), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    __table_args__ = (Index("ix_outbound_mails_due", "status", "next_attempt_at"),)


class SiteAuditEntry(Base):
    """An account or site action (sign-up, disable, role change, deletion, invitation), who did
    it and when: the competitions' audit log is per competition, these are the site's."""

    __tablename__ = "site_audit_entries"

    id: Mapped[int] = mapped_column(primary_key=True)
    actor_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200), default="")
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)

    actor: Mapped[User | None] = relationship()
