from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

Status = Literal["pending", "approved", "denied", "banned"]
Name = Annotated[str, Field(min_length=1, max_length=64)]


class JoinRequest(BaseModel):
    """What a participant may send with ``POST …/join`` (all optional)."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(default="", max_length=2000, description="a note for the hosts")
    accept_rules: bool = Field(
        default=False, description="I have read and accept the competition's rules"
    )
    invitation: str | None = Field(default=None, max_length=200)


class RegistrationPublic(BaseModel):
    """The caller's standing in one competition."""

    status: Status
    rules_version: int | None
    rules_accepted_at: datetime | None
    current_rules_version: int
    requested_at: datetime
    message: str = ""


class ParticipantPublic(BaseModel):
    """A registrant, as the hosts see them (the address is for hosts only)."""

    name: str
    email: str | None
    status: Status
    team: str | None
    joined_at: datetime
    submissions: int
    message: str
    rules_version: int | None
    rules_accepted_at: datetime | None
    decided_at: datetime | None


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(default="", max_length=2000)


class Decisions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    names: list[Name] = Field(min_length=1, max_length=1000)
    message: str = Field(default="", max_length=2000)


class InvitationCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uses: int = Field(default=1, ge=1, le=10_000)
    days: int = Field(default=14, ge=1, le=365)


class InvitationLink(BaseModel):
    url: str
    expires_at: datetime
    uses: int


def _all(value: object) -> object:
    return {} if value == "all" else value


class Audience(BaseModel):
    """Who an announcement is for: ``"all"`` (every approved participant), or a filter."""

    model_config = ConfigDict(extra="forbid")

    status: list[Status] = Field(default_factory=lambda: ["approved"], min_length=1, max_length=4)
    phase: str | None = Field(default=None, max_length=64)
    # Only those who submitted (true) or not (false), in ``phase`` if given.
    submitted: bool | None = None


class AnnouncementCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject: str = Field(min_length=1, max_length=200)
    body: str = Field(min_length=1, max_length=20_000)
    to: Annotated[Audience, BeforeValidator(_all)] = Field(default_factory=Audience)


class AnnouncementPublic(BaseModel):
    id: int
    subject: str
    body: str
    created_at: datetime
    author: str | None
