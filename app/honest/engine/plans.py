"""Each supported metric as a statistic of per-row values, so that a resample is a matrix product.

A :class:`Plan` holds what one submission contributes: per-row values (``SumsPlan``: the metric is
``f(Σ c_i v_i, Σ c_i)`` for row counts ``c``), per-row categories (``CategoryPlan``: the metric is a
function of the confusion counts) or sorted scores (``AucPlan``). :mod:`app.honest.engine.replicates` runs
a plan over any source of row counts: bootstrap resamples, or the shake-up's public/private splits.

The classes of a classification metric are fixed by the full data; macro F1 averages over the
classes present in a replicate, as the metric itself would on that replicate.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from app.metrics.classification import encode_labels
from app.metrics.probabilistic import KAGGLE_EPS

# The metrics with a vectorised bootstrap; every other metric has no interval (``None``).
INTERVAL_METRICS = frozenset(
    {
        "accuracy",
        "micro_f1",
        "macro_f1",
        "class_precision",
        "class_recall",
        "class_f1",
        "roc_auc",
        "mean_columnwise_roc_auc",
        "log_loss_binary",
        "log_loss_multiclass",
        "pfbeta",
        "rmse",
        "mae",
        "rmsle",
        "r2",
        "quadratic_weighted_kappa",
    }
)


def supports_intervals(metric_name: str) -> bool:
    return metric_name in INTERVAL_METRICS


class UnsupportedMetric(ValueError):
    """The metric has no vectorised bootstrap (see :data:`INTERVAL_METRICS`)."""


StatFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SumsPlan:
    """θ = f(S, m) with S = Σ c_i V_i (shape (..., K)) and m = Σ c_i."""

    values: np.ndarray  # (n, K) float64
    stat: StatFn
    # True when every value is a small whole number, so float32 sums are exact.
    integral: bool = False

    @property
    def n(self) -> int:
        return int(self.values.shape[0])


@dataclass(frozen=True)
class CategoryPlan:
    """θ = f(counts) with counts[k] = Σ_{i: code_i = k} c_i (shape (..., K))."""

    codes: np.ndarray  # (n,) intp in [0, K)
    categories: int
    stat: Callable[[np.ndarray], np.ndarray]

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])


@dataclass(frozen=True)
class AucPlan:
    """Mean ROC AUC over columns; each column a 0/1 target and a score per row."""

    positive: np.ndarray  # (n, k) bool
    scores: np.ndarray  # (n, k) float64

    @property
    def n(self) -> int:
        return int(self.positive.shape[0])


Plan = SumsPlan | CategoryPlan | AucPlan


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, np.float64), np.asarray(den, np.float64))
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _mean(s: np.ndarray, m: np.ndarray) -> np.ndarray:
    return _divide(s[..., 0], m)


def _root_mean(s: np.ndarray, m: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.sqrt(_divide(s[..., 0], m))
    return out


def _r2(s: np.ndarray, m: np.ndarray) -> np.ndarray:
    # S = (Σy, Σy², Σ(y - ŷ)²): SS_tot = Σy² - (Σy)²/m, with force_finite as the metric.
    numerator = s[..., 2]
    denominator = s[..., 1] - _divide(s[..., 0] ** 2, m)
    denominator = np.where(np.abs(denominator) <= 1e-12 * np.abs(s[..., 1]), 0.0, denominator)
    out = 1 - _divide(numerator, denominator)
    out = np.where(denominator == 0, 0.0, out)
    return np.where(numerator == 0, 1.0, out)


def _pfbeta(beta: float) -> StatFn:
    def stat(s: np.ndarray, m: np.ndarray) -> np.ndarray:
        ctp, predicted, positives = s[..., 0], s[..., 1], s[..., 2]
        precision = _divide(ctp, predicted)
        recall = _divide(ctp, positives)
        b2 = beta * beta
        score = _divide((1 + b2) * precision * recall, b2 * precision + recall)
        return np.where((precision > 0) & (recall > 0), score, 0.0)

    return stat


def _confusion_stat(k: int, kind: str, label: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    def stat(counts: np.ndarray) -> np.ndarray:
        cm = counts.reshape(*counts.shape[:-1], k, k).astype(np.float64)
        tp = np.diagonal(cm, axis1=-2, axis2=-1)
        predicted = cm.sum(axis=-2)
        true = cm.sum(axis=-1)
        if kind == "accuracy":
            return _divide(tp.sum(axis=-1), cm.sum(axis=(-2, -1)))
        if kind == "precision":
            return _divide(tp[..., label], predicted[..., label])
        if kind == "recall":
            return _divide(tp[..., label], true[..., label])
        f1 = _divide(2 * tp, true + predicted)
        if kind == "class_f1":
            return f1[..., label]
        present = (true + predicted) > 0
        return _divide((f1 * present).sum(axis=-1), present.sum(axis=-1))

    return stat


def _kappa_stat(k: int) -> Callable[[np.ndarray], np.ndarray]:
    position = np.arange(k)
    weights = ((position[None, :] - position[:, None]) ** 2).astype(np.float64)

    def stat(counts: np.ndarray) -> np.ndarray:
        cm = counts.reshape(*counts.shape[:-1], k, k).astype(np.float64)
        total = cm.sum(axis=(-2, -1))
        expected = (cm.sum(axis=-2)[..., :, None] * cm.sum(axis=-1)[..., None, :]) / np.maximum(
            total, 1
        )[..., None, None]
        observed_w = (weights * cm).sum(axis=(-2, -1))
        expected_w = (weights * expected).sum(axis=(-2, -1))
        return 1 - _divide(observed_w, expected_w)

    return stat


def _log_loss_binary_rows(y: np.ndarray, p: np.ndarray, eps: float | str) -> np.ndarray:
    positive = y == 1
    if eps == "auto":
        tiny = np.finfo(np.float64).eps
        p_one = np.clip(p, tiny, 1 - tiny)
        p_zero = np.clip(1 - p, tiny, 1 - tiny)
    else:
        bound = float(eps)
        p_one = np.clip(p, bound, 1 - bound)
        p_zero = 1 - p_one
    out: np.ndarray = -np.log(np.where(positive, p_one, p_zero))
    return out


def _log_loss_multiclass_rows(
    y: np.ndarray, p: np.ndarray, eps: float | str, renormalize: bool | None
) -> np.ndarray:
    if renormalize is None:
        renormalize = eps != "auto"
    bound = float(np.finfo(np.float64).eps) if eps == "auto" else float(eps)
    true_class = np.argmax(y == 1, axis=1)
    rows = np.arange(len(y))
    if renormalize:
        clipped = np.clip(p, bound, 1 - bound)
        q = clipped[rows, true_class] / clipped.sum(axis=1)
    else:
        q = np.clip(p[rows, true_class], bound, 1 - bound)
    out: np.ndarray = -np.log(q)
    return out


def make_plan(
    metric_name: str, params: BaseModel | None, y_true: np.ndarray, y_pred: np.ndarray
) -> Plan:
    """The plan of ``metric_name`` for one submission's predictions aligned with the key.

    The arrays are those the metric itself takes, already validated by scoring it; raises
    :class:`UnsupportedMetric` for a metric outside :data:`INTERVAL_METRICS`.
    """
    if metric_name not in INTERVAL_METRICS:
        raise UnsupportedMetric(f"metric '{metric_name}' has no bootstrap interval")

    def get(name: str, default: Any) -> Any:
        return getattr(params, name, default) if params is not None else default

    if metric_name in ("accuracy", "micro_f1"):
        correct = (np.asarray(y_true) == np.asarray(y_pred)).astype(np.intp)
        return CategoryPlan(correct, 2, lambda c: _divide(c[..., 1], c.sum(axis=-1)))
    if metric_name in ("macro_f1", "class_precision", "class_recall", "class_f1"):
        labels, t, p = encode_labels(np.asarray(y_true), np.asarray(y_pred))
        k = len(labels)
        kind = {"macro_f1": "macro", "class_precision": "precision", "class_recall": "recall"}
        index = labels.index(get("label", None)) if metric_name.startswith("class_") else 0
        stat = _confusion_stat(k, kind.get(metric_name, "class_f1"), index)
        return CategoryPlan(t * k + p, k * k, stat)
    if metric_name == "quadratic_weighted_kappa":
        _, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
        k = int(codes.max()) + 1
        n = len(y_true)
        return CategoryPlan(codes[:n] * k + codes[n:], k * k, _kappa_stat(k))
    if metric_name in ("roc_auc", "mean_columnwise_roc_auc"):
        y = np.asarray(y_true, dtype=np.float64)
        s = np.asarray(y_pred, dtype=np.float64)
        if y.ndim == 1:
            y, s = y[:, None], s[:, None]
        return AucPlan(y == 1, s)
    y = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    if metric_name == "log_loss_binary":
        rows = _log_loss_binary_rows(y, p, get("eps", KAGGLE_EPS))
        return SumsPlan(rows[:, None], _mean)
    if metric_name == "log_loss_multiclass":
        rows = _log_loss_multiclass_rows(y, p, get("eps", KAGGLE_EPS), get("renormalize", None))
        return SumsPlan(rows[:, None], _mean)
    if metric_name == "mae":
        return SumsPlan(np.abs(p - y)[:, None], _mean)
    if metric_name in ("rmse", "rmsle"):
        diff = y - p if metric_name == "rmse" else np.log1p(y) - np.log1p(p)
        return SumsPlan((diff * diff)[:, None], _root_mean)
    if metric_name == "r2":
        residual = y - p
        return SumsPlan(np.column_stack([y, y * y, residual * residual]), _r2)
    if metric_name == "pfbeta":
        clipped = np.clip(p, 0.0, 1.0)
        positive = (y == 1).astype(np.float64)
        return SumsPlan(
            np.column_stack([clipped * positive, clipped, positive]), _pfbeta(get("beta", 1.0))
        )
    raise UnsupportedMetric(f"metric '{metric_name}' has no bootstrap interval")
