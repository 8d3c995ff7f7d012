"""The boosting attack on a public board (Blum & Hardt 2015, §3.1), vectorised.

The public labels are pure noise. The attacker submits k random vectors, keeps those whose
*shown* score beats chance (0.5), and finally submits their majority vote (accuracy) or the sum
of their scores (AUC). On an exact board the kept vectors are the ones that happen to agree with
the public labels, so the final submission overfits them; a Ladder board shows the same value for
nearly every submission and leaks almost nothing. The result is the final submission's *exact*
public score: how far above 0.5 the board let the attacker climb.
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np

from app.honest.engine import ladder as lad
from app.honest.engine.delong import paired_se_from_placements
from app.honest.engine.paired import mean_paired_se

Board = Literal["exact", "ladder", "ladder_free"]
AttackMetric = Literal["accuracy", "roc_auc"]
BOARDS: tuple[Board, ...] = ("exact", "ladder", "ladder_free")


@dataclass(frozen=True)
class AttackResult:
    board: str
    metric: str
    final: float  # exact public score of the attacker's final submission
    kept: int  # submissions whose shown score beat chance
    released: int  # submissions that moved the shown score


@dataclass(frozen=True)
class _Probe:
    """k probes on one set of public labels: exact scores and what the paired SE needs."""

    labels: np.ndarray
    vectors: np.ndarray  # (k, n): 0/1 guesses or real scores
    scores: np.ndarray  # (k,)
    parts: tuple[np.ndarray, ...]  # accuracy: (correct,); AUC: (V10, V01) placement values


def _probe(metric: AttackMetric, n: int, k: int, rng: np.random.Generator) -> _Probe:
    labels = rng.integers(0, 2, size=n).astype(np.int8)
    if metric == "accuracy":
        guesses = rng.integers(0, 2, size=(k, n)).astype(np.int8)
        correct = (guesses == labels).astype(np.float32)
        return _Probe(labels, guesses, correct.mean(axis=1, dtype=np.float64), (correct,))
    scores = rng.standard_normal((k, n))
    v10, v01 = _placements(labels == 1, scores)
    return _Probe(labels, scores, v10.mean(axis=1), (v10, v01))


def _placements(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placement values (V10 per positive, V01 per negative) of every row of ``scores``.

    One argsort per row; counts of the other class below (above) each sorted position are
    cumulative sums, scattered back to row order with ``put_along_axis``. Continuous scores
    (no ties), as the attack draws them.
    """
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    order = np.argsort(scores, axis=1)
    pos_sorted = positive[order]
    neg_below = np.cumsum(~pos_sorted, axis=1, dtype=np.int32)
    pos_above = n_pos - np.cumsum(pos_sorted, axis=1, dtype=np.int32)
    # At a positive's position: negatives below it; at a negative's: positives above it. The
    # counts are scattered straight to their class's columns (positives, then negatives, each in
    # row order) and divided once per class: the same quotients as dividing before scattering.
    placed = np.where(pos_sorted, neg_below, pos_above)
    slot = np.empty(positive.size, dtype=np.intp)
    slot[positive] = np.arange(n_pos)
    slot[~positive] = n_pos + np.arange(n_neg)
    by_class = np.empty_like(placed)
    np.put_along_axis(by_class, slot[order], placed, axis=1)
    return by_class[:, :n_pos] / n_neg, by_class[:, n_pos:] / n_pos


def _paired_se(probe: _Probe, metric: AttackMetric, best: int) -> np.ndarray:
    """Standard error of (every probe − probe ``best``): s/√n, or DeLong's for AUC."""
    if metric == "accuracy":
        (correct,) = probe.parts
        return mean_paired_se(correct, correct[best])
    v10, v01 = probe.parts
    return paired_se_from_placements(v10, v01, v10[best], v01[best])


def _shown(probe: _Probe, board: Board, metric: AttackMetric, step: float | None) -> np.ndarray:
    """The score shown after each probe (NaN before the first release)."""
    scores = probe.scores
    if board == "exact":
        return np.round(scores, 5)
    if board == "ladder":
        eta = step if step is not None else lad.default_step(probe.labels.size)
        return lad.ladder(scores, step=eta, greater_is_better=True).displayed
    # Parameter-free: find the next release against the current best in one vectorised pass.
    n = probe.labels.size
    shown = np.full(scores.size, np.nan)
    state = lad.LadderState()
    t = 0
    while t < scores.size:
        if state.displayed is None:
            state = lad.LadderState(lad.on_grid(float(scores[t]), 1.0 / n), t)
            shown[t] = state.displayed
            t += 1
            continue
        best = state.best
        assert isinstance(best, int)
        se = _paired_se(probe, metric, best)[t:]
        beats = np.flatnonzero(scores[t:] - state.displayed > se)
        stop = scores.size if beats.size == 0 else t + int(beats[0])
        shown[t:stop] = state.displayed
        if stop < scores.size:
            state = lad.LadderState(lad.on_grid(float(scores[stop]), 1.0 / n), stop)
            shown[stop] = state.displayed
        t = stop + 1
    return shown


def _final_score(probe: _Probe, metric: AttackMetric, kept: np.ndarray) -> float:
    labels = probe.labels
    if metric == "accuracy":
        votes = (2 * probe.vectors[kept].astype(np.int32) - 1).sum(axis=0)
        final = (votes >= 0).astype(np.int8)
        return float(np.mean(final == labels))
    combined = probe.vectors[kept].sum(axis=0)
    v10, _ = _placements(labels == 1, combined[None, :])
    return float(v10.mean())


def boosting_attack(
    *,
    n_public: int = 4000,
    submissions: int = 1000,
    metric: AttackMetric = "accuracy",
    boards: tuple[Board, ...] = BOARDS,
    seed: int = 0,
    step: float | None = None,
) -> dict[str, AttackResult]:
    """Run the attack once per board on the same labels and probes (seeded)."""
    probe = _probe(metric, n_public, submissions, np.random.default_rng(seed))
    out: dict[str, AttackResult] = {}
    for board in boards:
        shown = _shown(probe, board, metric, step)
        kept = np.flatnonzero(np.nan_to_num(shown, nan=0.0) > 0.5)
        released = int(np.count_nonzero(np.diff(np.concatenate([[np.nan], shown])) != 0))
        final = _final_score(probe, metric, kept) if kept.size else 0.5
        out[board] = AttackResult(board, metric, final, int(kept.size), released)
    return out
