"""The official client's request and response messages (kagglesdk's ``competition_api_service``
types), as JSON with camelCase names. Unknown request fields are ignored, as the client's own
deserialiser does."""

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
)
from pydantic.alias_generators import to_camel

from app.competitions.dates import as_utc
from app.competitions.schemas import MAX_RULES

# A page's text: the description and the rules are bounded alike.
MAX_PAGE_CHARS = MAX_RULES


def _kaggle_time(value: datetime) -> str:
    # kagglesdk's DateTimeSerializer reads "YYYY-MM-DDTHH:MM:SS.mmmZ".
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


KaggleTime = Annotated[datetime, PlainSerializer(_kaggle_time, return_type=str)]


class Message(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Paged(Message):
    page: int | None = None
    page_token: str | None = None
    page_size: int | None = None


class ListCompetitionsRequest(Paged):
    search: str | None = None


class CompetitionRequest(Message):
    competition_name: str = Field(min_length=1, max_length=64)


class ListDataFilesRequest(CompetitionRequest, Paged):
    pass


class DownloadDataFileRequest(CompetitionRequest):
    file_name: str = Field(min_length=1, max_length=1000)


class StartSubmissionUploadRequest(CompetitionRequest):
    content_length: int = 0
    file_name: str = "submission.csv"


class CreateSubmissionRequest(CompetitionRequest):
    blob_file_tokens: str = Field(min_length=1, max_length=2000)
    submission_description: str | None = Field(default=None, max_length=1000)


class ListSubmissionsRequest(CompetitionRequest, Paged):
    pass


class GetSubmissionRequest(Message):
    ref: int = Field(ge=1, le=2**31 - 1)


class AddCompetitionHostRequest(CompetitionRequest):
    user_name: str = Field(min_length=1, max_length=64)


class ApiCompetitionHost(Message):
    id: int
    user_name: str
    display_name: str
    profile_url: str


class ApiListCompetitionHostsResponse(Message):
    hosts: list[ApiCompetitionHost]


class CompetitionSettings(Message):
    """kagglesdk's CompetitionSettings, the fields Podium has a meaning for."""

    title: str
    brief_description: str
    competition_name: str
    deadline: KaggleTime | None = None
    team_merger_explicit_deadline: KaggleTime | None = None
    disable_submissions: bool = False
    has_leaderboard: bool = True


class LaunchCompetitionRequest(CompetitionRequest):
    future_time: str | None = Field(default=None, max_length=64)


class DownloadSubmissionRequest(Message):
    submission_id: int = Field(ge=1, le=2**31 - 1)


class GetLeaderboardRequest(CompetitionRequest):
    page_token: str | None = None
    page_size: int | None = None


class ApiCompetition(Message):
    id: int
    ref: str
    title: str
    url: str
    description: str
    category: str
    reward: str = ""
    deadline: KaggleTime | None = None
    team_count: int
    user_has_entered: bool
    user_rank: int | None = None
    merger_deadline: KaggleTime | None = None
    enabled_date: KaggleTime
    max_daily_submissions: int
    max_team_size: int
    evaluation_metric: str
    submissions_disabled: bool
    host_name: str
    date_created: KaggleTime


class ListCompetitionsResponse(Message):
    competitions: list[ApiCompetition]
    next_page_token: str = ""


class ApiDataFile(Message):
    ref: str
    name: str
    description: str = ""
    total_bytes: int
    url: str
    creation_date: KaggleTime


class ListDataFilesResponse(Message):
    files: list[ApiDataFile]
    next_page_token: str = ""


class StartSubmissionUploadResponse(Message):
    token: str
    create_url: str


class CreateSubmissionResponse(Message):
    message: str
    ref: int


class ApiSubmission(Message):
    ref: int
    total_bytes: int
    date: KaggleTime
    description: str
    error_description: str
    file_name: str
    public_score: str
    private_score: str
    status: str  # kagglesdk SubmissionStatus: PENDING, COMPLETE or ERROR
    submitted_by: str
    team_name: str


class ListSubmissionsResponse(Message):
    submissions: list[ApiSubmission]
    next_page_token: str = ""


class ApiLeaderboardSubmission(Message):
    team_id: int
    team_name: str
    submission_date: KaggleTime
    score: str


class GetLeaderboardResponse(Message):
    submissions: list[ApiLeaderboardSubmission]
    next_page_token: str = ""


class ApiSubmissionLimits(Message):
    num_today: int
    num_total: int
    num_allowed_now: int
    limited_by_total: bool


# --- simulation competitions: episodes, replays, agent logs, a team's public submissions ------


class ListSubmissionEpisodesRequest(Message):
    submission_id: int = Field(ge=1, le=2**31 - 1)


class EpisodeRequest(Message):
    episode_id: int = Field(ge=1, le=2**31 - 1)


class EpisodeAgentLogsRequest(EpisodeRequest):
    agent_index: int = Field(default=0, ge=0, le=64)


class ApiEpisodeAgent(Message):
    submission_id: int
    index: int
    reward: float | None = None
    state: str  # kagglesdk EpisodeAgentState's name
    team_name: str | None = None
    team_id: int


class ApiEpisode(Message):
    id: int
    create_time: KaggleTime
    end_time: KaggleTime | None = None
    state: str  # kagglesdk EpisodeState: CREATED, COMPLETED, ERRORED
    type: str  # kagglesdk EpisodeType: EPISODE_TYPE_PUBLIC or EPISODE_TYPE_VALIDATION
    agents: list[ApiEpisodeAgent]


class ListSubmissionEpisodesResponse(Message):
    episodes: list[ApiEpisode]


class ListTeamPublicSubmissionsRequest(Message):
    team_id: int = Field(ge=1, le=2**31 - 1)


class ApiPublicSubmission(Message):
    id: int
    date_submitted: KaggleTime
    public_score: str


class ListTeamPublicSubmissionsResponse(Message):
    submissions: list[ApiPublicSubmission]


# --- host commands: create, data, solution, settings update, pages ---------------------------


def _instant(value: Any) -> Any:
    """kagglesdk writes an aware datetime as ``isoformat() + "Z"`` (``...+00:00Z``): the ``Z``
    after an offset is dropped; a bare ``...Z`` and a naive time are UTC."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z") and ("+" in text[10:] or "-" in text[10:-1]):
            text = text[:-1]
        return text
    return value


KaggleInstant = Annotated[datetime, BeforeValidator(_instant), AfterValidator(as_utc)]


class CreateCompetitionRequest(Message):
    """``kaggle competitions create``: competition-metadata.json as the client sends it."""

    title: str = Field(min_length=1, max_length=200)
    slug: str = Field(min_length=1, max_length=64)
    brief_description: str = Field(default="", max_length=10_000)
    privacy: str = Field(default="COMPETITION_PRIVACY_UNSPECIFIED", max_length=64)
    clone_competition_id: int | None = None
    hackathon: bool | None = None
    task_creation: bool | None = None


class CreateCompetitionResponse(Message):
    id: int
    ref: str
    url: str


class StartBlobUploadRequest(Message):
    type: str = Field(default="API_BLOB_TYPE_UNSPECIFIED", max_length=64)
    name: str = Field(default="", max_length=1000)
    content_length: int = Field(default=0, ge=0)


class StartBlobUploadResponse(Message):
    token: str
    create_url: str


class CompetitionDataFile(Message):
    name: str = Field(min_length=1, max_length=1000)
    token: str = Field(min_length=1, max_length=2000)


class CreateCompetitionDataRequest(CompetitionRequest):
    version_notes: str = Field(default="", max_length=10_000)
    files: list[CompetitionDataFile] = Field(min_length=1, max_length=200)
    competition_databundle_type: str = Field(
        default="COMPETITION_DATABUNDLE_TYPE_UNSPECIFIED", max_length=64
    )


class CreateCompetitionDataResponse(Message):
    url: str
    databundle_id: int


class CreateCompetitionSolutionRequest(CompetitionRequest):
    blob_token: str = Field(min_length=1, max_length=2000)


class SolutionFileInfo(Message):
    file_name: str | None = None
    file_size_bytes: int | None = None
    upload_date: KaggleTime | None = None
    total_rows: int | None = None
    public_rows: int | None = None
    private_rows: int | None = None


class CompetitionSolutionStatus(Message):
    ready: bool
    setup_error: str | None = None
    row_id_column_name: str | None = None
    solution_info: SolutionFileInfo | None = None


class SettingsValues(Message):
    """kagglesdk's CompetitionSettings as an update sends it: only what the mask names is read,
    and a field left out is at its default (the client leaves defaults out)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    title: str = Field(default="", max_length=200)
    deadline: KaggleInstant | None = None
    team_merger_explicit_deadline: KaggleInstant | None = None


class UpdateCompetitionSettingsRequest(CompetitionRequest):
    settings: SettingsValues = Field(default_factory=SettingsValues)
    update_mask: str = Field(default="", max_length=2000)


class CompetitionPage(Message):
    name: str = Field(default="", max_length=64)
    content: str = Field(default="", max_length=MAX_PAGE_CHARS)
    is_published: bool | None = None
    post_title: str | None = Field(default=None, max_length=200)
    mime_type: str | None = Field(default=None, max_length=100)


class ListCompetitionPagesRequest(CompetitionRequest):
    page_name: str | None = Field(default=None, max_length=64)


class ListCompetitionPagesResponse(Message):
    pages: list[CompetitionPage]


class CreateCompetitionPageRequest(CompetitionRequest):
    page: CompetitionPage = Field(default_factory=CompetitionPage)


class UpdateCompetitionPageRequest(CompetitionRequest):
    page_name: str = Field(min_length=1, max_length=64)
    page: CompetitionPage = Field(default_factory=CompetitionPage)
    update_mask: str = Field(default="", max_length=2000)


class DeleteCompetitionPageRequest(CompetitionRequest):
    page_name: str = Field(min_length=1, max_length=64)
