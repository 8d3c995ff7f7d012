"""The Coleridge Initiative "Show US the Data" metric: micro F-beta over fuzzy-matched strings.

Vectorised across rows: every '|'-segment becomes a set of word ids, and the Jaccard of each
(ground truth, prediction) pair of a row that shares at least one word comes from one sort-merge
join on (row, word). Pairs that share no word have Jaccard 0, below any allowed threshold, so
they never need to exist.
"""

import numpy as np

from app.metrics._checks import check_one_column
from app.metrics._text import _ROW_BREAK, factorize, first_of_each

# Replaces '|' in the joined text, so one split yields words, segment ends and row ends.
_SEGMENT_BREAK = "\x00podium:segment\x00"


def _segment_tokens(cells: np.ndarray) -> tuple[list[str], tuple[np.ndarray, np.ndarray] | None]:
    """Lower-cased words of all cells, in order, and how they group into segments and rows.

    The fast path joins everything and puts segment-end and row-end marker tokens between the
    words (the grouping is read off those later: ``None`` here). Lower-casing the joined text
    equals lower-casing each segment: '|' and the spaces around the markers are neither cased
    nor case-ignorable, so they stop the one context rule of ``str.lower`` (final sigma) exactly
    as a segment end does.
    """
    text = f" {_ROW_BREAK} ".join(cells)
    if text.count(_ROW_BREAK) == max(len(cells) - 1, 0) and _SEGMENT_BREAK not in text:
        return text.lower().replace("|", f" {_SEGMENT_BREAK} ").split(), None
    # A cell holding a marker itself (vanishingly unlikely): the same result, cell by cell.
    words: list[str] = []
    word_segment: list[int] = []
    segment_rows: list[int] = []
    for row, cell in enumerate(cells):
        for segment in cell.split("|"):
            segment_words = segment.lower().split()
            words.extend(segment_words)
            word_segment.extend([len(segment_rows)] * len(segment_words))
            segment_rows.append(row)
    return words, (np.array(word_segment, dtype=np.int64), np.array(segment_rows, dtype=np.int64))


def _segments(ids: np.ndarray, vocabulary: dict[str, int], grouping):  # type: ignore[no-untyped-def]
    """Word ids, the segment of each word and the row of each segment."""
    if grouping is not None:
        return ids, *grouping
    is_row_end = ids == vocabulary.get(_ROW_BREAK, -1)
    is_end = is_row_end | (ids == vocabulary.get(_SEGMENT_BREAK, -1))
    ends = np.flatnonzero(is_end)
    segment_rows = np.concatenate([[0], np.cumsum(is_row_end)[ends]])
    words = ~is_end
    return ids[words], np.cumsum(is_end)[words], segment_rows


def _word_sets(
    ids: np.ndarray, segment: np.ndarray, bound: int, n_segments: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (segment, word id) pairs in segment order, and each segment's set size."""
    keys = first_of_each(segment * bound + ids)[0]
    segment, word = np.divmod(keys, bound)
    return segment, word, np.bincount(segment, minlength=n_segments)


def _first_in_code_point_order(
    truth: np.ndarray, pred: np.ndarray, pred_cells: np.ndarray, pred_rows: np.ndarray
) -> np.ndarray:
    """For candidate (truth, pred) pairs grouped by truth: the pair whose prediction sorts first.

    Only the few tied candidates are ranked, with Python's own ``sorted`` on the original text.
    """
    texts = _segment_texts(pred_cells, pred_rows, np.unique(pred))
    rank = {segment: r for r, segment in enumerate(sorted(texts, key=lambda s: (texts[s], s)))}
    ranks = np.fromiter(map(rank.__getitem__, pred.tolist()), dtype=np.int64, count=pred.size)
    order = np.lexsort((ranks, truth))
    first = np.ones(order.size, dtype=bool)
    first[1:] = truth[order][1:] != truth[order][:-1]
    return order[first]


def _segment_texts(cells: np.ndarray, rows: np.ndarray, segments: np.ndarray) -> dict[int, str]:
    """Original text of the given global segment numbers."""
    starts = np.searchsorted(rows, np.arange(len(cells)))  # first segment number of each row
    texts = {}
    for segment in segments.tolist():
        row = int(rows[segment])
        texts[segment] = cells[row].split("|")[segment - int(starts[row])]
    return texts


def coleridge_counts(
    y_true: np.ndarray, y_pred: np.ndarray, *, threshold: float = 0.5
) -> tuple[int, int, int]:
    """Pooled (TP, FP, FN) of the Coleridge matching over all rows."""
    check_one_column(y_true, y_pred)
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    true_words, true_grouping = _segment_tokens(y_true)
    pred_words, pred_grouping = _segment_tokens(y_pred)
    (true_tokens, pred_tokens), vocabulary, bound = factorize(true_words, pred_words)
    true_ids, true_seg, true_rows = _segments(true_tokens, vocabulary, true_grouping)
    pred_ids, pred_seg, pred_rows = _segments(pred_tokens, vocabulary, pred_grouping)
    n_pred_segments = len(pred_rows)
    true_seg, true_word, true_size = _word_sets(true_ids, true_seg, bound, len(true_rows))
    pred_seg, pred_word, pred_size = _word_sets(pred_ids, pred_seg, bound, n_pred_segments)
    n_true = int(np.count_nonzero(true_size))  # segments with no words are dropped
    n_pred = int(np.count_nonzero(pred_size))
    if n_true == 0 or n_pred == 0:
        return 0, n_pred, n_true

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
    pair_codes = np.sort(true_seg[left] * n_pred_segments + pred_seg[right], kind="stable")
    if pair_codes.size == 0:
        return 0, n_pred, n_true
    new_pair = np.ones(pair_codes.size, dtype=bool)
    np.not_equal(pair_codes[1:], pair_codes[:-1], out=new_pair[1:])
    starts = np.flatnonzero(new_pair)
    shared = np.diff(np.append(starts, pair_codes.size))
    truth, pred = np.divmod(pair_codes[starts], n_pred_segments)

    # Each ground truth takes its best prediction; ties go to the first in code-point order.
    jaccard = shared / (true_size[truth] + pred_size[pred] - shared)
    new_truth = np.ones(truth.size, dtype=bool)
    np.not_equal(truth[1:], truth[:-1], out=new_truth[1:])
    truth_start = np.flatnonzero(new_truth)
    best = np.maximum.reduceat(jaccard, truth_start)
    group = np.cumsum(new_truth) - 1
    candidate = (jaccard == best[group]) & (best[group] >= threshold)
    n_candidates = np.bincount(group[candidate], minlength=truth_start.size)
    single = candidate & (n_candidates[group] == 1)
    tied = candidate & (n_candidates[group] > 1)
    chosen_pred = pred[single]
    if tied.any():
        pick = _first_in_code_point_order(truth[tied], pred[tied], y_pred, pred_rows)
        chosen_pred = np.concatenate([chosen_pred, pred[tied][pick]])
    tp = int(chosen_pred.size)
    marked = np.zeros(n_pred_segments, dtype=bool)
    marked[chosen_pred] = True
    fp = n_pred - int(np.count_nonzero(marked))
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

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        Key cells: '|'-separated ground-truth strings.
    y_pred : ndarray of str, shape (n,)
        Submission cells: '|'-separated predicted strings.
    beta : float, default 0.5
        Weight of recall against precision.
    threshold : float, default 0.5
        Lowest word Jaccard that counts as a match, in (0, 1].

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> truth = ("baccalaureate and beyond longitudinal study|baccalaureate and beyond|"
    ...          "beginning postsecondary student|education longitudinal study|"
    ...          "national education longitudinal study")
    >>> pred = "postsecondary student|education longitudinal study|xyz"
    >>> round(coleridge_fbeta(np.array([truth], dtype=object), np.array([pred], dtype=object)), 6)
    0.714286
    """
    tp, fp, fn = coleridge_counts(y_true, y_pred, threshold=threshold)
    if tp == 0:
        return 0.0
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    beta_squared = beta**2
    return float((1 + beta_squared) * precision * recall / ((beta_squared * precision) + recall))
