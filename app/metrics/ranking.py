"""Probabilistic and ranking metrics on binary targets."""

import numpy as np

from app.metrics._checks import check_binary_target, check_same_length


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given the mean of the ranks they span (``scipy.stats.rankdata``)."""
    order = np.argsort(values, kind="stable")
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


def roc_auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Area under the ROC curve, computed as the Mann-Whitney U statistic (ties count half).

    Reference: ``sklearn.metrics.roc_auc_score`` for binary targets.

    >>> roc_auc(np.array([0.0, 0.0, 1.0, 1.0]), np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    """
    check_same_length(y_true, y_score)
    positive = check_binary_target(y_true)
    n_pos = int(positive.sum())
    n_neg = len(y_true) - n_pos
    rank_sum = average_ranks(y_score)[positive].sum()
    return float((rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))
