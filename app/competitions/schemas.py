from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.competitions.dates import EndInstant, StartInstant
from app.models.types import MAX_INT

# A single-label classification competition's label set, as the host gives it.
Label = Annotated[str, Field(min_length=1, max_length=200)]
LabelSet = Annotated[
    list[Label] | None,
    Field(
        min_length=1,
        max_length=1000,
        description="single-label classification only: the labels a prediction may hold "
        "(default: the answer key's labels)",
    ),
]

# What participants see of public scores (issue 13): exact scores, or Blum & Hardt's Ladder with
# a fixed step (``ladder_step``, default 1/sqrt(n_public)) or parameter-free.
BoardMode = Literal["exact", "ladder", "ladder_free"]
# A competition's life (app.models.competition): a draft is its hosts' alone until published.
Status = Literal["draft", "published", "archived"]
LadderStep = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]


class MetricConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class CompetitionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,62}$")
    title: str = Field(min_length=1, max_length=200)
    description: str = ""
    # A draft is seen by its hosts only until it passes the launch checklist and is published;
    # without it a competition is published at once, as before drafts existed.
    status: Literal["draft", "published"] = "published"
    metric: MetricConfig
    id_column: str | None = None
    start: StartInstant | None = None
    team_merge_deadline: EndInstant | None = None
    deadline: EndInstant | None = None
    daily_submission_limit: int = Field(default=5, ge=1, le=10_000)
    total_submission_limit: int | None = Field(default=None, ge=1, le=MAX_INT)
    final_selection_limit: int = Field(default=2, ge=1, le=100)
    max_team_size: int = Field(default=5, ge=1, le=1000)
    score_decimals: int = Field(default=5, ge=0, le=15)
    labels: LabelSet = None
    # Seconds one scoring job may take (None: the server's PODIUM_SCORING_TIME_LIMIT_SECONDS).
    scoring_time_limit_seconds: int | None = Field(default=None, ge=1, le=86_400)
    public_board_mode: BoardMode = "exact"
    ladder_step: LadderStep | None = None
    score_intervals: bool = True

    @model_validator(mode="after")
    def _timeline_in_order(self) -> "CompetitionCreate":
        check_timeline(self.start, self.team_merge_deadline, self.deadline)
        return self


class CompetitionUpdate(BaseModel):
    """Settings an organiser may change; each change is written to the audit log."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = None
    start: StartInstant | None = None
    team_merge_deadline: EndInstant | None = None
    deadline: EndInstant | None = None
    daily_submission_limit: int | None = Field(default=None, ge=1, le=10_000)
    total_submission_limit: int | None = Field(default=None, ge=1, le=MAX_INT)
    final_selection_limit: int | None = Field(default=None, ge=1, le=100)
    max_team_size: int | None = Field(default=None, ge=1, le=1000)
    score_decimals: int | None = Field(default=None, ge=0, le=15)
    labels: LabelSet = None
    scoring_time_limit_seconds: int | None = Field(default=None, ge=1, le=86_400)
    public_board_mode: BoardMode | None = None
    ladder_step: LadderStep | None = None
    score_intervals: bool | None = None


def check_timeline(
    start: datetime | None, merge: datetime | None, deadline: datetime | None
) -> None:
    if start and deadline and deadline <= start:
        raise ValueError("deadline must come after start")
    if merge and deadline and merge > deadline:
        raise ValueError("team_merge_deadline must not come after deadline")
    if merge and start and merge < start:
        raise ValueError("team_merge_deadline must not come before start")


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
    status: Status = "published"
    metric: MetricConfig
    direction: str
    id_column: str | None
    columns: list[str] | None
    start: datetime
    team_merge_deadline: datetime | None
    deadline: datetime | None
    daily_submission_limit: int
    total_submission_limit: int | None
    final_selection_limit: int
    max_team_size: int
    score_decimals: int
    public_board_mode: BoardMode = "exact"
    ladder_step: float | None = None
    score_intervals: bool = True
    has_answer_key: bool
    has_metric_file: bool | None = None
    labels: list[str] | None = Field(
        default=None,
        description="single-label classification: the labels a prediction may hold; a file "
        "with any other is refused at upload",
    )
    created_at: datetime


class ChecklistItem(BaseModel):
    key: str
    ok: bool
    detail: str


class Checklist(BaseModel):
    """The launch checklist: publishing needs every item ``ok``."""

    ready: bool
    items: list[ChecklistItem]


class HostCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = Field(min_length=1, max_length=64)


class HostPublic(BaseModel):
    user: str
    role: str  # "owner" or "cohost"
    added_at: datetime
