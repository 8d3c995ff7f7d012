"""Area under the ROC curve, for one binary target or the mean over several."""

import numpy as np

from app.metrics._checks import check_binary_target, check_columns, check_one_column
from app.metrics.errors import MetricInputError


def _auc(positive: np.ndarray, y_score: np.ndarray) -> float:
    """Mann-Whitney U: the fraction of (positive, negative) pairs ordered right, ties half.

    Each positive's wins are counted by binary search among the sorted negative scores. Two
    value sorts beat one argsort of every row, and the counts are whole numbers, summed exactly.
    """
    pos = np.sort(y_score[positive])
    neg = np.sort(y_score[~positive])
    below = np.searchsorted(neg, pos, side="left")
    tied = np.searchsorted(neg, pos, side="right") - below
    wins = below.sum(dtype=np.float64) + 0.5 * tied.sum(dtype=np.float64)
    return float(wins / (len(pos) * len(neg)))


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
