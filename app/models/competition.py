"""Competitions and their versioned, hidden answer keys."""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime, utcnow

if TYPE_CHECKING:
    from app.models.phase import Phase

# A competition's life: a draft is seen by its hosts only; published is today's competition;
# archived is read-only, its boards kept.
DRAFT, PUBLISHED, ARCHIVED = "draft", "published", "archived"
STATUSES = (DRAFT, PUBLISHED, ARCHIVED)


class Competition(Base):
    __tablename__ = "competitions"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(
        String(16), default=PUBLISHED, server_default=PUBLISHED, index=True
    )
    metric_name: Mapped[str] = mapped_column(String(64))
    metric_params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The leaderboard columns (app.competitions.columns): the first ranks, the next break ties.
    # ``metric_name``/``metric_params`` are the ranking column's metric (for a computed ranking
    # column, its first input's), which decides how files are read and the board's direction.
    # None: one column named after the metric, as before columns existed.
    columns: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)
    # For metric_name "custom": the organiser's Kaggle-style score() file and its direction.
    custom_metric_path: Mapped[str | None] = mapped_column(String(500), default=None)
    custom_metric_sha256: Mapped[str | None] = mapped_column(String(64), default=None)
    custom_metric_direction: Mapped[str | None] = mapped_column(String(16), default=None)
    id_column: Mapped[str | None] = mapped_column(String(128), default=None)
    # A single-label classification competition's label set, as the host gave it; without it
    # the board key's labels are the set. Predictions outside it are refused at upload.
    labels: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    # The first phase's start and the last phase's end, kept by app.competitions.phases: teams
    # may merge until ``team_merge_deadline``; after ``deadline`` submissions are late.
    start: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    team_merge_deadline: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # The defaults a legacy body gives its one phase; each phase keeps its own.
    daily_submission_limit: Mapped[int] = mapped_column(Integer, default=5)
    total_submission_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    final_selection_limit: Mapped[int] = mapped_column(Integer, default=2)
    max_team_size: Mapped[int] = mapped_column(Integer, default=5)
    # Participants see scores rounded to this many decimals, which limits leaderboard probing.
    score_decimals: Mapped[int] = mapped_column(Integer, default=5)
    # Seconds one scoring job may take before it fails (None: the server's default).
    scoring_time_limit_seconds: Mapped[int | None] = mapped_column(Integer, default=None)
    # What participants see of public scores: "exact", "ladder" (fixed step, default
    # 1/sqrt(n_public)) or "ladder_free" (Blum & Hardt's Ladder; app.honest.engine.ladder).
    public_board_mode: Mapped[str] = mapped_column(String(16), default="exact")
    ladder_step: Mapped[float | None] = mapped_column(Float, default=None)
    # Bootstrap intervals, rank bands and comparisons; off costs nothing.
    score_intervals: Mapped[bool] = mapped_column(Boolean, default=True)
    # Who takes part (app.registration): "open" (join at once), "approval" (the hosts decide) or
    # "invite" (the allow list, or an invitation link); ``deny`` applies in every mode. Each list
    # holds addresses and "@domain"s.
    registration: Mapped[str] = mapped_column(String(16), default="open", server_default="open")
    allow: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    deny: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    # The rules page (Markdown); its version goes up with each change, and a participant whose
    # accepted version is older accepts again before the next submission.
    rules: Mapped[str] = mapped_column(Text, default="", server_default="")
    rules_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # A benchmark (app.leaderboard.benchmark): no deadline, its phases never end, and a new key
    # version, once published, rescores every scored submission; each board row says which
    # version it was scored on. ``board_every_submission``: its boards show every scored
    # submission, not each team's one standing entry.
    benchmark: Mapped[bool] = mapped_column(Boolean, default=False)
    board_every_submission: Mapped[bool] = mapped_column(Boolean, default=False)
    # The bundle it was first imported from (app.competitions.bundles): {"format", "file",
    # "sha256", "imported_at"}; None: made on Podium. Export → import keeps it.
    origin: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)

    answer_keys: Mapped[list["AnswerKey"]] = relationship(
        back_populates="competition", order_by="AnswerKey.id"
    )
    phases: Mapped[list["Phase"]] = relationship(
        back_populates="competition", order_by="Phase.position"
    )

    @property
    def current_phase(self) -> "Phase | None":
        """The phase a board or an upload means when none is named: the one open now (the
        latest-starting of several), else the last that ended, else the first."""
        now = utcnow()
        phases = list(self.phases)
        if not phases:
            return None
        open_now = [p for p in phases if p.is_open(now)]
        if open_now:
            return max(open_now, key=lambda p: (p.start, p.position))
        ended = [p for p in phases if p.has_ended(now)]
        if ended:
            return max(ended, key=lambda p: (p.end, p.position))  # type: ignore[arg-type,return-value]
        return phases[0]

    @property
    def board_key(self) -> "AnswerKey | None":
        """The current phase's newest published key version: the one its boards come from."""
        phase = self.current_phase
        if phase is None:
            published = [k for k in self.answer_keys if k.published_at is not None]
            return published[-1] if published else None
        return phase.board_key

    def is_past_deadline(self, now: datetime) -> bool:
        return self.deadline is not None and now >= self.deadline


class AnswerKey(Base):
    __tablename__ = "answer_keys"
    # Versions are numbered per phase: each phase has its own key and its own history.
    __table_args__ = (UniqueConstraint("phase_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    path: Mapped[str] = mapped_column(String(500))
    sha256: Mapped[str] = mapped_column(String(64))
    id_column: Mapped[str] = mapped_column(String(128))
    target_columns: Mapped[list[str]] = mapped_column(JSON)
    n_rows: Mapped[int] = mapped_column(Integer)
    n_public: Mapped[int] = mapped_column(Integer)
    n_private: Mapped[int] = mapped_column(Integer)
    # The distinct target labels, for a single-label classification metric (public: the label
    # set is what participants may predict).
    labels: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    uploaded_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The first version is published on upload; a later one only when an organiser publishes it,
    # so fixing a key never moves the boards behind anyone's back.
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    competition: Mapped[Competition] = relationship(back_populates="answer_keys")
    phase: Mapped["Phase"] = relationship(back_populates="answer_keys")
