"""The hosts' "Reproduce the winners" (issue 43): one row per counted submission of a ranked
team whose code is run again in the jail, as a job claimed under a lease
(app.jobs.reproduce), and what came of it. Each result is also appended to the record."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.types import UTCDateTime, utcnow

# A run's state: waiting for a worker (what app.jobs.claims.claim_due takes), or finished.
PENDING, DONE = "pending", "done"
# What came of it: the same output and score; another; or the run failed this time.
EQUAL, DIFFERS, FAILED = "equal", "differs", "failed"


class Reproduction(Base):
    __tablename__ = "reproductions"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    # Rows asked for together share it (the first row's id): one report.
    request: Mapped[int] = mapped_column(Integer, default=0, index=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    rank: Mapped[int | None] = mapped_column(Integer, default=None)
    requested_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    outcome: Mapped[str | None] = mapped_column(String(16), default=None)
    # What was compared: the recorded and reproduced output's SHA-256 and scores, the runtime
    # fingerprints and inputs, and for a failed run its reason.
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
