from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.coderun.limits import CodeLimits
from app.competitions.benchmark import benchmark_problems
from app.competitions.dates import EndInstant, StartInstant
from app.entry.lists import AccessList
from app.models.types import MAX_INT
from app.simulation.environments import EnvironmentConfig
from app.simulation.settings import SimulationSettings

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


# A column's, a phase's and an entry field's names appear in URLs, CSV headers and sort params.
ColumnKey = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")]
PhaseName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
BoardRule = Literal["public", "hidden", "blind"]
CountingRule = Literal["best", "last", "chosen"]
SubmissionKind = Literal["predictions", "code", "simulation"]
MAX_PHASES = 20
# Who takes part (app.registration): join at once, ask the hosts, or be invited.
RegistrationMode = Literal["open", "approval", "invite"]
MAX_RULES = 100_000


class ComputedConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # average_rank: each input's rank among the board's rows, averaged (a multi-task phase's
    # aggregate over its tasks' columns, named "{task}.{column}").
    op: Literal["mean", "sum", "min", "max", "average_rank"]
    of: list[ColumnKey] = Field(min_length=1, max_length=20)


class ColumnConfig(BaseModel):
    """One leaderboard column: a catalogue metric, computed from columns before it, or written
    by the phase's imported scoring program (``scorer: program``, stating its ``direction``;
    ``source_key`` is the name the program writes it under, default the key)."""

    model_config = ConfigDict(extra="forbid")

    key: ColumnKey
    title: str | None = Field(default=None, min_length=1, max_length=200)
    metric: MetricConfig | None = None
    computed: ComputedConfig | None = None
    scorer: Literal["program"] | None = None
    source_key: str | None = Field(default=None, min_length=1, max_length=200)
    # Required of a program's column; a metric's or a computed column's must agree if given.
    direction: Literal["maximize", "minimize"] | None = None
    # Digits shown on pages and CSVs; stored and ranked at full precision.
    precision: int | None = Field(default=None, ge=0, le=15)
    # Scored and shown to hosts only (a diagnostic column).
    hidden: bool = False


Columns = Annotated[list[ColumnConfig], Field(min_length=1, max_length=20)]
# A task's key is the first part of its columns' names on the phase's board ("{task}.{column}").
TaskKey = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,31}$")]
MAX_TASKS = 10


class TaskConfig(BaseModel):
    """One task of a multi-task phase (Codabench's ``tasks``): its own columns, scored by its
    own imported program on its own reference data (the phase's answer key holds each task's
    under ``{key}/``)."""

    model_config = ConfigDict(extra="forbid")

    key: TaskKey
    title: str | None = Field(default=None, min_length=1, max_length=200)
    columns: Columns


STANDARD_FIELDS = ("method_name", "method_description", "project_url", "publication_url")


class EntryField(BaseModel):
    """A detail the uploader gives with a submission (EvalAI's submission meta attributes)."""

    model_config = ConfigDict(extra="forbid")

    key: ColumnKey
    title: str | None = Field(default=None, max_length=200)
    type: Literal["text", "boolean", "choice"] = "text"
    options: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        default=None, min_length=1, max_length=100
    )
    required: bool = False
    on_board: bool = False

    @model_validator(mode="after")
    def _options_for_choice(self) -> "EntryField":
        if (self.type == "choice") != (self.options is not None):
            raise ValueError("a 'choice' field needs 'options', and only a choice field has them")
        return self


class MigrateConfig(BaseModel):
    """Submissions carried into a phase when it opens: each team's last scored one, or the ones
    it selected (its latest scored when it selected none), from the phase named."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: PhaseName = Field(alias="from")
    take: Literal["last", "selected"] = "selected"


class PhaseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: PhaseName
    title: str | None = Field(default=None, min_length=1, max_length=200)
    start: StartInstant | None = None
    end: EndInstant | None = None
    # Quotas left out take the competition's (its daily_submission_limit, ...). A phase's daily
    # limit of 0 takes no upload of its own (CodaLab's reading of 0; migrated entries only).
    daily_submission_limit: int | None = Field(default=None, ge=0, le=10_000)
    total_submission_limit: int | None = Field(default=None, ge=1, le=MAX_INT)
    final_selection_limit: int | None = Field(default=None, ge=1, le=100)
    board: BoardRule = "public"
    counts: CountingRule = "chosen"
    columns: Columns | None = None
    # A multi-task phase: its tasks, side by side on its board; ``columns`` then holds the
    # phase's aggregates over the tasks' columns (e.g. average_rank), the first ranking.
    tasks: list[TaskConfig] | None = Field(default=None, min_length=2, max_length=MAX_TASKS)
    entry_fields: list[EntryField] = Field(default_factory=list, max_length=20)
    # "code": participants send a script, notebook or zip that runs in the jail on the data files.
    submission_kind: SubmissionKind = "predictions"
    code_limits: CodeLimits | None = None
    # "simulation": participants send agents that play episodes of this environment.
    environment: EnvironmentConfig | None = None
    simulation: SimulationSettings | None = None
    migrate: MigrateConfig | None = None

    @model_validator(mode="after")
    def _end_after_start(self) -> "PhaseConfig":
        if self.start and self.end and self.end <= self.start:
            raise ValueError(f"phase '{self.name}': end must come after start")
        keys = [f.key for f in self.entry_fields]
        if len(set(keys)) != len(keys):
            raise ValueError(f"phase '{self.name}': duplicate entry field keys")
        tasks = [t.key for t in self.tasks or ()]
        if len(set(tasks)) != len(tasks):
            raise ValueError(f"phase '{self.name}': duplicate task keys")
        if self.tasks and self.submission_kind != "predictions":
            raise ValueError(f"phase '{self.name}': a multi-task phase takes predictions")
        return self


class PhaseUpdate(BaseModel):
    """What a host may change of a phase; each change is audited."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, min_length=1, max_length=200)
    start: StartInstant | None = None
    end: EndInstant | None = None
    daily_submission_limit: int | None = Field(default=None, ge=0, le=10_000)
    total_submission_limit: int | None = Field(default=None, ge=1, le=MAX_INT)
    final_selection_limit: int | None = Field(default=None, ge=1, le=100)
    board: BoardRule | None = None
    counts: CountingRule | None = None
    submission_kind: SubmissionKind | None = None
    code_limits: CodeLimits | None = None
    environment: EnvironmentConfig | None = None
    simulation: SimulationSettings | None = None
    migrate: MigrateConfig | None = None


class PhasePublic(BaseModel):
    name: str
    title: str
    start: datetime
    end: datetime | None
    state: Literal["upcoming", "open", "ended"]
    daily_submission_limit: int
    total_submission_limit: int | None
    final_selection_limit: int
    board: BoardRule
    counts: CountingRule
    columns: list[dict[str, Any]] | None
    # A multi-task phase's tasks: [{"key", "title", "columns"}]; None: a single-task phase.
    tasks: list[dict[str, Any]] | None = None
    entry_fields: list[dict[str, Any]]
    has_answer_key: bool
    submission_kind: SubmissionKind = "predictions"
    # A code phase's limits, the defaults filled in; None for a predictions phase.
    code_limits: CodeLimits | None = None
    # A simulation phase's environment and ladder settings (defaults filled in); None elsewhere.
    environment: EnvironmentConfig | None = None
    simulation: SimulationSettings | None = None
    # {"from": PHASE, "take": ...} and when it ran (None: not yet).
    migrate: dict[str, str] | None = None
    migrated_at: datetime | None = None


class CompetitionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,62}$")
    title: str = Field(min_length=1, max_length=200)
    description: str = ""
    # A draft is seen by its hosts only until it passes the launch checklist and is published;
    # without it a competition is published at once, as before drafts existed.
    status: Literal["draft", "published"] = "published"
    # One metric (one column named after it), or several leaderboard columns: not both.
    metric: MetricConfig | None = None
    columns: Columns | None = None
    # One window (start, deadline: one phase named "main"), or several phases: not both.
    phases: list[PhaseConfig] | None = Field(default=None, min_length=1, max_length=MAX_PHASES)
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
    registration: RegistrationMode = "open"
    rules: str = Field(default="", max_length=MAX_RULES)
    allow: AccessList = None
    deny: AccessList = None
    # A benchmark never ends; a new key version rescores every scored submission
    # (app.competitions.benchmark). Its boards may show every scored submission.
    benchmark: bool = False
    board_every_submission: bool = False

    @model_validator(mode="after")
    def _timeline_in_order(self) -> "CompetitionCreate":
        problems = benchmark_problems(
            benchmark=self.benchmark,
            every_submission=self.board_every_submission,
            public_board_mode=self.public_board_mode,
            deadline=self.deadline,
            phase_ends=[(p.name, p.end) for p in self.phases or []],
        )
        if problems:
            raise ValueError("; ".join(problems))
        if self.metric is not None and self.columns is not None:
            raise ValueError("give 'metric' or 'columns', not both: 'metric' is one column")
        if self.metric is None and self.columns is None:
            raise ValueError("give 'metric' (one column) or 'columns'")
        if self.phases is not None:
            both = [name for name in ("start", "deadline") if getattr(self, name) is not None]
            if both:
                raise ValueError(
                    f"give '{both[0]}' or 'phases', not both: each phase has its own start and end"
                )
            names = [p.name for p in self.phases]
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(f"duplicate phase name(s) in 'phases': {', '.join(repeated)}")
            return self
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
    registration: RegistrationMode | None = None
    # A change of the rules makes each participant accept them again before the next submission.
    rules: str | None = Field(default=None, max_length=MAX_RULES)
    allow: AccessList = None
    deny: AccessList = None
    benchmark: bool | None = None
    board_every_submission: bool | None = None


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
    # The answer key's file columns (id first); the board's columns are leaderboard_columns.
    columns: list[str] | None
    leaderboard_columns: list[dict[str, Any]] = Field(default_factory=list)
    phases: list[PhasePublic] = Field(default_factory=list)
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
    registration: RegistrationMode = "open"
    rules: str = ""
    rules_version: int = 0
    benchmark: bool = False
    board_every_submission: bool = False


class CompetitionImported(CompetitionPublic):
    """A bundle's competition as ``GET`` shows it, with what the import could not carry over
    or kept as the bundle says but looks wrong (``warnings``, one sentence each)."""

    warnings: list[str]
    dry_run: bool = False
    # The bundle it came from (format, file, sha256, imported_at); kept through export.
    origin: dict[str, Any] | None = None


class ChecklistItem(BaseModel):
    key: str
    ok: bool
    detail: str
    # The phase and the leaderboard column an item is about, if any.
    phase: str | None = None
    column: str | None = None


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
