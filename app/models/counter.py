"""Counters that several API processes share when there is no Redis (:mod:`app.shared`)."""

from sqlalchemy import Float, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


class SharedCounter(Base):
    """Failures under one key in a fixed window: ``count`` until ``expires_at``.

    ``expires_at`` is seconds since the epoch (a float, as the processes' clocks give it): the
    row is only ever compared with another process's ``time.time()``, never shown.
    """

    __tablename__ = "shared_counters"
    # Expired rows are swept by this index (app.shared.database).
    __table_args__ = (Index("ix_shared_counters_expires_at", "expires_at"),)

    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[float] = mapped_column(Float)
