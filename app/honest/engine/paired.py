"""The standard error of the difference between two submissions' scores on the same rows, as the
parameter-free Ladder needs it (Blum & Hardt 2015, Algorithm 2).

Where the metric is a mean of per-row losses the difference of two scores is the mean of the
per-row loss differences dᵢ, so its standard error is exactly s/√n (s the sample standard deviation
of the dᵢ). Functions of such a mean follow by their identity: RMSE_a − RMSE_b = (MSE_a − MSE_b) /
(RMSE_a + RMSE_b), and R²_a − R²_b = −(SSE_a − SSE_b) / SS_tot with SS_tot shared. For ROC AUC it
is DeLong's paired standard error (:mod:`app.honest.engine.delong`). Ratios of counts (F1, precision,
recall, κ, pF-beta) and the mean of several AUC columns have no such decomposition:
:func:`paired_se` answers None for them and the caller uses the bootstrap's paired standard error.
"""

import numpy as np

from app.honest.engine.delong import paired_se_from_placements, placements
from app.honest.engine.plans import AucPlan, CategoryPlan, Plan, SumsPlan

# Metrics whose paired standard error is computed exactly from per-row values.
_MEAN_LOSS = frozenset({"log_loss_binary", "log_loss_multiclass", "mae"})
_ROOT_MEAN = frozenset({"rmse", "rmsle"})
_CORRECT = frozenset({"accuracy", "micro_f1"})
_AUC = frozenset({"roc_auc", "mean_columnwise_roc_auc"})


def mean_paired_se(new: np.ndarray, best: np.ndarray) -> np.ndarray:
    """s/√n along the last axis: s the sample std of the per-row differences ``new − best``
    (``new`` may hold one row of values per candidate; 0 below two rows)."""
    diff = np.asarray(new, dtype=np.float64) - np.asarray(best, dtype=np.float64)
    n = diff.shape[-1]
    if n < 2:
        return np.zeros(diff.shape[:-1])
    se: np.ndarray = diff.std(axis=-1, ddof=1) / np.sqrt(n)
    return se


def has_exact_se(metric_name: str) -> bool:
    """True when :func:`paired_se` computes the metric's paired standard error from its rows
    (for ``mean_columnwise_roc_auc`` only with a single column)."""
    return metric_name in _MEAN_LOSS | _ROOT_MEAN | _CORRECT | _AUC | {"r2"}


def paired_se(metric_name: str, new: Plan, best: Plan) -> float | None:
    """The standard error of score(new) − score(best) on the same rows, or None when the metric
    has no per-row decomposition. ``new`` and ``best`` are plans of the same key rows
    (:func:`app.honest.engine.plans.make_plan`)."""
    if metric_name in _CORRECT and isinstance(new, CategoryPlan) and isinstance(best, CategoryPlan):
        # The plan's codes are 1 where the row is right: accuracy is their mean.
        return float(mean_paired_se(new.codes, best.codes))
    if isinstance(new, SumsPlan) and isinstance(best, SumsPlan):
        a, b = new.values, best.values
        if metric_name in _MEAN_LOSS:
            return float(mean_paired_se(a[:, 0], b[:, 0]))
        if metric_name in _ROOT_MEAN:
            roots = float(np.sqrt(a[:, 0].mean()) + np.sqrt(b[:, 0].mean()))
            mse_se = float(mean_paired_se(a[:, 0], b[:, 0]))
            return mse_se / roots if roots > 0 else 0.0
        if metric_name == "r2":
            y, y2 = a[:, 0], a[:, 1]
            total = float(y2.sum() - y.sum() ** 2 / y.size)
            if total <= 1e-12 * float(y2.sum()):
                return None  # R² is pinned by force_finite, not a function of the mean
            return float(mean_paired_se(a[:, 2], b[:, 2])) * y.size / total
        return None
    if metric_name in _AUC and isinstance(new, AucPlan) and isinstance(best, AucPlan):
        if new.positive.shape[1] != 1:
            return None
        positive = new.positive[:, 0]
        m = int(positive.sum())
        if m < 2 or positive.size - m < 2:
            return None
        v10_a, v01_a = placements(positive, new.scores[:, 0])
        v10_b, v01_b = placements(positive, best.scores[:, 0])
        return float(paired_se_from_placements(v10_a, v01_a, v10_b, v01_b))
    return None
