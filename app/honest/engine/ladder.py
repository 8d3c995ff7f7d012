"""The Ladder (Blum & Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning
Competitions", ICML 2015): a public board that only moves on a real improvement.

Algorithm 1 (fixed step η), on a loss ℓ (a score to maximise is negated):

    R₀ ← ∞ (or the host's baseline on the grid)
    for each submission fₜ:  if ℓ(fₜ) < Rₜ₋₁ − η then Rₜ ← [ℓ(fₜ)]_η else Rₜ ← Rₜ₋₁;  release Rₜ

where [x]_η rounds x to the nearest multiple of η. Algorithm 2 (parameter-free) replaces η by the
standard error of the paired difference with the team's best submission, s/√n (s the sample
standard deviation of the per-row loss differences; for AUC DeLong's paired standard error), and
rounds to the grid 1/n (:mod:`app.honest.engine.paired` computes that standard error, for the attack
simulation and for the service alike). A released value is always on its grid and never gets
worse.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def on_grid(value: float, step: float) -> float:
    """[value]_step: the nearest multiple of ``step``."""
    return float(step * np.round(value / step))


def default_step(n_public: int) -> float:
    return 1.0 / float(np.sqrt(n_public))


@dataclass(frozen=True)
class LadderState:
    """What a team has been shown: ``displayed`` (None before the first release) and which
    submission (an index or id; None for the baseline) the next one is compared with."""

    displayed: float | None = None
    best: object | None = None

    @classmethod
    def start(cls, baseline: float | None, grid: float) -> "LadderState":
        return cls(None if baseline is None else on_grid(baseline, grid), None)


def advance(
    state: LadderState,
    score: float,
    *,
    threshold: float,
    grid: float,
    greater_is_better: bool,
    submission: object = None,
) -> tuple[LadderState, bool]:
    """One Ladder step: release ``[score]_grid`` when it beats the displayed value by more than
    ``threshold``; returns the new state and whether this submission was released."""
    if not np.isfinite(score):
        return state, False
    sign = 1.0 if greater_is_better else -1.0
    if state.displayed is None or sign * (score - state.displayed) > threshold:
        return LadderState(on_grid(score, grid), submission), True
    return state, False


@dataclass(frozen=True)
class LadderRun:
    displayed: np.ndarray  # after each submission; NaN before the first release
    released: np.ndarray  # bool: this submission moved the board


def exact(scores: np.ndarray) -> LadderRun:
    """Today's board: every score shown as it is (a team's best is the best of these)."""
    scores = np.asarray(scores, dtype=np.float64)
    return LadderRun(scores.copy(), np.ones(scores.size, dtype=bool))


def _replay(
    scores: np.ndarray,
    threshold: Callable[[int, LadderState], float],
    *,
    grid: float,
    greater_is_better: bool,
    baseline: float | None,
) -> LadderRun:
    """A team's scores in submission order through :func:`advance`; the two Ladders differ only
    in the threshold each step must beat."""
    state = LadderState.start(baseline, grid)
    shown = np.full(len(scores), np.nan)
    released = np.zeros(len(scores), dtype=bool)
    for t, score in enumerate(np.asarray(scores, dtype=np.float64)):
        state, released[t] = advance(
            state,
            float(score),
            threshold=threshold(t, state),
            grid=grid,
            greater_is_better=greater_is_better,
            submission=t,
        )
        shown[t] = np.nan if state.displayed is None else state.displayed
    return LadderRun(shown, released)


def ladder(
    scores: np.ndarray,
    *,
    step: float,
    greater_is_better: bool,
    baseline: float | None = None,
) -> LadderRun:
    """Algorithm 1 over a team's scores in submission order."""
    return _replay(
        scores,
        lambda _t, _state: step,
        grid=step,
        greater_is_better=greater_is_better,
        baseline=baseline,
    )


def ladder_free(
    scores: np.ndarray,
    paired_se: Callable[[int, int | None], float],
    *,
    n: int,
    greater_is_better: bool,
    baseline: float | None = None,
) -> LadderRun:
    """Algorithm 2: ``paired_se(t, best)`` is the standard error of the difference between
    submission ``t`` and the current best (``best`` None: the baseline, or nothing yet)."""

    def threshold(t: int, state: LadderState) -> float:
        return 0.0 if state.displayed is None else paired_se(t, state.best)  # type: ignore[arg-type]

    return _replay(
        scores, threshold, grid=1.0 / n, greater_is_better=greater_is_better, baseline=baseline
    )
