"""DeLong's covariance of correlated ROC AUCs, by the fast algorithm of Sun & Xu.

DeLong, DeLong & Clarke-Pearson (Biometrics 1988): for m positives and n negatives and k score
vectors on the same rows, the structural components (placement values)

    V10ᵣ(xᵢ) = (1/n) Σⱼ ψ(xᵢʳ, yⱼʳ),    V01ᵣ(yⱼ) = (1/m) Σᵢ ψ(xᵢʳ, yⱼʳ),    ψ = 1{x > y} + ½ 1{x = y}

give AUCᵣ = mean V10ᵣ and Cov(AUC) = S10/m + S01/n, S10 and S01 the sample covariance matrices
of the V10 and V01 columns. Sun & Xu (IEEE Signal Processing Letters 2014) compute the placement
values from sorted scores in O(N log N) instead of O(mn) pairs; here by binary search among the
sorted scores of the other class, which is the same count (ties half).
"""

import numpy as np


def placements(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """V10 (one per positive) and V01 (one per negative) of one score vector."""
    pos = scores[positive]
    neg = scores[~positive]
    neg_sorted = np.sort(neg)
    pos_sorted = np.sort(pos)
    lo = np.searchsorted(neg_sorted, pos, side="left")
    hi = np.searchsorted(neg_sorted, pos, side="right")
    v10 = (lo + 0.5 * (hi - lo)) / neg.size
    below = np.searchsorted(pos_sorted, neg, side="left")
    upto = np.searchsorted(pos_sorted, neg, side="right")
    v01 = ((pos.size - upto) + 0.5 * (upto - below)) / pos.size
    return v10, v01


def delong(y_true: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AUCs of the columns of ``scores`` (n_rows, k) against 0/1 ``y_true``, and their covariance."""
    positive = np.asarray(y_true) == 1
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:
        scores = scores[:, None]
    m, n = int(positive.sum()), int((~positive).sum())
    if m < 2 or n < 2:
        raise ValueError("DeLong's variance needs at least two positives and two negatives")
    v10 = np.empty((m, scores.shape[1]))
    v01 = np.empty((n, scores.shape[1]))
    for r in range(scores.shape[1]):
        v10[:, r], v01[:, r] = placements(positive, scores[:, r])
    aucs = v10.mean(axis=0)
    cov = (
        np.atleast_2d(np.cov(v10, rowvar=False)) / m + np.atleast_2d(np.cov(v01, rowvar=False)) / n
    )
    return aucs, cov


def paired_se_from_placements(
    v10_a: np.ndarray, v01_a: np.ndarray, v10_b: np.ndarray, v01_b: np.ndarray
) -> np.ndarray:
    """Standard error of AUC(a) − AUC(b) from their placement values, along the last axis.

    Var a + Var b − 2 Cov(a, b) of DeLong's covariance is the sample variance of the paired
    differences of the placement values, class by class: Var(V10a − V10b)/m + Var(V01a − V01b)/n.
    ``v10_a`` and ``v01_a`` may carry one row per candidate (the attack scores them all at once).
    """
    d10 = np.asarray(v10_a, dtype=np.float64) - v10_b
    d01 = np.asarray(v01_a, dtype=np.float64) - v01_b
    var = d10.var(axis=-1, ddof=1) / d10.shape[-1] + d01.var(axis=-1, ddof=1) / d01.shape[-1]
    se: np.ndarray = np.sqrt(np.maximum(var, 0.0))
    return se


def delong_paired_se(y_true: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Standard error of AUC(a) − AUC(b) on the same rows: √(Var a + Var b − 2 Cov(a, b))."""
    positive = np.asarray(y_true) == 1
    m = int(positive.sum())
    if m < 2 or positive.size - m < 2:
        raise ValueError("DeLong's variance needs at least two positives and two negatives")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(paired_se_from_placements(*placements(positive, a), *placements(positive, b)))
