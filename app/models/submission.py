"""Submissions and their scores, one score row per (submission, answer-key version)."""

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.competition import AnswerKey, Competition
from app.models.phase import Phase
from app.models.team import Team
from app.models.types import UTCDateTime, utcnow
from app.models.user import User


class SubmissionStatus(enum.StrEnum):
    queued = "queued"
    # A code submission's run in the jail; its submission.csv is then ``scoring``.
    running = "running"
    scoring = "scoring"
    scored = "scored"
    failed = "failed"


# Held by a scorer under a lease (app.jobs.lease), and not yet final.
HELD_STATUSES = (SubmissionStatus.running, SubmissionStatus.scoring)
PENDING_STATUSES = (SubmissionStatus.queued, *HELD_STATUSES)


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (Index("ix_submissions_status", "status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    # The phase it was filed into (the one open at upload, or the one the uploader named).
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    description: Mapped[str] = mapped_column(Text, default="")
    # The entry details the phase asked for at upload (method name, URLs, host-defined fields).
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    filename: Mapped[str] = mapped_column(String(255))
    path: Mapped[str] = mapped_column(String(500))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[SubmissionStatus] = mapped_column(
        Enum(SubmissionStatus, name="submission_status", native_enum=False, length=16),
        default=SubmissionStatus.queued,
    )
    # What the participant may read about a failure, and what only the host may read.
    error: Mapped[str | None] = mapped_column(Text, default=None)
    host_error: Mapped[str | None] = mapped_column(Text, default=None)
    selected: Mapped[bool] = mapped_column(Boolean, default=False)
    # A submission carried from another phase (app.competitions.migration): the one it copies.
    migrated_from_id: Mapped[int | None] = mapped_column(
        ForeignKey("submissions.id", ondelete="SET NULL"), default=None
    )
    # Made after the deadline: scored and shown to its team, never ranked or selectable.
    late: Mapped[bool] = mapped_column(Boolean, default=False)
    # Failed through our fault (a crash, our timeout): it does not count against the quota.
    refunded: Mapped[bool] = mapped_column(Boolean, default=False)
    hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    # An organiser's reference entry: on the board, never ranked.
    baseline: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # Scoring claims: a worker holds the submission until ``lease_expires_at`` and renews it while
    # it scores; a sweep re-enqueues it once the lease lapses, up to a number of attempts.
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # The upload request's id, carried into the scoring job's log lines.
    request_id: Mapped[str | None] = mapped_column(String(64), default=None)
    # A code submission's run: its log (stdout and stderr, the first 8 KB and the last 64 KB, for
    # the team and the hosts), the failure's name, and what makes the run reproducible.
    log_head: Mapped[str | None] = mapped_column(Text, default=None)
    log_tail: Mapped[str | None] = mapped_column(Text, default=None)
    log_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    run_failure: Mapped[str | None] = mapped_column(String(32), default=None)
    code_sha256: Mapped[str | None] = mapped_column(String(64), default=None)
    inputs_sha256: Mapped[str | None] = mapped_column(String(64), default=None)
    runtime_fingerprint: Mapped[str | None] = mapped_column(String(64), default=None)
    # Where the submission.csv a successful run wrote is kept (rescored without running again).
    output_path: Mapped[str | None] = mapped_column(String(500), default=None)
    # The code behind a predictions file, attached by its team when the hosts ask (winners'
    # checks): private to the team and the hosts, its SHA-256 in the record.
    attachment_path: Mapped[str | None] = mapped_column(String(500), default=None)
    attachment_sha256: Mapped[str | None] = mapped_column(String(64), default=None)

    competition: Mapped["Competition"] = relationship()
    phase: Mapped["Phase"] = relationship()
    team: Mapped[Team] = relationship()
    user: Mapped[User] = relationship()
    scores: Mapped[list["Score"]] = relationship(back_populates="submission")


class Score(Base):
    __tablename__ = "scores"
    # A retried scoring job finds the row already there instead of writing a second one.
    __table_args__ = (UniqueConstraint("submission_id", "answer_key_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    answer_key_id: Mapped[int] = mapped_column(
        ForeignKey("answer_keys.id", ondelete="CASCADE"), index=True
    )
    score: Mapped[float | None] = mapped_column(Float, default=None)
    public_score: Mapped[float | None] = mapped_column(Float, default=None)
    private_score: Mapped[float | None] = mapped_column(Float, default=None)
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # Every column's value ({key: {"score", "public", "private"}}); the three floats above are
    # the ranking column's.
    columns: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # The tie-breaking columns' values as one string that sorts the board's way (empty: no
    # tie-breaking column), per split: the standings order by (score, tie, time).
    public_tie: Mapped[str] = mapped_column(String(400), default="", server_default="")
    private_tie: Mapped[str] = mapped_column(String(400), default="", server_default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    submission: Mapped[Submission] = relationship(back_populates="scores")
    answer_key: Mapped["AnswerKey"] = relationship()
