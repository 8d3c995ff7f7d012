"""What participants send and see about teams and invitations. Names, never internal user ids."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.models import InvitationStatus


class InvitationCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = Field(min_length=1, max_length=64, description="the name of the user to invite")


class InvitationSent(BaseModel):
    """A pending invitation as its team sees it."""

    id: int
    user: str
    created_at: datetime


class NoticePublic(BaseModel):
    """Something that changed for the team without its doing (``kind``: ``selections_cleared``,
    ``selections_kept``, ``selection_late``)."""

    kind: str
    message: str
    created_at: datetime


class TeamPublic(BaseModel):
    id: int
    name: str
    leader: str | None
    members: list[str]
    pending_invitations: list[InvitationSent]
    notices: list[NoticePublic] = Field(
        default_factory=list, description="the latest notices, newest first"
    )


class InvitationPublic(BaseModel):
    id: int
    competition: str
    team: str
    inviter: str
    invitee: str
    status: InvitationStatus
    created_at: datetime
    responded_at: datetime | None
