from datetime import datetime
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


class MetricConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class CompetitionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,62}$")
    title: str = Field(min_length=1, max_length=200)
    description: str = ""
    metric: MetricConfig
    id_column: str | None = None
    deadline: AwareDatetime | None = None
    daily_submission_limit: int = Field(default=5, ge=1, le=10_000)
    final_selection_limit: int = Field(default=2, ge=1, le=100)


class AnswerKeyPublic(BaseModel):
    """What an organiser sees of a key version; the key's contents are never served."""

    model_config = ConfigDict(from_attributes=True)

    version: int
    id_column: str
    target_columns: list[str]
    n_rows: int
    n_public: int
    n_private: int
    sha256: str
    created_at: datetime
    published_at: datetime | None


class CompetitionPublic(BaseModel):
    slug: str
    title: str
    description: str
    metric: MetricConfig
    direction: str
    id_column: str | None
    columns: list[str] | None
    deadline: datetime | None
    daily_submission_limit: int
    final_selection_limit: int
    has_answer_key: bool
    created_at: datetime
