from datetime import datetime

from pydantic import BaseModel, ConfigDict

from app.models import Role


class UserPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    role: Role


class TokenPublic(BaseModel):
    """One of the caller's tokens: its id and first characters, never the secret."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    prefix: str
    created_at: datetime
    revoked_at: datetime | None
