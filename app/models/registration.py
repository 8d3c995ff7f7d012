"""A user's standing in one competition, the rules version they accepted, and what the hosts
wrote to the participants (announcements)."""

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Enum, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime, utcnow
from app.models.user import User


class RegistrationStatus(enum.StrEnum):
    pending = "pending"
    approved = "approved"
    denied = "denied"
    banned = "banned"


class Registration(Base):
    __tablename__ = "registrations"
    __table_args__ = (UniqueConstraint("competition_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    status: Mapped[RegistrationStatus] = mapped_column(
        Enum(RegistrationStatus, name="registration_status", native_enum=False, length=16)
    )
    # The participant's note with a request, and the hosts' with their decision.
    message: Mapped[str] = mapped_column(Text, default="")
    decision_message: Mapped[str] = mapped_column(Text, default="")
    # None: never accepted (a competition without rules needs none).
    rules_version: Mapped[int | None] = mapped_column(Integer, default=None)
    rules_accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    decided_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )

    user: Mapped[User] = relationship(foreign_keys=[user_id])


class Announcement(Base):
    __tablename__ = "announcements"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    author_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    # Who it is for: {"status": [...], "phase": name|None, "submitted": bool|None}.
    audience: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)

    author: Mapped[User | None] = relationship()
