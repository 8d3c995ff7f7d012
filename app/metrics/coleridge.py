"""The Coleridge Initiative "Show US the Data" metric: micro F-beta over fuzzy-matched strings.

Vectorised across rows: every '|'-segment becomes a set of word ids, and the Jaccard of each
(ground truth, prediction) pair of a row that shares at least one word comes from one sort-merge
join on (row, word). Pairs that share no word have Jaccard 0, below any allowed threshold, so
they never need to exist.
"""

import operator

import numpy as np

from app.metrics._checks import check_one_column
from app.metrics._text import factorize, split_cells

_split_bar = operator.methodcaller("split", "|")


def _segments(cells: np.ndarray) -> tuple[list[str], np.ndarray, list[list[str]]]:
    """Segments with at least one word: their text, their row and their lower-cased words."""
    segments, rows, _ = split_cells(cells, _split_bar)
    words = list(map(str.split, map(str.lower, segments)))
    has_words = np.fromiter(map(bool, words), dtype=bool, count=len(words))
    if not has_words.all():
        keep = np.flatnonzero(has_words).tolist()
        segments = [segments[i] for i in keep]
        words = [words[i] for i in keep]
        rows = rows[has_words]
    return segments, rows, words


def _word_sets(words: list[list[str]], ids: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (segment, word id) pairs, sorted by segment, and each segment's set size."""
    counts = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    segment = np.repeat(np.arange(len(words), dtype=np.int64), counts)
    keys = np.unique(segment * bound + ids)
    segment, word = np.divmod(keys, bound)
    return np.stack([segment, word]), np.bincount(segment, minlength=len(words))


def _code_point_rank(strings: list[str]) -> np.ndarray:
    """Rank of each string in ``sorted(strings)`` (stable, code-point order)."""
    order = sorted(range(len(strings)), key=strings.__getitem__)
    rank = np.empty(len(strings), dtype=np.int64)
    rank[order] = np.arange(len(strings))
    return rank


def coleridge_counts(
    y_true: np.ndarray, y_pred: np.ndarray, *, threshold: float = 0.5
) -> tuple[int, int, int]:
    """Pooled (TP, FP, FN) of the Coleridge matching over all rows."""
    check_one_column(y_true, y_pred)
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    _, true_rows, true_words = _segments(y_true)
    pred_text, pred_rows, pred_words = _segments(y_pred)
    n_true, n_pred = len(true_words), len(pred_words)
    if n_true == 0 or n_pred == 0:
        return 0, n_pred, n_true
    (true_ids, pred_ids), bound = factorize(
        [w for ws in true_words for w in ws], [w for ws in pred_words for w in ws]
    )
    (true_seg, true_word), true_size = _word_sets(true_words, true_ids, bound)
    (pred_seg, pred_word), pred_size = _word_sets(pred_words, pred_ids, bound)

    # Join on (row, word): every (truth, prediction) pair of a row sharing a word, once per word.
    true_key = true_rows[true_seg] * bound + true_word
    pred_key = pred_rows[pred_seg] * bound + pred_word
    pred_order = np.argsort(pred_key, kind="stable")
    sorted_key = pred_key[pred_order]
    lo = np.searchsorted(sorted_key, true_key, side="left")
    matches = np.searchsorted(sorted_key, true_key, side="right") - lo
    left = np.repeat(np.arange(len(true_key)), matches)
    offset = np.arange(left.size) - np.repeat(np.cumsum(matches) - matches, matches)
    right = pred_order[lo[left] + offset]
    pair, shared = np.unique(true_seg[left] * n_pred + pred_seg[right], return_counts=True)
    truth, pred = np.divmod(pair, n_pred)

    jaccard = shared / (true_size[truth] + pred_size[pred] - shared)
    # Each ground truth takes its best prediction; ties go to the first in sorted order.
    best_first = np.lexsort((_code_point_rank(pred_text)[pred], -jaccard, truth))
    first_of_truth = np.ones(best_first.size, dtype=bool)
    first_of_truth[1:] = truth[best_first][1:] != truth[best_first][:-1]
    best = best_first[first_of_truth]
    matched = best[jaccard[best] >= threshold]
    tp = int(matched.size)
    fp = n_pred - int(np.unique(pred[matched]).size)
    return tp, fp, n_true - tp


def coleridge_fbeta(
    y_true: np.ndarray, y_pred: np.ndarray, *, beta: float = 0.5, threshold: float = 0.5
) -> float:
    """Micro F-beta of '|'-separated strings matched by word Jaccard.

    Reference: the Coleridge Initiative "Show US the Data" evaluation (seed 000), corrected: a
    cell is split on ``|`` and segments with no words are dropped; Jaccard compares
    ``set(s.lower().split())``; predictions are sorted by code point; each ground truth takes
    its best prediction (ties to the first in sorted order) and is a TP when the Jaccard reaches
    ``threshold`` (marking that prediction, which may match several ground truths) and an FN
    otherwise; unmarked predictions are FPs; counts are pooled over all rows; no TP scores 0.

    >>> truth = "baccalaureate and beyond longitudinal study|baccalaureate and beyond|beginning postsecondary student|education longitudinal study|national education longitudinal study"
    >>> round(coleridge_fbeta(np.array([truth], dtype=object),
    ...                       np.array(["postsecondary student|education longitudinal study|xyz"], dtype=object)), 6)
    0.714286
    """
    tp, fp, fn = coleridge_counts(y_true, y_pred, threshold=threshold)
    if tp == 0:
        return 0.0
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    beta_squared = beta**2
    return float((1 + beta_squared) * precision * recall / ((beta_squared * precision) + recall))
