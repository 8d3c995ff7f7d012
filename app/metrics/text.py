"""Metrics on cells that hold sets or lists of items: MAP@K and multilabel micro F1.

Cells are split on whitespace (``str.split()``: runs of any Unicode whitespace, no empty items),
items are compared exactly, and all the per-row work after the split is numpy on integer ids.
"""

import numpy as np

from app.metrics._checks import check_one_column
from app.metrics._text import contains, first_of_each, row_starts, rows_of, tokenize

# Rows up to this many kept predictions (and key items) are compared in a padded matrix, one
# column pair at a time; longer rows go through a sort-based path that is slower per item.
_PADDED_MAX_PREDICTIONS = 32
_PADDED_MAX_ITEMS = 64


def map_at_k(y_true: np.ndarray, y_pred: np.ndarray, *, k: int = 10) -> float:
    """Mean average precision at ``k`` over rows of space-separated items.

    Reference: Ben Hamner's ``apk`` / ``mapk`` (``ml_metrics``), the code Kaggle points to. Only
    the first ``k`` predictions count; a repeated prediction counts once but still takes its
    slot; a row's precision sum is divided by ``min(len(actual), k)`` where ``actual`` is the
    key cell's item list as written; a row with no true items scores 0 and stays in the mean.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        Key cells: the relevant items, space-separated.
    y_pred : ndarray of str, shape (n,)
        Submission cells: predicted items in ranked order, space-separated.
    k : int, default 10
        How many predictions per row count.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> y_true = np.array(["a b", "c", ""], dtype=object)
    >>> map_at_k(y_true, np.array(["a x b", "c c", "d"], dtype=object), k=3)
    0.611111111111111
    """
    check_one_column(y_true, y_pred)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    n = len(y_true)
    (true, pred), bound = tokenize(y_true, y_pred)
    true_counts, pred_counts = true[1], pred[1]
    width = int(min(k, pred_counts.max(initial=0)))
    if width <= _PADDED_MAX_PREDICTIONS and true_counts.max(initial=0) <= _PADDED_MAX_ITEMS:
        score = _precision_sums_padded(true, pred, n, width)
    else:
        score = _precision_sums_sorted(true, pred, n, k, bound)
    denominator = np.minimum(true_counts, k)
    ap = np.zeros(n, dtype=np.float64)
    np.divide(score, denominator, out=ap, where=denominator > 0)
    return float(np.mean(ap))


def _by_slot(ids: np.ndarray, counts: np.ndarray, width: int, fill: int) -> np.ndarray:
    """Tokens as a (width, n) matrix: row ``j`` holds every row's ``j``-th token, or ``fill``.

    Slot-major, so each slot is one contiguous vector for the comparisons below.
    """
    n = len(counts)
    out = np.full(width * n, fill, dtype=np.int64)
    starts = row_starts(counts)
    if counts.max(initial=0) <= width:
        # token i of row r sits at slot i - starts[r]: flat position (i - starts[r]) * n + r
        offset = np.repeat(np.arange(n) - starts * n, counts)
        out[np.arange(len(ids)) * n + offset] = ids
    else:
        slot = np.arange(len(ids)) - np.repeat(starts, counts)
        kept = slot < width
        out[slot[kept] * n + np.repeat(np.arange(n), counts)[kept]] = ids[kept]
    return out.reshape(width, n)


def _precision_sums_padded(
    true: tuple[np.ndarray, np.ndarray], pred: tuple[np.ndarray, np.ndarray], n: int, width: int
) -> np.ndarray:
    """apk's running ``score`` per row, one prediction slot at a time."""
    predicted = _by_slot(*pred, width, fill=-1)
    actual = _by_slot(*true, int(true[1].max(initial=0)), fill=-2)
    score = np.zeros(n, dtype=np.float64)
    hits = np.zeros(n, dtype=np.int64)
    hit = np.empty(n, dtype=bool)
    seen = np.empty(n, dtype=bool)
    for slot in range(width):
        p = predicted[slot]
        hit[:] = False
        for item in actual:
            hit |= item == p
        seen[:] = False
        for earlier in predicted[:slot]:
            seen |= earlier == p  # "p not in predicted[:i]"
        hit &= ~seen
        hits += hit
        # Adding 0.0 where there is no hit leaves the sum as apk's ``score +=`` leaves it.
        score += np.where(hit, hits / (slot + 1.0), 0.0)
    return score


def _precision_sums_sorted(true, pred, n: int, k: int, bound: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The same sums for long rows: first occurrences and membership by sorting (row, item) keys."""
    true_ids, true_counts = true
    pred_ids, pred_counts = pred
    true_rows, pred_rows = rows_of(true_counts), rows_of(pred_counts)
    slot = np.arange(len(pred_ids)) - np.repeat(row_starts(pred_counts), pred_counts)
    kept = slot < k
    pred_rows, pred_ids, slot = pred_rows[kept], pred_ids[kept], slot[kept]

    pred_keys = pred_rows * bound + pred_ids
    first_seen = np.zeros(len(pred_keys), dtype=bool)
    first_seen[first_of_each(pred_keys)[1]] = True
    true_keys = first_of_each(true_rows * bound + true_ids)[0]
    hit = first_seen & contains(true_keys, pred_keys)

    hits_so_far = np.cumsum(hit)
    kept_counts = np.bincount(pred_rows, minlength=n)
    nonempty = kept_counts > 0
    hits_before_row = np.repeat(
        (hits_so_far - hit)[row_starts(kept_counts)[nonempty]], kept_counts[nonempty]
    )
    precision_at_hit = np.where(hit, (hits_so_far - hits_before_row) / (slot + 1.0), 0.0)
    # bincount adds in row order, as apk's running ``score +=`` does.
    return np.bincount(pred_rows, weights=precision_at_hit, minlength=n)


def multilabel_micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Micro F1 over (row, tag) pairs; each cell is a whitespace-separated set of tags.

    Reference: ``sklearn.metrics.f1_score(average="micro", zero_division=0)`` on the
    ``MultiLabelBinarizer`` indicator matrices. Repeated tags in a cell count once; when every
    cell of both arrays is empty the score is 0.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        Key cells: whitespace-separated tags.
    y_pred : ndarray of str, shape (n,)
        Submission cells: whitespace-separated tags.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> y_true = np.array(["a b", "c", ""], dtype=object)
    >>> multilabel_micro_f1(y_true, np.array(["a", "c d", ""], dtype=object))
    0.6666666666666666
    """
    check_one_column(y_true, y_pred)
    ((true_ids, true_counts), (pred_ids, pred_counts)), bound = tokenize(y_true, y_pred)
    true_keys = first_of_each(rows_of(true_counts) * bound + true_ids)[0]
    pred_keys = first_of_each(rows_of(pred_counts) * bound + pred_ids)[0]
    if true_keys.size + pred_keys.size == 0:
        return 0.0
    tp = int(np.count_nonzero(contains(true_keys, pred_keys)))
    return float(2.0 * tp / (1.0 * true_keys.size + pred_keys.size))
