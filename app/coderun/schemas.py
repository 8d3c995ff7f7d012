from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class RuntimePublic(BaseModel):
    """The Python that runs participants' code, and each package's version (None: absent)."""

    python: str
    implementation: str
    machine: str
    packages: dict[str, str | None]
    fingerprint: str


class ReproductionCreate(BaseModel):
    """Which phase (optional when one phase takes code) and how many ranked teams."""

    phase: str | None = Field(default=None, max_length=64)
    top: int = Field(default=3, ge=1, le=50)


class ReproductionRun(BaseModel):
    """One counted submission run again: ``outcome`` is ``equal`` (the same output file and
    scores), ``differs`` or ``failed``, None while it waits or runs."""

    submission_id: int
    team: str
    rank: int | None
    status: str
    outcome: str | None
    finished_at: datetime | None
    details: dict[str, Any]


class ReproductionReport(BaseModel):
    request: int | None
    runs: list[ReproductionRun]
