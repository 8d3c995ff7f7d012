"""Materialised standings: each team's entry on each board, per answer-key version.

One row per (key version, board, team), rewritten whenever something that decides it changes
(see :mod:`app.leaderboard.standings`), so reading a board costs the same whatever the number of
submissions behind it.
"""

from datetime import datetime

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.types import UTCDateTime


class Standing(Base):
    __tablename__ = "standings"
    __table_args__ = (
        # One row per team, and one per baseline (each baseline stands on its own, unranked).
        UniqueConstraint("answer_key_id", "board", "submission_id"),
        # A board page walks the rows of one (key, board) in rank order, straight off this index.
        Index(
            "ix_standings_board_order",
            "answer_key_id",
            "board",
            "order_key",
            "tie_key",
            "submitted_at",
            "submission_id",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    answer_key_id: Mapped[int] = mapped_column(ForeignKey("answer_keys.id", ondelete="CASCADE"))
    board: Mapped[str] = mapped_column(String(8))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    # The submission whose score stands, its score and its time (the tie-break).
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    score: Mapped[float] = mapped_column(Float)
    # The score turned so that smaller is better (negated for a metric to maximise): rank order
    # is (order_key, submitted_at, submission_id), all ascending.
    order_key: Mapped[float] = mapped_column(Float)
    # The tie-breaking columns in board order (app.scoring.columns.tie_key): ranks by
    # (order_key, tie_key, submitted_at, submission_id).
    tie_key: Mapped[str] = mapped_column(String(400), default="", server_default="")
    submitted_at: Mapped[datetime] = mapped_column(UTCDateTime())
    baseline: Mapped[bool] = mapped_column(Boolean, default=False)
    # The team's scored submissions in the key's phase (hidden ones included, failed ones not).
    entries: Mapped[int] = mapped_column(Integer)
    last_submission_at: Mapped[datetime] = mapped_column(UTCDateTime())


class BoardRevision(Base):
    """A counter per competition, bumped by every transaction that writes its standings: a board
    rendered under an older revision is stale (app.leaderboard.cache). A table of its own, so
    the bump's row lock meets only other standings writers, never a host editing the competition.
    """

    __tablename__ = "board_revisions"

    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), primary_key=True
    )
    revision: Mapped[int] = mapped_column(Integer)
