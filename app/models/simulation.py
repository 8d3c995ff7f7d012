"""Simulation phases' episodes and ratings: agents (submissions) play episodes; each episode moves
the skills (μ, σ) of the agents in it.

An episode is a job of its own, claimed under a lease like a submission (``attempts`` is the
claim's token): its result and the ratings it moves are written in one transaction, and only while
the claim still holds it, so a worker that dies mid-episode loses nothing (the sweep hands it out
again) and one whose lease was taken over writes nothing (no episode counts twice).
"""

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime, utcnow

EPISODE_VALIDATION, EPISODE_LADDER = "validation", "ladder"
EPISODE_QUEUED, EPISODE_RUNNING, EPISODE_DONE, EPISODE_FAILED = (
    "queued",
    "running",
    "done",
    "failed",
)


class AgentRating(Base):
    """A valid agent's skill in its phase. ``active``: still playing (each team's newest N)."""

    __tablename__ = "agent_ratings"

    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), primary_key=True
    )
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    episodes: Mapped[int] = mapped_column(Integer, default=0)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Episode(Base):
    __tablename__ = "episodes"
    __table_args__ = (Index("ix_episodes_status", "status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16), default=EPISODE_LADDER)
    status: Mapped[str] = mapped_column(String(16), default=EPISODE_QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # The environment as played: {"name", "configuration"} with its defaults filled in.
    environment: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    steps: Mapped[int | None] = mapped_column(Integer, default=None)
    # Kaggle's replay JSON (Environment.toJSON), gzip-compressed, bounded.
    replay: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    # Why the episode did not count (the host's), e.g. it passed runTimeout.
    error: Mapped[str | None] = mapped_column(Text, default=None)

    agents: Mapped[list["EpisodeAgent"]] = relationship(
        back_populates="episode", order_by="EpisodeAgent.position"
    )


class EpisodeAgent(Base):
    """One seat of an episode: the agent in it, how it ended, its skill before and after, its log
    (Kaggle's per-step logs and its process's output, gzip-compressed: the team's and hosts')."""

    __tablename__ = "episode_agents"
    __table_args__ = (UniqueConstraint("episode_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    episode_id: Mapped[int] = mapped_column(
        ForeignKey("episodes.id", ondelete="CASCADE"), index=True
    )
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    status: Mapped[str | None] = mapped_column(String(16), default=None)
    reward: Mapped[float | None] = mapped_column(Float, default=None)
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    mu_before: Mapped[float | None] = mapped_column(Float, default=None)
    sigma_before: Mapped[float | None] = mapped_column(Float, default=None)
    mu_after: Mapped[float | None] = mapped_column(Float, default=None)
    sigma_after: Mapped[float | None] = mapped_column(Float, default=None)
    log: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)

    episode: Mapped[Episode] = relationship(back_populates="agents")
