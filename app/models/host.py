"""Who runs a competition: its owner (the creator) and the co-hosts the owner adds."""

import enum
from datetime import datetime

from sqlalchemy import Enum, ForeignKey, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime, utcnow
from app.models.user import User


class HostRole(enum.StrEnum):
    owner = "owner"
    cohost = "cohost"


class CompetitionHost(Base):
    __tablename__ = "competition_hosts"
    __table_args__ = (UniqueConstraint("competition_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    role: Mapped[HostRole] = mapped_column(
        Enum(HostRole, name="host_role", native_enum=False, length=16)
    )
    added_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    user: Mapped[User] = relationship()


class FormerHost(Base):
    """Someone who was a co-host and was removed. Kept for good: they read the private board
    and every team's files, so they may never compete in that competition."""

    __tablename__ = "former_hosts"
    __table_args__ = (UniqueConstraint("competition_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    removed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
