"""Who plays whom next: each agent its fair share, against agents of similar skill, with some
exploration. Pure: plain values in, the seats of one episode out.

The agent that has played (or is about to play) the fewest episodes takes the first seat, so
every active agent gets the same share whatever its skill, and a new agent catches up first. Its
opponents are, with probability ``explore``, drawn at random from all others (a rating stuck in a
corner of the table still meets the rest); else drawn among the ``window`` agents whose μ is
closest to its own, where an episode tells the most about both. Agents of the first seat's team
are taken only when there are not enough others.
"""

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Entrant:
    submission_id: int
    team_id: int
    mu: float
    sigma: float
    played: int  # episodes played, plus those waiting or running


def choose(
    entrants: list[Entrant],
    players: int,
    rng: random.Random,
    *,
    explore: float = 0.1,
    window: int = 4,
) -> list[Entrant] | None:
    """The seats of one episode (first: the least played), or None with too few agents."""
    if len(entrants) < players:
        return None
    fewest = min(e.played for e in entrants)
    first = rng.choice([e for e in entrants if e.played == fewest])
    others = [e for e in entrants if e.submission_id != first.submission_id]
    rivals = [e for e in others if e.team_id != first.team_id]
    pool = rivals if len(rivals) >= players - 1 else others
    if rng.random() < explore:
        chosen = rng.sample(pool, players - 1)
    else:
        near = sorted(pool, key=lambda e: (abs(e.mu - first.mu), e.played))
        chosen = rng.sample(near[: max(window, players - 1)], players - 1)
    seats = [first, *chosen]
    rng.shuffle(seats)  # who moves first is part of the draw, as on Kaggle
    return seats
