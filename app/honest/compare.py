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

from app.honest._normal import norm_cdf
from app.honest.intervals import Interval, bootstrap_interval
from app.honest.replicates import Replicates


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
    resamples (NaN replicates are ignored pair by pair through the covariance of the rest).
    """
    points = np.asarray(points, dtype=np.float64)
    n = points.size
    if n < 2:
        return np.ones(n, dtype=np.int64)
    sign = 1.0 if greater_is_better else -1.0
    reps = sign * np.asarray(replicates, dtype=np.float64)
    keep = np.all(np.isfinite(reps), axis=0)
    reps = reps[:, keep]
    cov = np.atleast_2d(np.cov(reps)) if reps.shape[1] > 1 else np.zeros((n, n))
    var = np.diag(cov)
    i, j = np.triu_indices(n, k=1)
    diff = sign * (points[i] - points[j])
    se = np.sqrt(np.maximum(var[i] + var[j] - 2 * cov[i, j], 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(diff) / se, np.where(diff != 0, np.inf, 0.0))
    p = np.minimum(1.0, 2 * (1 - norm_cdf(z)))
    rejected = holm(p, alpha)
    better = np.zeros(n, dtype=np.int64)
    # A rejected pair means the team with the better point score is significantly better.
    worse = np.where(diff > 0, j, i)[rejected]
    np.add.at(better, worse, 1)
    return 1 + better
