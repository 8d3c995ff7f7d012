"""Tokenising text cells into flat integer arrays without a Python-level loop per row.

All cells are joined into one string and split once (a C loop), tokens become integer ids through
one dict shared by the answer key and the predictions, and the rest is numpy. Allocating a list
per cell would cost more than the metric itself: every one is tracked by the garbage collector.
"""

import itertools

import numpy as np

# Marks the end of a row inside the joined text. It holds no whitespace, so it is one token;
# a cell that contains it (vanishingly unlikely) sends the cells down the per-cell path.
_ROW_BREAK = "\x00podium:row\x00"


def _split(cells: np.ndarray) -> tuple[list[str], np.ndarray | None]:
    """All tokens of all cells, in order, and the count per row when it is known already.

    The fast path splits one joined string, with ``_ROW_BREAK`` tokens between rows (the counts
    are then found from those, ``None`` here). A cell containing the marker goes per cell.
    """
    joined = f" {_ROW_BREAK} ".join(cells)
    if joined.count(_ROW_BREAK) == max(len(cells) - 1, 0):
        return joined.split(), None
    parts = [cell.split() for cell in cells]
    counts = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    return list(itertools.chain.from_iterable(parts)), counts


def factorize(*token_lists: list[str]) -> tuple[list[np.ndarray], dict[str, int], int]:
    """Dense integer ids for tokens, equal for equal strings across all lists; the vocabulary;
    and the number of distinct tokens (a bound above every id).

    ``dict.fromkeys`` and ``map(dict.__getitem__, ...)`` keep the per-token work in C.
    """
    distinct = dict.fromkeys(itertools.chain.from_iterable(token_lists))
    vocabulary = dict(zip(distinct, range(len(distinct)), strict=True))
    ids = [
        np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        for tokens in token_lists
    ]
    return ids, vocabulary, len(vocabulary)


def tokenize(*columns: np.ndarray) -> tuple[list[tuple[np.ndarray, np.ndarray]], int]:
    """Whitespace-split every cell of each column (``str.split()``).

    Returns, per column, ``(ids, counts)``: the id of each token, in row order, and the number of
    tokens in each row; plus a bound above every id. Equal strings get equal ids across all
    columns. :func:`rows_of` gives each token's row when a metric needs it.
    """
    split = [_split(cells) for cells in columns]
    all_ids, vocabulary, bound = factorize(*(tokens for tokens, _ in split))
    break_id = vocabulary.get(_ROW_BREAK, -1)
    result = []
    for ids, (_, counts) in zip(all_ids, split, strict=True):
        if counts is None:
            is_break = ids == break_id
            ends = np.append(np.flatnonzero(is_break), len(ids))
            counts = np.diff(ends, prepend=-1) - 1
            ids = ids[~is_break]
        result.append((ids, counts))
    return result, bound


def rows_of(counts: np.ndarray) -> np.ndarray:
    """The row of each token, from the number of tokens in each row."""
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def first_of_each(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of ``keys`` (sorted) and the position of each one's first occurrence.

    A stable argsort: keys built as ``row * bound + id`` arrive almost sorted, which it exploits.
    """
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    new = np.ones(len(keys), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return ordered[new], order[new]


def contains(sorted_values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``np.isin`` for a sorted, distinct ``sorted_values``, by binary search."""
    if sorted_values.size == 0:
        return np.zeros(len(queries), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_values, queries), sorted_values.size - 1)
    found: np.ndarray = sorted_values[at] == queries
    return found


def row_starts(lengths: np.ndarray) -> np.ndarray:
    """Position of each row's first token in the flat token array."""
    starts: np.ndarray = np.cumsum(lengths) - lengths
    return starts
