"""A simulation phase's board: each team's best active agent, ranked by its conservative skill
μ − kσ (the host's k), with μ ± σ as its interval, its episodes, and rank bands from the ratings'
uncertainty. The same board public and private: episodes have no split."""

import math
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import AgentRating, Phase, Submission, Team
from app.simulation.settings import SimulationSettings

# Team j is surely better than team i when μj − μi exceeds this many standard deviations of
# the difference (≈ 95 %, one-sided 97.5 %): the band is 1 + the teams surely better.
BAND_Z = 1.96


@dataclass(frozen=True)
class SimRow:
    team_id: int
    team: str
    submission_id: int
    mu: float
    sigma: float
    episodes: int
    score: float
    entries: int
    last_submission_at: datetime
    rank: int = 0
    band: int = 1


def standings(session: Session, phase: Phase) -> list[SimRow]:
    """The whole board, best first; ties broken by more episodes, then the older agent."""
    k = SimulationSettings.model_validate(phase.simulation or {}).k
    rows = session.execute(
        select(AgentRating, Team.name, Submission.created_at)
        .join(Team, Team.id == AgentRating.team_id)
        .join(Submission, Submission.id == AgentRating.submission_id)
        .where(AgentRating.phase_id == phase.id, AgentRating.active.is_(True))
    ).all()
    best: dict[int, SimRow] = {}
    entries: dict[int, int] = {}
    for rating, name, created in rows:
        entries[rating.team_id] = entries.get(rating.team_id, 0) + 1
        row = SimRow(
            team_id=rating.team_id,
            team=name,
            submission_id=rating.submission_id,
            mu=rating.mu,
            sigma=rating.sigma,
            episodes=rating.episodes,
            score=rating.mu - k * rating.sigma,
            entries=0,
            last_submission_at=created,
        )
        held = best.get(rating.team_id)
        if held is None or _key(row) < _key(held):
            best[rating.team_id] = row
    ordered = sorted(best.values(), key=_key)
    ranked = []
    for index, row in enumerate(ordered):
        better = sum(
            1
            for other in ordered
            if other.mu - row.mu > BAND_Z * math.hypot(other.sigma, row.sigma)
        )
        ranked.append(
            SimRow(
                **{
                    **row.__dict__,
                    "entries": entries[row.team_id],
                    "rank": index + 1,
                    "band": 1 + better,
                }
            )
        )
    return ranked


def _key(row: SimRow) -> tuple[float, int, int]:
    return (-row.score, -row.episodes, row.submission_id)
