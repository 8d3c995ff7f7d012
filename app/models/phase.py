"""A competition's phases: the unit its windows, quotas, board rules, columns and keys hang on.

A competition made the old way (one ``metric``, one ``deadline``) has one phase named ``main``.
Phases may overlap (EvalAI runs a development and a test phase side by side); each has its own
answer key versions, so each phase's boards are the standings of its own board key.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime

# Who sees a phase's board: everyone; each team its own scores only (hosts the board); or, until
# the phase ends, nobody but the hosts learns anything of any score.
BOARD_PUBLIC, BOARD_HIDDEN, BOARD_BLIND = "public", "hidden", "blind"
BOARD_RULES = (BOARD_PUBLIC, BOARD_HIDDEN, BOARD_BLIND)
# Which of a team's submissions stands: its best, its latest scored, or those it chose (Kaggle's
# final selections, auto-chosen by public score when it chose none).
COUNTS_BEST, COUNTS_LAST, COUNTS_CHOSEN = "best", "last", "chosen"
COUNTING_RULES = (COUNTS_BEST, COUNTS_LAST, COUNTS_CHOSEN)
LEGACY_PHASE = "main"
# What a phase takes: a predictions file (scored as uploaded), or code run in the jail on the
# competition's data files (hidden ones included) whose submission.csv is then scored alike.
# Or an agent that plays episodes against others in an environment (a simulation phase).
KIND_PREDICTIONS, KIND_CODE, KIND_SIMULATION = "predictions", "code", "simulation"
SUBMISSION_KINDS = (KIND_PREDICTIONS, KIND_CODE, KIND_SIMULATION)


class Phase(Base):
    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("competition_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    start: Mapped[datetime] = mapped_column(UTCDateTime())
    # None: open-ended (a competition made without a deadline).
    end: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    daily_submission_limit: Mapped[int] = mapped_column(Integer, default=5)
    total_submission_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    final_selection_limit: Mapped[int] = mapped_column(Integer, default=2)
    board: Mapped[str] = mapped_column(String(8), default=BOARD_PUBLIC)
    counts: Mapped[str] = mapped_column(String(8), default=COUNTS_CHOSEN)
    # The phase's own leaderboard columns (EvalAI links each phase to its own schema); None: the
    # competition's.
    columns: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)
    # What a submission's uploader is asked for (method name, a URL, host-defined fields).
    entry_fields: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # An imported scoring program (app.competitions.bundles): {kind, ref, sha256, command,
    # program: [{path, sha256}], reference: [{path, sha256}], ...}; ``ref`` is one stored zip
    # of its files and the phase's reference data. None: the columns' catalogue metrics score.
    scorer: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    submission_kind: Mapped[str] = mapped_column(
        String(16), default=KIND_PREDICTIONS, server_default=KIND_PREDICTIONS
    )
    # A code phase's limits (app.coderun.limits.CodeLimits as a dict); None: the defaults.
    code_limits: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # A simulation phase's environment ({"name", "configuration"}) and its ladder's settings
    # (app.simulation.settings.SimulationSettings as a dict); None elsewhere.
    environment: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    simulation: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # Submissions carried into this phase when it opens (Codabench's auto_migrate_to_this_phase):
    # {"from": PHASE, "take": "last" | "selected"}; None: none. ``migrated_at``: when it was done.
    migrate: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    migrated_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # A multi-task phase (Codabench's ``tasks``): [{"key", "title", "columns", "scorer"}], each
    # task its own columns (shown as "{task}.{column}") and its own imported program (a
    # ``scorer`` as above); the phase's answer key holds each task's reference data under
    # "{task}/". ``columns`` then holds the phase's aggregates (average_rank, mean, ...). None:
    # a single-task phase, as every phase was before.
    tasks: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)

    # By name: app.models.competition imports this module, never the other way round.
    competition: Mapped["Competition"] = relationship(back_populates="phases")  # noqa: F821
    answer_keys: Mapped[list["AnswerKey"]] = relationship(  # noqa: F821
        back_populates="phase", order_by="AnswerKey.version", viewonly=True
    )

    @property
    def board_key(self) -> "AnswerKey | None":  # noqa: F821
        """The phase's newest published key version: the one its boards are computed from."""
        published = [k for k in self.answer_keys if k.published_at is not None]
        return published[-1] if published else None

    @property
    def task_keys(self) -> list[str]:
        return [str(t["key"]) for t in self.tasks or ()]

    @property
    def takes_code(self) -> bool:
        return self.submission_kind == KIND_CODE

    @property
    def takes_agents(self) -> bool:
        return self.submission_kind == KIND_SIMULATION

    def state(self, now: datetime) -> str:
        if now < self.start:
            return "upcoming"
        if self.end is not None and now >= self.end:
            return "ended"
        return "open"

    def is_open(self, now: datetime) -> bool:
        return self.state(now) == "open"

    def has_ended(self, now: datetime) -> bool:
        return self.end is not None and now >= self.end
