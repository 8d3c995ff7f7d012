"""Percentile and BCa bootstrap intervals.

BCa (bias-corrected and accelerated; Efron, "Better bootstrap confidence intervals", JASA 1987;
Efron & Tibshirani 1993, §14.3): with B replicates θ*_b of an estimate θ̂,

    z₀ = Φ⁻¹( (#{θ*_b < θ̂} + ½ #{θ*_b = θ̂}) / B )                       (bias correction)
    a  = Σ (θ̄ − θ₍ᵢ₎)³ / (6 · (Σ (θ̄ − θ₍ᵢ₎)²)^{3/2})                      (acceleration, jackknife)
    α₁ = Φ(z₀ + (z₀ + z_{α/2}) / (1 − a (z₀ + z_{α/2})))
    α₂ = Φ(z₀ + (z₀ + z_{1−α/2}) / (1 − a (z₀ + z_{1−α/2})))

and the interval is the (α₁, α₂) quantiles of the replicates; the percentile interval is the
(α/2, 1 − α/2) quantiles. θ₍ᵢ₎ is the statistic with row i left out, θ̄ their mean.
"""

from dataclasses import dataclass

import numpy as np

from app.honest.engine._normal import norm_cdf, norm_ppf
from app.honest.engine.replicates import Replicates


@dataclass(frozen=True)
class Interval:
    point: float
    low: float  # percentile interval
    high: float
    bca_low: float
    bca_high: float
    se: float  # standard deviation of the replicates
    level: float
    replicates: int  # replicates where the statistic is defined

    def as_dict(self) -> dict[str, float | int]:
        return {
            "low": self.low,
            "high": self.high,
            "bca_low": self.bca_low,
            "bca_high": self.bca_high,
            "se": self.se,
            "level": self.level,
            "replicates": self.replicates,
        }


def acceleration(jackknife: np.ndarray) -> float:
    jack = jackknife[np.isfinite(jackknife)]
    if jack.size < 3:
        return 0.0
    d = jack.mean() - jack
    denominator = 6.0 * float(np.sum(d * d)) ** 1.5
    return float(np.sum(d**3) / denominator) if denominator > 0 else 0.0


def bootstrap_interval(rep: Replicates, *, level: float = 0.95) -> Interval:
    """Percentile and BCa intervals of ``rep`` at confidence ``level``."""
    values = rep.values[np.isfinite(rep.values)]
    theta = rep.point
    if values.size < 2 or not np.isfinite(theta):
        nan = float("nan")
        return Interval(theta, nan, nan, nan, nan, nan, level, int(values.size))
    alpha = (1 - level) / 2
    ordered = np.sort(values)
    low, high = quantiles(ordered, np.array([alpha, 1 - alpha]))
    below = np.count_nonzero(values < theta) + 0.5 * np.count_nonzero(values == theta)
    z0 = float(norm_ppf(below / values.size))
    a = acceleration(rep.jackknife)
    z = norm_ppf(np.array([alpha, 1 - alpha]))
    shifted = z0 + (z0 + z) / (1 - a * (z0 + z))
    bca_low, bca_high = quantiles(ordered, np.asarray(norm_cdf(shifted), dtype=float))
    return Interval(
        point=theta,
        low=float(low),
        high=float(high),
        bca_low=float(bca_low),
        bca_high=float(bca_high),
        se=float(values.std(ddof=1)),
        level=level,
        replicates=int(values.size),
    )


def quantiles(ordered: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(values, q)`` (its default, linear method) of the sorted, finite ``values``,
    to the bit: numpy's own steps (``_quantile``, ``_get_indexes``, ``_lerp``) without its
    generality, which cost more than sorting the replicates once (four calls an upload)."""
    if not np.all((q >= 0) & (q <= 1)):  # NaN too, as numpy refuses it
        raise ValueError("Quantiles must be in the range [0, 1]")
    n = ordered.size
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1  # the largest value
    previous[above] = following[above] = -1
    below = virtual < 0
    previous[below] = following[below] = 0
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    gamma = virtual - previous
    a, b = ordered[previous], ordered[following]
    difference = b - a
    result: np.ndarray = a + difference * gamma
    np.subtract(b, difference * (1 - gamma), out=result, where=gamma >= 0.5)
    return result
