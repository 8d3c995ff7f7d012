from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

Board = Literal["public", "private"]


class LeaderboardRow(BaseModel):
    rank: int | None  # None for baseline entries, which show but never take a rank
    team: str
    score: float
    entries: int
    last_submission_at: datetime
    baseline: bool = False
    # Bootstrap 95 % interval of the score ({low, high, bca_low, bca_high, se, level,
    # replicates}) and rank band (1 + teams significantly better, Holm); None on a Ladder board,
    # for metrics without intervals, or while they are being computed.
    interval: dict[str, float | int] | None = None
    band: int | None = None
    # Every column the reader may see: its key → this row's value on this board.
    scores: dict[str, float | None] = Field(default_factory=dict)
    # The entry details the phase shows on its board (method name, ...): participants' words.
    details: dict[str, Any] = Field(default_factory=dict)
    # A simulation phase's row: the agent's skill (μ, σ) and the episodes it played; its score is
    # the conservative skill μ − kσ and its interval μ ± σ.
    mu: float | None = None
    sigma: float | None = None
    episodes: int | None = None
    # ... and its agent (a submission), whose public page is /c/{slug}/agents/{agent}.
    agent: int | None = None
    # The answer key version this row was scored on: the board's on a competition's board; on a
    # benchmark's, each row's own (the newest published one that scored it).
    key_version: int | None = None
    # A benchmark board of every submission: the row's submission and when it was made.
    submission: int | None = None
    submitted_at: datetime | None = None


class Leaderboard(BaseModel):
    competition: str
    phase: str | None = None
    board: Board
    metric: str
    direction: str
    # The board's columns (key, title, metric, direction, ...), the first ranking; ``sort`` the
    # one this page is ranked by.
    columns: list[dict[str, Any]] = Field(default_factory=list)
    # A multi-task phase's tasks ({key, title}); each column names its ``task`` (None: the
    # phase's own aggregates). ``task``: the one task this page shows (None: all side by side).
    tasks: list[dict[str, str]] = Field(default_factory=list)
    task: str | None = None
    sort: str | None = None
    answer_key_version: int | None
    # A benchmark's board (rows of several key versions), and whether it shows every submission.
    benchmark: bool = False
    every_submission: bool = False
    score_decimals: int | None  # None: full precision (an organiser's view)
    tie_break: str = (
        "equal scores: the next columns in order, then the team whose scoring submission came "
        "first ranks higher"
    )
    total: int = 0  # rows on the whole board, baselines included
    limit: int = 100
    offset: int = 0
    public_board_mode: str = "exact"
    # How many of the board's best-ranked rows the rank bands cover (the queue computes them
    # after each score, for up to 5,000 teams); None where the board shows no bands.
    bands_cover: int | None = None
    rows: list[LeaderboardRow]
    # The caller's team's row wherever it stands, on this page or not (None: not on the board).
    own_row: LeaderboardRow | None = None


class RankChange(BaseModel):
    team: str
    old_rank: int | None
    new_rank: int | None
    old_score: float | None
    new_score: float | None


class RescorePreview(BaseModel):
    from_version: int
    to_version: int
    pending: int  # submissions not yet scored against the new version
    public: list[RankChange]
    private: list[RankChange]


class RescoreStarted(BaseModel):
    version: int
    queued: int


class BanRequest(BaseModel):
    team: str
    reason: str = ""
