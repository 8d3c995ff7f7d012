"""The standard normal CDF and quantile, vectorised, from the standard library's NormalDist."""

from statistics import NormalDist

import numpy as np

_STD = NormalDist()


def norm_cdf(x: np.ndarray | float) -> np.ndarray:
    out: np.ndarray = np.vectorize(_STD.cdf, otypes=[np.float64])(x)
    return out


def norm_ppf(p: np.ndarray | float) -> np.ndarray:
    """Φ⁻¹(p), with p clipped into (0, 1) so the tails give large finite values."""
    clipped = np.clip(np.asarray(p, dtype=np.float64), 1e-300, 1 - 1e-16)
    out: np.ndarray = np.vectorize(_STD.inv_cdf, otypes=[np.float64])(clipped)
    return out
