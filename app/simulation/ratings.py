"""Skill ratings: openskill's Weng–Lin model (Plackett–Luce), the same for two or n players.

Weng, R. C. and Lin, C.-J. (2011), "A Bayesian Approximation Method for Online Ranking", JMLR 12.
Each agent's skill is a Gaussian (μ, σ); an episode's rewards rank its agents (higher is better,
equal rewards tie, an agent that failed — reward None — is last) and move every μ and shrink every
σ. The board ranks by the conservative skill μ − kσ. Pure: no database, no process.
"""

from dataclasses import dataclass
from functools import cache
from typing import Any

MU0 = 25.0  # openskill's prior, which the model publishes: μ₀ = 25, σ₀ = μ₀ / 3
SIGMA0 = MU0 / 3


@dataclass(frozen=True)
class Skill:
    mu: float
    sigma: float

    def conservative(self, k: float) -> float:
        return self.mu - k * self.sigma


@cache
def _model() -> Any:
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=MU0, sigma=SIGMA0)


def ranks(rewards: list[float | None]) -> list[int]:
    """Kaggle's rewards as ranks (1 is best): higher reward first, ties share a rank, None last."""
    present = sorted({r for r in rewards if r is not None}, reverse=True)
    worst = len(present) + 1
    return [worst if r is None else present.index(r) + 1 for r in rewards]


def rate(skills: list[Skill], rewards: list[float | None]) -> list[Skill]:
    """Each agent's skill after one episode in which it earned ``rewards[i]``. Two seats of the
    same agent (a validation episode) are not rated: the caller rates distinct agents only."""
    model = _model()
    teams = [[model.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
    rated = model.rate(teams, ranks=ranks(rewards))
    return [Skill(team[0].mu, team[0].sigma) for team in rated]
