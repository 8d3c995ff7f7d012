"""Tokenising text cells into flat arrays without a Python-level loop per row.

``map`` over C-implemented string methods and ``itertools.chain`` do the per-cell work; what
comes back is one flat list of tokens with the row each belongs to, and tokens turned into
integer ids shared by the answer key and the predictions, ready for numpy set operations.
"""

import itertools
from collections.abc import Callable, Sequence

import numpy as np


def split_cells(
    cells: np.ndarray, split: Callable[[str], list[str]] = str.split
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Split every cell; return the tokens, the row of each token and the count per row."""
    parts = list(map(split, cells))
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    tokens = list(itertools.chain.from_iterable(parts))
    rows = np.repeat(np.arange(len(parts), dtype=np.int64), lengths)
    return tokens, rows, lengths


def factorize(*token_lists: Sequence[str]) -> tuple[list[np.ndarray], int]:
    """Integer ids for tokens, equal ids for equal strings across all lists, and an id bound.

    Ids are unique per distinct token but not dense: a new token takes the running count.
    """
    vocabulary: dict[str, int] = {}
    counter = itertools.count()
    ids = [
        np.fromiter(map(vocabulary.setdefault, tokens, counter), dtype=np.int64, count=len(tokens))
        for tokens in token_lists
    ]
    return ids, next(counter)


def row_starts(lengths: np.ndarray) -> np.ndarray:
    """Position of each row's first token in the flat token array."""
    return np.cumsum(lengths) - lengths
