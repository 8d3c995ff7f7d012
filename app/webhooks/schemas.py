from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EventName = Literal[
    "submission.scored",
    "submission.failed",
    "phase.opened",
    "phase.closed",
    "board.revealed",
    "registration.requested",
]


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=2000)
    events: list[EventName] = Field(min_length=1, max_length=6)


class WebhookPublic(BaseModel):
    id: int
    url: str
    events: list[str]
    created_at: datetime
    disabled_at: datetime | None
    disabled_reason: str | None
    failures_in_a_row: int


class WebhookCreated(WebhookPublic):
    """The endpoint, with its signing secret: shown this once."""

    secret: str


class AttemptPublic(BaseModel):
    at: datetime
    status_code: int | None
    error: str | None


class DeliveryPublic(BaseModel):
    id: int
    message_id: str
    event: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    next_attempt_at: datetime | None
    created_at: datetime
    delivered_at: datetime | None
    last_status: int | None
    last_error: str | None
    tries: list[AttemptPublic]
