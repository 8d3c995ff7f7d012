"""Requests and answers of the account and admin API."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.models import Role, UserState


class SignUp(BaseModel):
    name: str = Field(max_length=64, description="the public user name, e.g. ada_l")
    email: str = Field(max_length=320, description="where the verification link goes")
    password: str = Field(max_length=1024, description="at least 10 characters")
    invitation: str | None = Field(
        default=None, max_length=200, description="the invitation link's token, in invite mode"
    )


class Accepted(BaseModel):
    """The same answer whatever the server knows of the address (no enumeration)."""

    status: str
    detail: str


class LinkToken(BaseModel):
    token: str = Field(max_length=200)


class ResetRequest(BaseModel):
    email: str = Field(max_length=320)


class ResetConfirm(BaseModel):
    token: str = Field(max_length=200)
    password: str = Field(max_length=1024)


class EmailChange(BaseModel):
    email: str = Field(max_length=320)
    password: str | None = Field(default=None, max_length=1024)


class PasswordChange(BaseModel):
    current_password: str | None = Field(default=None, max_length=1024)
    new_password: str = Field(max_length=1024)


class DeleteAccount(BaseModel):
    password: str | None = Field(default=None, max_length=1024)
    confirm: Literal["delete my account"] = Field(
        description='the words "delete my account", so that nobody leaves by accident'
    )


class AccountPublic(BaseModel):
    """The caller's own account (the address is theirs to see)."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    role: Role
    email: str | None
    email_verified_at: datetime | None
    pending_email: str | None
    may_take_part: bool


class UserAdmin(BaseModel):
    """A user as the site's admins see them."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    role: Role
    state: UserState
    email: str | None
    pending_email: str | None
    email_verified_at: datetime | None
    created_at: datetime


class UserChange(BaseModel):
    role: Role | None = None
    state: Literal["active", "disabled"] | None = Field(
        default=None, description="disabled: every session and token stops at once"
    )


class InvitationCreate(BaseModel):
    uses: int = Field(default=1, ge=1, le=10_000, description="how many accounts it may make")
    days: float = Field(default=14, gt=0, le=365, description="how long it works")
    email: str | None = Field(default=None, max_length=320, description="only for this address")


class InvitationPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    prefix: str
    email: str | None
    uses_left: int
    expires_at: datetime
    created_at: datetime


class InvitationMade(InvitationPublic):
    link: str  # shown this once


class AuditPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    action: str
    target: str
    actor: str | None
    created_at: datetime
    detail: dict[str, object] | None
