"""Metrics on predicted probabilities: log loss (binary, multiclass) and probabilistic F-beta."""

from typing import Literal

import numpy as np

from app.metrics._checks import (
    check_columns,
    check_one_column,
    check_probabilities,
    check_zero_one,
)
from app.metrics.errors import MetricInputError

KAGGLE_EPS = 1e-15
Eps = float | Literal["auto"]


def _check_eps(eps: Eps) -> None:
    if eps != "auto" and not (isinstance(eps, float | int) and 0 < eps < 0.5):
        raise ValueError(f"eps must be 'auto' or a number in (0, 0.5), got {eps!r}")


def log_loss_binary(y_true: np.ndarray, y_prob: np.ndarray, *, eps: Eps = KAGGLE_EPS) -> float:
    """Mean negative log-likelihood of 0/1 labels under the predicted probability of a 1.

    Reference: Kaggle's classic ``logloss`` with a numeric ``eps`` (default ``1e-15``):
    predictions are clipped to ``[eps, 1 - eps]`` first, so any real number is accepted.
    ``sklearn.metrics.log_loss`` (scikit-learn >= 1.5) with ``eps="auto"``: values outside
    [0, 1] are refused, then ``p`` and ``1 - p`` are clipped to machine epsilon.

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        0/1 labels.
    y_prob : ndarray of float, shape (n,)
        Predicted probability of a 1 (any real number with a numeric ``eps``).
    eps : float or "auto", default 1e-15
        Clipping bound; ``"auto"`` means machine epsilon and refuses values outside [0, 1].

    Returns
    -------
    float
        Non-negative; lower is better.

    Examples
    --------
    >>> round(log_loss_binary(np.array([0.0, 1.0, 1.0]), np.array([0.1, 0.9, 0.8])), 6)
    0.144622
    """
    check_one_column(y_true, y_prob)
    _check_eps(eps)
    positive = check_zero_one(y_true)
    if eps == "auto":
        check_probabilities(y_prob)
        tiny = np.finfo(np.float64).eps
        p_one = np.clip(y_prob, tiny, 1 - tiny)
        p_zero = np.clip(1 - y_prob, tiny, 1 - tiny)
    else:
        p_one = np.clip(y_prob, eps, 1 - eps)
        p_zero = 1 - p_one
    return float(-np.mean(np.log(np.where(positive, p_one, p_zero))))


def log_loss_multiclass(
    y_true: np.ndarray,
    y_prob: np.ndarray,
    *,
    eps: Eps = KAGGLE_EPS,
    renormalize: bool | None = None,
) -> float:
    """Mean negative log of the probability given to each row's true class.

    ``y_true`` is one-hot: one column per class, exactly one 1 per row. ``y_prob`` has the same
    columns.

    Reference: Kaggle's classic ``multiclass_log_loss`` by default (clip to
    ``[1e-15, 1 - 1e-15]``, then divide each row by its sum); ``sklearn.metrics.log_loss``
    (>= 1.5) with ``eps="auto"``: values outside [0, 1] refused, clip to machine epsilon, no
    renormalisation unless ``renormalize=True``.

    Parameters
    ----------
    y_true : ndarray of float, shape (n, k)
        One-hot rows, one column per class.
    y_prob : ndarray of float, shape (n, k)
        A probability per class.
    eps : float or "auto", default 1e-15
        Clipping bound; ``"auto"`` means machine epsilon and refuses values outside [0, 1].
    renormalize : bool or None, default None
        Divide each clipped row by its sum; None means true unless ``eps="auto"``.

    Returns
    -------
    float
        Non-negative; lower is better.

    Examples
    --------
    >>> y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    >>> round(log_loss_multiclass(y, np.array([[0.8, 0.1, 0.1], [0.2, 0.2, 0.6]])), 6)
    0.366985
    """
    check_columns(y_true, y_prob, min_columns=2)
    _check_eps(eps)
    if renormalize is None:
        renormalize = eps != "auto"
    hot = check_zero_one(y_true)
    not_one_hot = np.flatnonzero(hot.sum(axis=1) != 1)
    if not_one_hot.size:
        raise MetricInputError(
            f"each answer-key row must hold exactly one 1 (one-hot); "
            f"{not_one_hot.size} rows do not",
            rows=not_one_hot,
            source="answer_key",
        )
    if eps == "auto":
        check_probabilities(y_prob)
        eps = float(np.finfo(np.float64).eps)
    true_class = np.argmax(hot, axis=1)
    rows = np.arange(len(y_true))
    if renormalize:
        clipped = np.clip(y_prob, eps, 1 - eps)
        p = clipped[rows, true_class] / clipped.sum(axis=1)
    else:
        p = np.clip(y_prob[rows, true_class], eps, 1 - eps)
    return float(-np.mean(np.log(p)))


def pfbeta(y_true: np.ndarray, y_prob: np.ndarray, *, beta: float = 1.0) -> float:
    """Probabilistic F-beta: precision and recall from summed probabilities instead of counts.

    Reference: Kaggle's corrected ``pfbeta`` (RSNA screening mammography). Predictions are clipped
    to [0, 1]; ``ctp`` sums them over the positive rows, ``cfp`` over the negative rows; precision
    is ``ctp / (ctp + cfp)``, recall ``ctp / positives``; the score is 0 when either is 0.

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        0/1 labels.
    y_prob : ndarray of float, shape (n,)
        Predicted probability of a 1.
    beta : float, default 1
        Weight of recall against precision.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> pfbeta(np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.9, 0.1, 0.6, 0.4]))
    0.75
    """
    check_one_column(y_true, y_prob)
    positive = check_zero_one(y_true)
    n_positive = int(positive.sum())
    if n_positive == 0:
        raise MetricInputError(
            "the answer key has no positive rows, so recall is undefined", source="answer_key"
        )
    p = np.clip(y_prob, 0.0, 1.0)
    ctp = float(p[positive].sum())
    cfp = float(p[~positive].sum())
    if ctp + cfp == 0:
        return 0.0
    precision = ctp / (ctp + cfp)
    recall = ctp / n_positive
    if precision > 0 and recall > 0:
        beta_squared = beta * beta
        return float(
            (1 + beta_squared) * (precision * recall) / (beta_squared * precision + recall)
        )
    return 0.0
