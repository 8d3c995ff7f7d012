"""Area under the ROC curve, for one binary target or the mean over several."""

import numpy as np

from app.metrics._checks import check_binary_target, check_columns, check_one_column
from app.metrics.errors import MetricInputError


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given the mean of the ranks they span (``scipy.stats.rankdata``)."""
    # Any sort will do (tied values share their mean rank); the default one is the fastest.
    order = np.argsort(values)
    ordered = values[order]
    starts_group = np.empty(len(values), dtype=bool)
    starts_group[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts_group[1:])
    starts = np.flatnonzero(starts_group)
    ends = np.append(starts[1:], len(values))
    group_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = group_rank[np.cumsum(starts_group) - 1]
    return ranks


def _auc(positive: np.ndarray, y_score: np.ndarray) -> float:
    # Mann-Whitney U: the fraction of (positive, negative) pairs ordered right, ties half.
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    rank_sum = average_ranks(y_score)[positive].sum()
    return float((rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Area under the ROC curve, computed as the Mann-Whitney U statistic (ties count half).

    Reference: ``sklearn.metrics.roc_auc_score`` for binary targets.

    Parameters
    ----------
    y_true : ndarray of float, shape (n,)
        0/1 labels.
    y_score : ndarray of float, shape (n,)
        Any real-valued scores, higher meaning more likely 1.

    Returns
    -------
    float
        In [0, 1]; 0.5 for constant scores.

    Examples
    --------
    >>> roc_auc(np.array([0.0, 0.0, 1.0, 1.0]), np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    """
    check_one_column(y_true, y_score)
    return _auc(check_binary_target(y_true), y_score)


def mean_columnwise_roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Mean of the ROC AUC of each target column.

    Reference: ``sklearn.metrics.roc_auc_score(average="macro")`` on a multilabel indicator key.
    Every column must hold both classes.

    Parameters
    ----------
    y_true : ndarray of float, shape (n, k)
        0/1 labels, one column per target.
    y_score : ndarray of float, shape (n, k)
        A score per target column.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> mean_columnwise_roc_auc(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]),
    ...                         np.array([[0.2, 0.9], [0.8, 0.3], [0.1, 0.2]]))
    0.5
    """
    check_columns(y_true, y_score)
    aucs = []
    for column in range(y_true.shape[1]):
        try:
            positive = check_binary_target(y_true[:, column])
        except MetricInputError as exc:
            raise MetricInputError(
                f"target column {column + 1}: {exc.message}", rows=exc.rows, source=exc.source
            ) from None
        aucs.append(_auc(positive, y_score[:, column]))
    return float(np.mean(aucs))
