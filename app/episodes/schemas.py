from datetime import datetime

from pydantic import BaseModel


class SeatPublic(BaseModel):
    """One agent's seat in an episode: anyone's to see (the board shows the same)."""

    position: int
    submission_id: int
    team: str
    status: str | None
    reward: float | None
    mu_before: float | None
    sigma_before: float | None
    mu_after: float | None
    sigma_after: float | None


class EpisodePublic(BaseModel):
    id: int
    kind: str  # "validation" or "ladder"
    status: str  # queued, running, done, failed
    created_at: datetime
    finished_at: datetime | None
    steps: int | None
    agents: list[SeatPublic]
