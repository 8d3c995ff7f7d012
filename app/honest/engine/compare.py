"""Is A better than B? Paired bootstrap differences, one-sided p-values and Holm rank bands.

Two submissions scored on the same resamples give paired replicates; their difference
Δ* = sign · (θ*_A − θ*_B) (``sign`` makes "A better" positive whatever the metric's direction)
has percentile and BCa intervals like any statistic, and the one-sided p-value of "A is no better
than B" is the normal tail at the bootstrap standard error, p = 1 − Φ(Δ̂ / se(Δ*)): continuous,
so Holm's small thresholds stay reachable with 1000 replicates.

Rank bands: every pair of teams is tested two-sided (p = 2 · min of the one-sided tails) and the
whole family of N(N − 1)/2 pairs is controlled by Holm's step-down procedure (Holm, Scand. J.
Statist. 1979): sort the p-values p₍₁₎ ≤ … ≤ p₍M₎, reject while p₍ⱼ₎ ≤ α / (M − j + 1). A team's
band is 1 + the number of teams significantly better than it, so equal teams share a band.
"""

from dataclasses import dataclass

import numpy as np

from app.honest.engine._normal import norm_cdf, norm_ppf
from app.honest.engine.intervals import Interval, bootstrap_interval
from app.honest.engine.replicates import Replicates


@dataclass(frozen=True)
class Comparison:
    difference: Interval  # of sign · (A − B): positive means A is better
    p_value: float  # one-sided, H₀: A is no better than B

    def as_dict(self) -> dict[str, float | int]:
        return {
            "difference": self.difference.point,
            "p_value": self.p_value,
            **self.difference.as_dict(),
        }


def _paired(a: Replicates, b: Replicates, sign: float) -> Replicates:
    jack = np.empty(0)
    if a.jackknife.shape == b.jackknife.shape:
        jack = sign * (a.jackknife - b.jackknife)
    return Replicates(sign * (a.point - b.point), sign * (a.values - b.values), jack)


def one_sided_p(difference: float, se: float) -> float:
    if not np.isfinite(se) or se <= 0:
        return 0.0 if difference > 0 else 1.0
    return float(1 - norm_cdf(difference / se))


def compare(
    a: Replicates, b: Replicates, *, greater_is_better: bool, level: float = 0.95
) -> Comparison:
    """The paired difference A − B (oriented so that positive is better) and its one-sided p."""
    diff = bootstrap_interval(_paired(a, b, 1.0 if greater_is_better else -1.0), level=level)
    return Comparison(diff, one_sided_p(diff.point, diff.se))


def holm(p_values: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Holm's step-down rejections (boolean, same shape) at family-wise level ``alpha``."""
    p = np.asarray(p_values, dtype=np.float64).ravel()
    order = np.argsort(p, kind="stable")
    thresholds = alpha / (p.size - np.arange(p.size))
    passed = p[order] <= thresholds
    # Step down: stop at the first hypothesis that is not rejected.
    stop = int(np.argmin(passed)) if not passed.all() else p.size
    rejected = np.zeros(p.size, dtype=bool)
    rejected[order[:stop]] = True
    return rejected.reshape(np.shape(p_values))


def rank_bands(
    points: np.ndarray, replicates: np.ndarray, *, greater_is_better: bool, alpha: float = 0.05
) -> np.ndarray:
    """Band of each team: 1 + the number of teams significantly better (Holm over all pairs).

    ``points`` (N,) are the teams' scores and ``replicates`` (N, B) the same statistic on shared
    resamples (replicates that are NaN for any team are left out).

    The pair's z is |Δ| / se(Δ), se² = Var_i + Var_j − 2 Cov_ij from the replicates, and its
    two-sided p-value 2 (1 − Φ(z)). Holm always rejects a p-value ≤ α/M (M = N(N − 1)/2
    pairs), so no pair needs computing once it surely has one: with the teams sorted best first
    and se ≤ sd_i + sd_j, a team ranked far enough above team i passes z ≥ Φ⁻¹(1 − α/2M) whatever
    their covariance, and so does every team above it. Only each team's window of close rivals
    is computed (block by block, one matrix product each), and Holm's step-down runs over the
    windows' p-values after the sure rejections, which come first in its order. The result is
    that of testing every pair.
    """
    points = np.asarray(points, dtype=np.float64)
    n = points.size
    if n < 2:
        return np.ones(n, dtype=np.int64)
    sign = 1.0 if greater_is_better else -1.0
    reps = sign * np.asarray(replicates, dtype=np.float64)
    reps = reps[:, np.all(np.isfinite(reps), axis=0)]
    order = np.argsort(-sign * points, kind="stable")
    best_first = sign * points[order]
    b = reps.shape[1]
    centred = reps[order] - reps[order].mean(axis=1, keepdims=True) if b > 1 else None
    var = np.zeros(n) if centred is None else np.einsum("ij,ij->i", centred, centred) / (b - 1)
    sd = np.sqrt(var)
    pairs = n * (n - 1) // 2
    # A margin so that a "sure" pair's computed p-value is below α/M despite rounding.
    z_sure = float(norm_ppf(1 - alpha / (2 * pairs))) * (1 + 1e-9)
    # g(j) = point_j − z_sure · max(sd_0..sd_j) never increases down the board: the teams j
    # with g(j) ≥ point_i + z_sure · sd_i, a prefix, are surely better than team i.
    reach = best_first - z_sure * np.maximum.accumulate(sd)
    sure = np.searchsorted(-reach, -(best_first + z_sure * sd), side="right")
    strictly_above = np.searchsorted(-best_first, -best_first, side="left")
    sure = np.minimum(sure, strictly_above)
    better = sure.astype(np.int64)
    sure_total = int(sure.sum())
    candidates_z: list[np.ndarray] = []
    candidates_team: list[np.ndarray] = []
    z_alpha = float(norm_ppf(1 - alpha / 2))
    block = max(1, int(2**22 // max(n, 1)))
    for start in range(1, n, block):
        rows = np.arange(start, min(start + block, n))
        lo = int(sure[rows].min())
        hi = int(rows[-1])
        if lo >= hi:
            continue
        cols = np.arange(lo, hi)
        inside = (cols[None, :] >= sure[rows][:, None]) & (cols[None, :] < rows[:, None])
        if centred is None:
            cov = np.zeros((rows.size, cols.size))
        else:
            cov = centred[rows] @ centred[lo:hi].T / (b - 1)
        se = np.sqrt(np.maximum(var[rows][:, None] + var[cols][None, :] - 2 * cov, 0.0))
        diff = best_first[cols][None, :] - best_first[rows][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, diff / se, np.where(diff != 0, np.inf, 0.0))
        # A pair with p > α is never rejected: only the others enter the step-down.
        # A computed z past z_sure is a sure rejection too; a pair with p > α never is one.
        passed = inside & (z >= z_sure)
        better[rows] += passed.sum(axis=1)
        sure_total += int(passed.sum())
        keep = inside & (z >= z_alpha) & ~passed
        team, _ = np.nonzero(keep)
        candidates_z.append(z[keep])
        candidates_team.append(rows[team])
    if candidates_z:
        _step_down(
            np.concatenate(candidates_z),
            np.concatenate(candidates_team),
            better,
            ahead=sure_total,
            pairs=pairs,
            alpha=alpha,
        )
    bands = np.empty(n, dtype=np.int64)
    bands[order] = 1 + better
    return bands


def _step_down(
    z: np.ndarray, team: np.ndarray, better: np.ndarray, *, ahead: int, pairs: int, alpha: float
) -> None:
    """Holm over the windows' pairs, ``ahead`` sure rejections before them: count each rejected
    pair for its lower team. The p-values are computed in order of z, a slice at a time, up to
    the first acceptance (a strong board rejects only its first few)."""
    by_z = np.argsort(-z, kind="stable")  # p = 2 (1 − Φ(z)) ascending
    stop = z.size
    for start in range(0, z.size, 4096):
        part = by_z[start : start + 4096]
        p = np.minimum(1.0, 2 * (1 - norm_cdf(z[part])))
        passed = p <= alpha / (pairs - ahead - start - np.arange(part.size))
        if not passed.all():
            stop = start + int(np.argmin(passed))
            break
    np.add.at(better, team[by_z[:stop]], 1)
