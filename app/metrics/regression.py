"""Regression metrics on float arrays, and quadratic weighted kappa on integer ratings.

Each follows the arithmetic of its scikit-learn reference step by step (square, mean, root), so
the scores agree with it to the last few bits.
"""

import numpy as np

from app.metrics._checks import check_one_column
from app.metrics.errors import MetricInputError


def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared error.

    Reference: ``sklearn.metrics.root_mean_squared_error``.

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        True values.
    y_pred : ndarray of float, shape (n,)
        Predicted values.

    Returns
    -------
    float
        Non-negative; lower is better.

    Examples
    --------
    >>> rmse(np.array([3.0, -0.5, 2.0, 7.0]), np.array([2.5, 0.0, 2.0, 8.0]))
    0.6123724356957945
    """
    check_one_column(y_true, y_pred)
    diff = y_true - y_pred
    diff *= diff  # in place: the same squares as ``diff ** 2``, one array fewer
    return float(np.sqrt(np.mean(diff)))


def mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean absolute error.

    Reference: ``sklearn.metrics.mean_absolute_error``.

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        True values.
    y_pred : ndarray of float, shape (n,)
        Predicted values.

    Returns
    -------
    float
        Non-negative; lower is better.

    Examples
    --------
    >>> mae(np.array([3.0, -0.5, 2.0, 7.0]), np.array([2.5, 0.0, 2.0, 8.0]))
    0.5
    """
    check_one_column(y_true, y_pred)
    return float(np.mean(np.abs(y_pred - y_true)))


def r2(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Coefficient of determination, with scikit-learn's ``force_finite=True``.

    Reference: ``sklearn.metrics.r2_score``. A constant key gives 1.0 for exact predictions and
    0.0 otherwise (instead of NaN / -inf). One row is refused: R² needs two.

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        True values.
    y_pred : ndarray of float, shape (n,)
        Predicted values.

    Returns
    -------
    float
        At most 1; higher is better.

    Examples
    --------
    >>> r2(np.array([3.0, -0.5, 2.0, 7.0]), np.array([2.5, 0.0, 2.0, 8.0]))
    0.9486081370449679
    """
    check_one_column(y_true, y_pred)
    if len(y_true) < 2:
        raise MetricInputError("R² is not defined for fewer than two rows", source="answer_key")
    residual = y_true - y_pred
    residual *= residual
    numerator = np.sum(residual)
    centred = y_true - np.mean(y_true)
    centred *= centred
    denominator = np.sum(centred)
    if numerator == 0:
        return 1.0
    if denominator == 0:
        return 0.0
    return float(1 - numerator / denominator)


def rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared logarithmic error, on ``log1p`` of both arrays.

    Reference: ``sklearn.metrics.root_mean_squared_log_error``; values <= -1 are refused (the
    key's as the host's fault, the predictions' as the participant's).

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        True values, each greater than -1.
    y_pred : ndarray of float, shape (n,)
        Predicted values, each greater than -1.

    Returns
    -------
    float
        Non-negative; lower is better.

    Examples
    --------
    >>> round(rmsle(np.array([3.0, 5.0, 2.5, 7.0]), np.array([2.5, 5.0, 4.0, 8.0])), 12)
    0.199324165581
    """
    check_one_column(y_true, y_pred)
    for who, values in (("answer_key", y_true), ("submission", y_pred)):
        bad = np.flatnonzero(values <= -1)
        if bad.size:
            raise MetricInputError(
                f"RMSLE takes log(1 + value), so values must be greater than -1; "
                f"{bad.size} rows hold -1 or less",
                rows=bad,
                source=who,
            )
    diff = np.log1p(y_true)
    diff -= np.log1p(y_pred)
    diff *= diff
    return float(np.sqrt(np.mean(diff)))


def quadratic_weighted_kappa(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Cohen's kappa with quadratic weights on integer ratings.

    Reference: ``sklearn.metrics.cohen_kappa_score(weights="quadratic")``: the rating classes are
    the sorted distinct values found in either array and the weight of a cell is the squared
    difference of class *positions* (not of the rating values). Non-integer ratings, and a single
    rating value overall, are refused.

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        True integer ratings.
    y_pred : ndarray of float, shape (n,)
        Predicted integer ratings.

    Returns
    -------
    float
        At most 1 (perfect agreement); higher is better.

    Examples
    --------
    >>> quadratic_weighted_kappa(np.array([1.0, 2.0, 3.0, 3.0]), np.array([1.0, 2.0, 3.0, 2.0]))
    0.8
    """
    check_one_column(y_true, y_pred)
    for who, values in (("answer_key", y_true), ("submission", y_pred)):
        bad = np.flatnonzero(values != np.round(values))
        if bad.size:
            raise MetricInputError(
                f"ratings must be whole numbers; {bad.size} rows hold other values",
                rows=bad,
                source=who,
            )
    ratings, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    k = len(ratings)
    if k < 2:
        raise MetricInputError(
            "the answer key and the predictions hold a single rating value, so kappa is undefined",
            source="answer_key",
        )
    n = len(y_true)
    confusion = np.bincount(codes[:n] * k + codes[n:], minlength=k * k).reshape(k, k)
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    position = np.arange(k)
    weights = (position[None, :] - position[:, None]) ** 2
    return float(1 - np.sum(weights * confusion) / np.sum(weights * expected))
