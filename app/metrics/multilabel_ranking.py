"""Multilabel ranking metrics: each row scores every label, the key says which are relevant.

scikit-learn's ``label_ranking_loss``, ``coverage_error`` and
``label_ranking_average_precision_score`` loop over rows in Python; here every row is sorted at
once with ``np.lexsort(axis=1)`` and the counts come from cumulative sums, in blocks of rows to
bound memory.
"""

from collections.abc import Iterator

import numpy as np

from app.metrics._checks import check_columns, check_sample_weight, check_zero_one
from app.metrics.errors import MetricInputError

_BLOCK_CELLS = 1 << 21  # cells sorted per block: a few tens of MB of temporaries


def _blocks(n_rows: int, n_labels: int) -> Iterator[slice]:
    step = max(1, _BLOCK_CELLS // max(n_labels, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def _check(
    y_true: np.ndarray, y_score: np.ndarray, sample_weight: np.ndarray | None, *, min_labels: int
) -> np.ndarray:
    check_columns(y_true, y_score)
    if y_true.shape[1] < min_labels:
        raise MetricInputError(
            "this metric needs at least two label columns; with one, every row ranks a single "
            "label (scikit-learn: 'binary format is not supported')",
            source="answer_key",
        )
    relevant = check_zero_one(y_true)
    check_sample_weight(sample_weight, len(y_true))
    return relevant


def _mean(values: np.ndarray, sample_weight: np.ndarray | None) -> float:
    return float(np.average(values, weights=sample_weight))


def label_ranking_loss(
    y_true: np.ndarray, y_score: np.ndarray, *, sample_weight: np.ndarray | None = None
) -> float:
    """Mean over rows of the fraction of (relevant, irrelevant) label pairs ordered wrongly.

    Reference: ``sklearn.metrics.label_ranking_loss``. A tie counts as an error
    (``score[relevant] <= score[irrelevant]``); a row with all or no labels relevant scores 0.
    Weights may be negative; weights summing to zero are refused.

    Parameters
    ----------
    y_true : ndarray of float, shape (n, k)
        0/1 relevance of each label.
    y_score : ndarray of float, shape (n, k)
        A score per label.
    sample_weight : ndarray of float, shape (n,), optional
        A weight per row; negative weights are allowed, a zero sum is refused.

    Returns
    -------
    float
        In [0, 1] for non-negative weights; lower is better.

    Examples
    --------
    >>> y_true = np.array([[1, 0, 0], [0, 0, 1]])
    >>> y_score = np.array([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])
    >>> label_ranking_loss(y_true, y_score)
    0.75
    >>> label_ranking_loss(y_true, y_score, sample_weight=np.array([-1.0, 2.0]))
    1.5
    """
    relevant = _check(y_true, y_score, sample_weight, min_labels=2)
    n_rows, n_labels = relevant.shape
    wrong = np.empty(n_rows, dtype=np.int64)
    for rows in _blocks(n_rows, n_labels):
        # Sort by score; among equal scores the relevant labels first, so every irrelevant label
        # at or after a relevant one in this order scores >= it: exactly the wrongly ordered pairs.
        order = np.lexsort((~relevant[rows], y_score[rows]), axis=1)
        rel = np.take_along_axis(relevant[rows], order, axis=1)
        irrelevant_seen = np.cumsum(~rel, axis=1)
        irrelevant_after = irrelevant_seen[:, -1:] - irrelevant_seen
        wrong[rows] = np.where(rel, irrelevant_after, 0).sum(axis=1)
    n_pos = relevant.sum(axis=1)
    pairs = n_pos * (n_labels - n_pos)
    loss = np.zeros(n_rows, dtype=np.float64)
    np.divide(wrong, pairs, out=loss, where=pairs > 0)
    return _mean(loss, sample_weight)


def coverage_error(
    y_true: np.ndarray, y_score: np.ndarray, *, sample_weight: np.ndarray | None = None
) -> float:
    """Mean number of top-scored labels needed to cover every relevant label (ties count in).

    Reference: ``sklearn.metrics.coverage_error``; a row with no relevant label counts 0.

    Parameters
    ----------
    y_true : ndarray of float, shape (n, k)
        0/1 relevance of each label.
    y_score : ndarray of float, shape (n, k)
        A score per label.
    sample_weight : ndarray of float, shape (n,), optional
        A weight per row; negative weights are allowed, a zero sum is refused.

    Returns
    -------
    float
        Between 0 and k for non-negative weights; lower is better.

    Examples
    --------
    >>> y_true = np.array([[1, 0, 0], [0, 0, 1]])
    >>> coverage_error(y_true, np.array([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]))
    2.5
    """
    relevant = _check(y_true, y_score, sample_weight, min_labels=2)
    lowest_relevant = np.where(relevant, y_score, np.inf).min(axis=1)
    coverage = (y_score >= lowest_relevant[:, None]).sum(axis=1)
    coverage[~relevant.any(axis=1)] = 0
    return _mean(coverage, sample_weight)


def label_ranking_average_precision(
    y_true: np.ndarray, y_score: np.ndarray, *, sample_weight: np.ndarray | None = None
) -> float:
    """Label ranking average precision (LRAP).

    Reference: ``sklearn.metrics.label_ranking_average_precision_score``. For each relevant
    label, the fraction of labels scored at least as high that are relevant, averaged; a row
    with all or no labels relevant scores 1, and so does a single label column.

    Parameters
    ----------
    y_true : ndarray of float, shape (n, k)
        0/1 relevance of each label.
    y_score : ndarray of float, shape (n, k)
        A score per label.
    sample_weight : ndarray of float, shape (n,), optional
        A weight per row; negative weights are allowed, a zero sum is refused.

    Returns
    -------
    float
        In (0, 1] for non-negative weights; higher is better.

    Examples
    --------
    >>> label_ranking_average_precision(np.array([[1, 0, 0], [0, 0, 1]]),
    ...                                 np.array([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]))
    0.41666666666666663
    """
    relevant = _check(y_true, y_score, sample_weight, min_labels=1)
    n_rows, n_labels = relevant.shape
    n_rel = relevant.sum(axis=1)
    precision_sum = np.zeros(n_rows, dtype=np.float64)
    positions = np.arange(n_labels)
    for rows in _blocks(n_rows, n_labels):
        order = np.argsort(y_score[rows], axis=1, kind="stable")
        score = np.take_along_axis(y_score[rows], order, axis=1)
        rel = np.take_along_axis(relevant[rows], order, axis=1)
        # Ascending order: a label's rank from the top counts everything from the start of its
        # tie group onwards ("max" rank of the reversed scores).
        starts = np.ones(score.shape, dtype=bool)
        np.not_equal(score[:, 1:], score[:, :-1], out=starts[:, 1:])
        group_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
        relevant_before = np.cumsum(rel, axis=1) - rel
        relevant_at_or_above = n_rel[rows, None] - np.take_along_axis(
            relevant_before, group_start, axis=1
        )
        ratio = relevant_at_or_above / (n_labels - group_start)
        precision_sum[rows] = np.where(rel, ratio, 0.0).sum(axis=1)
    per_row = np.ones(n_rows, dtype=np.float64)
    partial = (n_rel > 0) & (n_rel < n_labels)
    per_row[partial] = precision_sum[partial] / n_rel[partial]
    return _mean(per_row, sample_weight)
