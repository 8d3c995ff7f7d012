"""A competition as a bundle describes it, after the reader and before the database.

Every reader (EvalAI, Codabench v2, CodaLab v1.5) builds these frozen objects and nothing else;
the exporter writes a Codabench bundle from them; the service turns them into rows. Nothing past a
reader knows which format a competition came from, except through ``Program.kind``, which says how
its scoring program must be run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Direction = Literal["maximize", "minimize"]
Board = Literal["public", "hidden", "blind"]
Counts = Literal["best", "last", "chosen"]
Visibility = Literal["public", "private", "hidden"]
ComputedOp = Literal["mean", "sum", "min", "max", "average_rank"]
FieldType = Literal["text", "boolean", "choice"]
ProgramKind = Literal["evalai", "codabench", "codalab"]
PageKind = Literal["terms", "evaluation", "data", "page"]
PageFormat = Literal["html", "markdown"]
# The most submissions a day a phase holds: "no daily limit" (Codabench's 0, EvalAI's 100,000).
NO_DAILY_LIMIT = 10_000


@dataclass(frozen=True)
class BundleFile:
    """One file of a data member (an answer key, a scoring program), path relative to it."""

    path: str
    data: bytes = field(repr=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Page:
    title: str
    content: str  # sanitised HTML, or Markdown (rendered and sanitised where it is shown)
    format: PageFormat = "html"
    kind: PageKind = "page"


@dataclass(frozen=True)
class MetricRef:
    """A column computed by Podium's own catalogue (only Podium's exports carry these)."""

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass(frozen=True)
class Computed:
    op: ComputedOp
    of: tuple[str, ...]


@dataclass(frozen=True)
class Column:
    """A leaderboard column. Exactly one of ``metric`` / ``computed`` is set, or neither: then the
    scoring program writes the value under ``source_key`` (EvalAI label, Codabench column key)."""

    key: str
    title: str
    direction: Direction
    # Decimals shown; None: unset (Podium's own competitions), shown at the competition's
    # score_decimals, and exported and imported back unset.
    precision: int | None = 2
    hidden: bool = False
    source_key: str | None = None
    metric: MetricRef | None = None
    computed: Computed | None = None

    @property
    def program_key(self) -> str:
        return self.source_key if self.source_key is not None else self.key


@dataclass(frozen=True)
class EntryField:
    key: str
    title: str
    type: FieldType = "text"
    options: tuple[str, ...] = ()
    required: bool = False
    on_board: bool = False


@dataclass(frozen=True)
class Split:
    """A part of the answer key with its own board: EvalAI's dataset split, or Podium's Usage."""

    key: str  # what the program returns the split's scores under (EvalAI's split codename)
    title: str
    visibility: Visibility


@dataclass(frozen=True)
class Program:
    """An imported scoring program, run as its platform runs it (see ``app.bundles.runner``)."""

    kind: ProgramKind
    files: tuple[BundleFile, ...]
    # Codabench / CodaLab: the ``metadata`` command, $variables as written. EvalAI: None (the
    # package's ``evaluate()`` is called).
    command: str | None = None
    docker_image: str | None = None
    python2: bool = False

    def file(self, path: str) -> BundleFile | None:
        return next((f for f in self.files if f.path == path), None)


@dataclass(frozen=True)
class Ingestion:
    """Codabench's ingestion program (CodaLab's too): run on a code submission before the scoring
    program, with the participant's code at ``/app/ingested_program`` and ``input_data`` at
    ``/app/input_data``; what it writes to ``/app/output`` is what the scoring program scores."""

    command: str  # its ``metadata`` command, $variables as written
    files: tuple[BundleFile, ...]
    input_data: tuple[BundleFile, ...] = ()
    # The bundle's hide_output / hide_prediction_output: the team does not see the run's log.
    hide_log: bool = False


@dataclass(frozen=True)
class Task:
    """One task of a multi-task phase (Codabench's ``phases[].tasks`` naming several): its own
    columns (the first ranks within the task), reference data and scoring program."""

    key: str  # a slug: its columns are "{key}.{column}" on the phase's board
    title: str
    columns: tuple[Column, ...]
    answer_key: tuple[BundleFile, ...] = ()
    scorer: Program | None = None
    ingestion: Ingestion | None = None  # code submissions run it first, task by task


@dataclass(frozen=True)
class Phase:
    name: str  # a slug
    title: str
    start: datetime | None
    end: datetime | None  # None: open-ended (a last phase without an end)
    description: str = ""
    daily_submission_limit: int | None = None
    total_submission_limit: int | None = None
    board: Board = "public"
    counts: Counts = "best"
    final_selection_limit: int | None = None
    entry_fields: tuple[EntryField, ...] = ()
    # Columns of this phase when they differ from the competition's (EvalAI: one schema a phase).
    columns: tuple[Column, ...] | None = None
    ranking: str | None = None  # the ranking column of ``columns`` when they are overridden
    splits: tuple[Split, ...] = ()
    answer_key: tuple[BundleFile, ...] = ()
    scorer: Program | None = None
    # What the program is told the phase is called (EvalAI's codename passed to evaluate()).
    program_phase: str | None = None
    execution_time_limit: int | None = None  # seconds
    ingestion: Ingestion | None = None  # code submissions run it first (Codabench, CodaLab)
    # Submissions carried in when it opens: (phase name, "last" | "selected").
    migrate: tuple[str, str] | None = None
    # A multi-task phase's tasks; ``columns`` then holds its aggregates (average_rank, ...)
    # over the tasks' columns, and ``answer_key`` / ``scorer`` are unset.
    tasks: tuple[Task, ...] = ()


@dataclass(frozen=True)
class DataFile:
    """A data file the hosts published: ``public`` for participants to download, ``hidden`` an
    input of code runs only. Podium's exports carry them (Codabench's keys cannot)."""

    name: str
    data: bytes = field(repr=False)
    visibility: Literal["public", "hidden"] = "public"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Competition:
    title: str
    slug: str
    description: Page
    pages: tuple[Page, ...]
    columns: tuple[Column, ...]
    ranking: str
    phases: tuple[Phase, ...]
    source_format: Literal["evalai", "codabench", "codalab"]
    logo: BundleFile | None = None
    docker_image: str | None = None
    warnings: tuple[str, ...] = ()
    data_files: tuple[DataFile, ...] = ()
    # Where the competition came from: {"format", "file", "sha256", "imported_at"} of the
    # bundle first imported (an export carries it, so export → import keeps it); None: made here.
    origin: dict[str, Any] | None = field(default=None, compare=False)
    # What an export could not carry (a stored file gone missing), listed in the bundle.
    missing: tuple[str, ...] = ()
    # Who takes part: "approval" where the platform's hosts approved each participant
    # (Codabench's registration_auto_approve false, CodaLab's has_registration true).
    registration: Literal["open", "approval"] = "open"
    # A competition that never ends, its new key versions rescoring every submission (Codabench's
    # competition_type "benchmark"; app.competitions.benchmark).
    benchmark: bool = False
    # A benchmark's board of every scored submission, not each team's best (Podium's own: the
    # ``podium:`` mapping carries it).
    board_every_submission: bool = False

    def phase_columns(self, phase: Phase) -> tuple[tuple[Column, ...], str]:
        if phase.columns is not None:
            return phase.columns, phase.ranking or phase.columns[0].key
        return self.columns, self.ranking

    def page(self, kind: PageKind) -> Page | None:
        return next((p for p in self.pages if p.kind == kind), None)
