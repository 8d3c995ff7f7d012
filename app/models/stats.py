"""What the honest-leaderboard job adds to a score row, computed after the score is stored."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.submission import Score
from app.models.types import UTCDateTime, utcnow


class ScoreStats(Base):
    __tablename__ = "score_stats"

    id: Mapped[int] = mapped_column(primary_key=True)
    score_id: Mapped[int] = mapped_column(
        ForeignKey("scores.id", ondelete="CASCADE"), unique=True, index=True
    )
    # Percentile and BCa 95 % intervals ({low, high, bca_low, bca_high, se, level, replicates}).
    public_interval: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    private_interval: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # The statistic on each shared resample of its split, float32 bytes: bands and comparisons.
    public_replicates: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    private_replicates: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    # Parameter-free Ladder: the paired standard error against the team's best at the time.
    ladder_threshold: Mapped[float | None] = mapped_column(Float, default=None)
    # Why there is no interval ("metric without a bootstrap", …), for hosts.
    note: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    score: Mapped[Score] = relationship()


class BoardBands(Base):
    """The rank bands of one board of one key version, as the queue last computed them (after
    each score): {submission id: band} for the board's best-ranked ``teams`` rows."""

    __tablename__ = "board_bands"
    __table_args__ = (UniqueConstraint("answer_key_id", "board"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    answer_key_id: Mapped[int] = mapped_column(
        ForeignKey("answer_keys.id", ondelete="CASCADE"), index=True
    )
    board: Mapped[str] = mapped_column(String(8))
    bands: Mapped[dict[str, int]] = mapped_column(JSON)
    teams: Mapped[int] = mapped_column(Integer)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
