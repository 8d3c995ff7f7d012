from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.notifications.preferences import Kind


class NotificationSettingsPublic(BaseModel):
    """What I hear about (each kind on or off), and whether by mail at all."""

    choices: dict[str, bool]
    mail: bool
    kinds: dict[str, str] = Field(description="what each kind is about")


class NotificationSettingsUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    choices: dict[Kind, bool] = Field(default_factory=dict, max_length=20)
    mail: bool | None = None


class NotificationPublic(BaseModel):
    id: int
    kind: str
    title: str
    body: str
    link: str
    created_at: datetime
