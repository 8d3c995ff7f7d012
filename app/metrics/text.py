"""Metrics on cells that hold sets or lists of items: MAP@K and multilabel micro F1.

Cells are split on whitespace (``str.split()``: runs of any Unicode whitespace, no empty items),
items are compared exactly, and all the per-row work after the split is numpy on integer ids.
"""

import numpy as np

from app.metrics._checks import check_one_column
from app.metrics._text import factorize, row_starts, split_cells


def map_at_k(y_true: np.ndarray, y_pred: np.ndarray, *, k: int = 10) -> float:
    """Mean average precision at ``k`` over rows of space-separated items.

    Reference: Ben Hamner's ``apk`` / ``mapk`` (``ml_metrics``), the code Kaggle points to. Only
    the first ``k`` predictions count; a repeated prediction counts once but still takes its
    slot; a row's precision sum is divided by ``min(len(actual), k)`` where ``actual`` is the
    key cell's item list as written; a row with no true items scores 0 and stays in the mean.

    >>> map_at_k(np.array(["a b", "c", ""], dtype=object), np.array(["a x b", "c c", "d"], dtype=object), k=3)
    0.611111111111111
    """
    check_one_column(y_true, y_pred)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    n = len(y_true)
    true_tokens, true_rows, true_counts = split_cells(y_true)
    pred_tokens, pred_rows, pred_counts = split_cells(y_pred)
    (true_ids, pred_ids), bound = factorize(true_tokens, pred_tokens)

    slot = np.arange(len(pred_ids)) - np.repeat(row_starts(pred_counts), pred_counts)
    kept = slot < k
    pred_rows, pred_ids, slot = pred_rows[kept], pred_ids[kept], slot[kept]

    pred_keys = pred_rows * bound + pred_ids
    first_seen = np.zeros(len(pred_keys), dtype=bool)
    first_seen[np.unique(pred_keys, return_index=True)[1]] = True
    hit = first_seen & np.isin(pred_keys, true_rows * bound + true_ids)

    hits_so_far = np.cumsum(hit)
    kept_counts = np.bincount(pred_rows, minlength=n)
    hits_before_row = np.repeat((hits_so_far - hit)[row_starts(kept_counts)[kept_counts > 0]],
                                kept_counts[kept_counts > 0])
    precision_at_hit = np.where(hit, (hits_so_far - hits_before_row) / (slot + 1.0), 0.0)
    # bincount adds in row order, as apk's running ``score +=`` does.
    score = np.bincount(pred_rows, weights=precision_at_hit, minlength=n)
    denominator = np.minimum(true_counts, k)
    ap = np.zeros(n, dtype=np.float64)
    np.divide(score, denominator, out=ap, where=denominator > 0)
    return float(np.mean(ap))


def multilabel_micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Micro F1 over (row, tag) pairs; each cell is a whitespace-separated set of tags.

    Reference: ``sklearn.metrics.f1_score(average="micro", zero_division=0)`` on the
    ``MultiLabelBinarizer`` indicator matrices. Repeated tags in a cell count once; when every
    cell of both arrays is empty the score is 0.

    >>> multilabel_micro_f1(np.array(["a b", "c", ""], dtype=object), np.array(["a", "c d", ""], dtype=object))
    0.6666666666666666
    """
    check_one_column(y_true, y_pred)
    true_tokens, true_rows, _ = split_cells(y_true)
    pred_tokens, pred_rows, _ = split_cells(y_pred)
    (true_ids, pred_ids), bound = factorize(true_tokens, pred_tokens)
    true_keys = np.unique(true_rows * bound + true_ids)
    pred_keys = np.unique(pred_rows * bound + pred_ids)
    if true_keys.size + pred_keys.size == 0:
        return 0.0
    tp = np.intersect1d(true_keys, pred_keys, assume_unique=True).size
    return float(2.0 * tp / (1.0 * true_keys.size + pred_keys.size))
