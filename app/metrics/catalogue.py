"""Registers every built-in metric. The names here are a public contract."""

from typing import Any

import numpy as np

from app.metrics.classification import accuracy
from app.metrics.ranking import roc_auc
from app.metrics.regression import rmse
from app.metrics.registry import Metric, register


def _plain(fn):  # type: ignore[no-untyped-def]
    """Adapt ``fn(y_true, y_pred)`` to the registry's calling convention."""

    def score(y_true: np.ndarray, y_pred: np.ndarray, *, params: Any, extra: Any) -> float:
        return fn(y_true, y_pred)

    return score


register(
    Metric(
        name="accuracy",
        score=_plain(accuracy),
        direction="maximize",
        cell="label",
        reference="sklearn.metrics.accuracy_score",
        summary="Fraction of rows whose label is exactly right.",
    )
)
register(
    Metric(
        name="roc_auc",
        score=_plain(roc_auc),
        direction="maximize",
        cell="number",
        reference="sklearn.metrics.roc_auc_score",
        summary="Area under the ROC curve; 0/1 target, any real-valued score.",
    )
)
register(
    Metric(
        name="rmse",
        score=_plain(rmse),
        direction="minimize",
        cell="number",
        reference="sklearn.metrics.root_mean_squared_error",
        summary="Root mean squared error.",
    )
)
