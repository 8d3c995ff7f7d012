from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.models import SubmissionStatus


class SubmissionAccepted(BaseModel):
    id: int
    status: SubmissionStatus
    # The upload's entry in the record, signed by the server (app.ledger.service.receipt).
    receipt: dict[str, Any] | None = None


class CodeAttached(BaseModel):
    submission_id: int
    sha256: str
    # The attachment's entry in the record, signed (app.ledger.service.receipt).
    receipt: dict[str, Any]


class SubmissionPublic(BaseModel):
    """A participant's view: no private score before the deadline, no host-only error."""

    id: int
    status: SubmissionStatus
    public_score: float | None
    error: str | None
    created_at: datetime
    description: str = ""
    selected: bool = False
    late: bool = False
    # On a Ladder board ``public_score`` is what the Ladder showed after this submission and
    # ``released`` whether it moved the board; exact boards give the interval instead.
    released: bool | None = None
    public_interval: dict[str, float | int] | None = None
    # The phase it was filed into, and every column's value (``public_score`` stays the ranking
    # column's): {column key: {"public": ..., "private": ...}}, private None until revealed.
    phase: str | None = None
    scores: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    # The entry details the phase asked for at upload (method name, URLs, host-defined fields).
    details: dict[str, Any] | None = None
    # A code submission's failure by name (timeout, memory, runtime_error, no_output,
    # invalid_output, output_too_large); ``error`` says it in Kaggle's words and ours.
    failure: str | None = None
    # While queued: 1 when it is the next to be scored or run (every queued submission counts).
    queue_position: int | None = None
    # Why no score is shown though one may exist, in words (a blind phase before its end).
    score_note: str | None = None
    # Carried from another phase when this one opened (app.competitions.migration): the id of
    # the submission it copies; None: uploaded into this phase.
    migrated_from: int | None = None


class SubmissionRevealed(SubmissionPublic):
    """A participant's view once the deadline has passed."""

    private_score: float | None
    private_interval: dict[str, float | int] | None = None


class SubmissionHost(SubmissionRevealed):
    """An organiser's view."""

    team: str
    user: str
    score: float | None
    host_error: str | None
    # What the metric adds to a score (a confusion matrix, ...), for hosts.
    metric_details: dict[str, Any] | None
    filename: str
    size_bytes: int
    started_at: datetime | None
    finished_at: datetime | None
    hidden: bool
    baseline: bool
    refunded: bool


class ScoreVersion(BaseModel):
    version: int
    published: bool
    score: float | None
    public_score: float | None
    private_score: float | None
    details: dict[str, Any] | None
    created_at: datetime


class QuotaPublic(BaseModel):
    phase: str | None = None
    used_today: int
    daily_limit: int
    remaining_today: int
    resets_at: datetime
    used_total: int
    total_limit: int | None


# Which of the three a caller gets is decided by app.submissions.visibility.
SubmissionView = SubmissionHost | SubmissionRevealed | SubmissionPublic


class HideRequest(BaseModel):
    reason: str = ""


class RunLogPublic(BaseModel):
    """A code submission's run: stdout and stderr together (the first 8 KB and the last 64 KB,
    a line saying how much was left out between), why it failed, and what makes it reproducible.
    ``log`` is None until the code has run."""

    submission_id: int
    status: str
    failure: str | None
    kaggle_words: str | None
    log: str | None
    total_bytes: int | None
    truncated: bool
    code_sha256: str | None
    inputs_sha256: str | None
    runtime_fingerprint: str | None
