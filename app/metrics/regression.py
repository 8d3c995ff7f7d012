"""Regression metrics on float arrays."""

import numpy as np

from app.metrics._checks import check_same_length


def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared error.

    Reference: ``sklearn.metrics.root_mean_squared_error``.

    >>> rmse(np.array([3.0, -0.5, 2.0, 7.0]), np.array([2.5, 0.0, 2.0, 8.0]))
    0.6123724356957945
    """
    check_same_length(y_true, y_pred)
    diff = y_true - y_pred
    return float(np.sqrt(np.dot(diff, diff) / len(diff)))
