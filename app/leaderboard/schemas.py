from datetime import datetime
from typing import Literal

from pydantic import BaseModel

Board = Literal["public", "private"]


class LeaderboardRow(BaseModel):
    rank: int
    team: str
    score: float
    entries: int
    last_submission_at: datetime


class Leaderboard(BaseModel):
    competition: str
    board: Board
    metric: str
    direction: str
    answer_key_version: int | None
    tie_break: str = "equal scores: the team whose scoring submission came first ranks higher"
    rows: list[LeaderboardRow]
