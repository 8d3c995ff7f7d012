"""Columns computed over a board's rows rather than per submission: ``average_rank``.

Each row's rank in each input column among the board's rows (equal values share the better
rank, as ranks on a board do), averaged over the inputs. A row missing an input value ranks
last in it, behind every row that has one: a task a submission did not score never lifts it
above one that scored it (Codabench #2470). Pure: values in, values out.
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any

from app.scoring.columns import Column, sortable

Values = dict[str, dict[str, float | None]]


def _ranks(values: Mapping[int, float | None], maximize: bool) -> dict[int, int]:
    """Each row's rank on one column; a missing value ranks last (the board's size)."""
    present = {r: v for r, v in values.items() if v is not None and not math.isnan(v)}
    ordered = sorted(present.values(), reverse=maximize)
    first: dict[float, int] = {}
    for place, value in enumerate(ordered, start=1):
        first.setdefault(value, place)
    last = len(values)
    return {r: first[present[r]] if r in present else last for r in values}


def with_board_columns(
    columns: Sequence[Column], rows: Mapping[int, Values], board: str
) -> dict[int, Values]:
    """``rows`` (a board's rows' stored values, by row id) with each board-time column's value
    on ``board`` computed over them."""
    out = {r: {k: dict(v) for k, v in values.items()} for r, values in rows.items()}
    by_key = {c.key: c for c in columns}
    for column in columns:
        if not column.on_board:
            continue
        ranks = [
            _ranks(
                {r: values.get(k, {}).get(board) for r, values in rows.items()},
                by_key[k].maximize,
            )
            for k in column.of
        ]
        for r in out:
            average = sum(rank[r] for rank in ranks) / len(ranks) if ranks else None
            out[r].setdefault(column.key, {})[board] = average
    return out


def place(values: Values, order: Sequence[Column], board: str) -> list[Any]:
    """A row's sort keys on ``board`` by the columns of ``order`` (best first, ascending): before
    an average rank, how many of its inputs the row lacks, so that a row lacking a task's value
    never ranks above one that has them all (Codabench #2470), whatever its average rank."""
    keys: list[Any] = []
    for column in order:
        if column.on_board:
            keys.append(sum(values.get(k, {}).get(board) is None for k in column.of))
        keys.append(sortable(values.get(column.key, {}).get(board), column.maximize))
    return keys
