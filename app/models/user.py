"""Users and their API tokens (stored as keyed hashes, never in the clear)."""

import enum
from datetime import datetime

from sqlalchemy import Enum, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime, utcnow


class Role(enum.StrEnum):
    # An organiser may create competitions (and hosts those it creates); an admin may also act
    # as a host of every competition.
    organiser = "organiser"
    participant = "participant"
    admin = "admin"


class UserState(enum.StrEnum):
    active = "active"
    # An admin turned the account off: no session, token or password gets in until enabled.
    disabled = "disabled"
    # The user left: the name is a pseudonym, nothing personal is kept, nothing gets in.
    deleted = "deleted"


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[Role] = mapped_column(Enum(Role, name="user_role", native_enum=False, length=16))
    # An Argon2 hash for signing in to the web pages; None: the user signs in with a token only.
    password_hash: Mapped[str | None] = mapped_column(String(255), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # A verified address only (normalised, lower case): an address someone typed lives in its
    # verification link until its owner follows it, so nobody can hold another's address.
    email: Mapped[str | None] = mapped_column(String(320), unique=True, default=None)
    email_verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # The address waiting for its link (shown on the account page only).
    pending_email: Mapped[str | None] = mapped_column(String(320), default=None)
    # Accounts people made themselves join and submit only once an address is verified; those an
    # admin made (and every account from before sign-up existed) need none.
    must_verify: Mapped[bool] = mapped_column(default=False)
    state: Mapped[UserState] = mapped_column(
        Enum(UserState, name="user_state", native_enum=False, length=16),
        default=UserState.active,
        server_default=UserState.active.value,
    )

    tokens: Mapped[list["ApiToken"]] = relationship(back_populates="user")

    @property
    def is_organiser(self) -> bool:
        """May create competitions. What a user may do in one competition is decided by
        :func:`app.auth.hosts.is_host`, never by this."""
        return self.role in (Role.organiser, Role.admin)

    @property
    def is_admin(self) -> bool:
        return self.role == Role.admin

    @property
    def is_active(self) -> bool:
        return self.state == UserState.active

    @property
    def may_take_part(self) -> bool:
        """May join competitions and submit: an account made by its owner needs its address
        verified first."""
        return self.is_active and (not self.must_verify or self.email_verified_at is not None)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The first characters, so a user can tell their tokens apart without us keeping the secret.
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    user: Mapped[User] = relationship(back_populates="tokens")


class WebSession(Base):
    """A signed-in browser. The cookie holds a random secret; only its keyed hash is stored, so
    signing out (deleting the row) ends the session everywhere at once.

    ``token_id`` names the API token it was opened with (None: the password), so revoking that
    token ends the session too.
    """

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    token_id: Mapped[int | None] = mapped_column(
        ForeignKey("api_tokens.id", ondelete="CASCADE"), index=True, default=None
    )
    # Refreshed at most every few minutes (see app.auth.service), not on every page.
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    user: Mapped[User] = relationship()
    token: Mapped[ApiToken | None] = relationship()
