"""A leaderboard's columns: resolving their definitions, scoring every column in one pass, and
the string that breaks ties the board's way.

A column is a catalogue metric with its params, or computed from other columns (``mean``,
``sum``, ``min``, ``max``). The first column ranks, the next ones break ties in order. Every
catalogue column reads the same aligned predictions, so a file is read and validated once
whatever the number of columns; the definitions are refused up front when two metrics would read
a submission differently. Pure: definitions in, numbers out.
"""

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from app.metrics import Metric, MetricParamsError, UnknownMetric, get_metric
from app.scoring.intake import AnswerKeyTable

MAX_COLUMNS = 20
OPS: dict[str, Callable[[list[float]], float]] = {
    "mean": lambda xs: math.fsum(xs) / len(xs),
    "sum": math.fsum,
    "min": min,
    "max": max,
}
SPLITS = ("score", "public", "private")


class ColumnError(ValueError):
    """A column definition that cannot be used; ``field`` names where (``columns[2].metric``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    direction: str  # "maximize" or "minimize"
    metric: Metric | None = None
    params: BaseModel | None = None
    op: str | None = None
    of: tuple[str, ...] = ()
    precision: int | None = None
    hidden: bool = False
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def computed(self) -> bool:
        return self.op is not None

    @property
    def maximize(self) -> bool:
        return self.direction == "maximize"


def shape(metric: Metric, params: BaseModel) -> tuple[str, str, tuple[str, ...]]:
    """How a metric reads a submission and a key: cells, target columns, extra key columns."""
    return (metric.cell, metric.columns, tuple(sorted(metric.key_columns(params))))


def resolve_columns(
    definitions: Sequence[Mapping[str, Any]],
    *,
    lookup: Callable[[str], Metric] = get_metric,
    where: str = "columns",
) -> list[Column]:
    """Check and resolve column definitions (dicts as the API takes them), in board order."""
    if not definitions:
        raise ColumnError(where, "at least one column is needed")
    if len(definitions) > MAX_COLUMNS:
        raise ColumnError(where, f"at most {MAX_COLUMNS} columns, not {len(definitions)}")
    columns: dict[str, Column] = {}
    first: tuple[tuple[str, str, tuple[str, ...]], str] | None = None
    for i, raw in enumerate(definitions):
        at = f"{where}[{i}]"
        key = str(raw["key"])
        if key in columns:
            raise ColumnError(f"{at}.key", f"duplicate column key '{key}'")
        title = str(raw.get("title") or key)
        precision, hidden = raw.get("precision"), bool(raw.get("hidden", False))
        computed, metric_def = raw.get("computed"), raw.get("metric")
        if (computed is None) == (metric_def is None):
            raise ColumnError(
                at, "give a column either 'metric' or 'computed', not both or neither"
            )
        if metric_def is not None:
            try:
                metric = lookup(str(metric_def["name"]))
                params = metric.parse_params(metric_def.get("params"))
            except UnknownMetric as exc:
                raise ColumnError(f"{at}.metric.name", str(exc)) from None
            except MetricParamsError as exc:
                raise ColumnError(f"{at}.metric.params", str(exc)) from None
            this = shape(metric, params)
            if first is None:
                first = (this, key)
            elif this != first[0]:
                raise ColumnError(
                    f"{at}.metric",
                    f"'{metric.name}' reads a submission differently from column "
                    f"'{first[1]}' ({_describe(this)} against {_describe(first[0])}); every "
                    "column must read the same file",
                )
            columns[key] = Column(
                key, title, metric.direction, metric, params, None, (), precision, hidden, dict(raw)
            )
            continue
        assert computed is not None  # checked above: a column is one or the other
        op, of = str(computed["op"]), tuple(str(k) for k in computed["of"])
        if op not in OPS:
            raise ColumnError(f"{at}.computed.op", f"'{op}' is not one of {', '.join(OPS)}")
        unknown = [k for k in of if k not in columns]
        if not of or unknown:
            raise ColumnError(
                f"{at}.computed.of",
                f"unknown column(s) {', '.join(unknown)}; a computed column combines columns "
                "defined before it"
                if unknown
                else "name at least one column",
            )
        directions = {columns[k].direction for k in of}
        if len(directions) > 1:
            raise ColumnError(
                f"{at}.computed.of",
                "its inputs' directions disagree ("
                + ", ".join(f"{k}: {columns[k].direction}" for k in of)
                + "); combine columns sorted the same way",
            )
        columns[key] = Column(
            key, title, directions.pop(), None, None, op, of, precision, hidden, dict(raw)
        )
    if first is None:
        raise ColumnError(where, "at least one column must be a catalogue metric")
    return list(columns.values())


def _describe(reads: tuple[str, str, tuple[str, ...]]) -> str:
    cell, count, extra = reads
    words = f"{'one' if count == 'one' else 'several'} {cell} column(s)"
    return words + (f" and key column(s) {', '.join(extra)}" if extra else "")


def reading_metric(columns: Sequence[Column]) -> Column:
    """The column whose metric reads files and keys: the ranking column, or for a computed
    ranking column the first catalogue column it rests on."""
    by_key = {c.key: c for c in columns}
    column = columns[0]
    while column.computed:
        column = by_key[column.of[0]]
    return column


Values = dict[str, dict[str, float | None]]


def combine(columns: Sequence[Column], scored: Mapping[str, Mapping[str, float | None]]) -> Values:
    """Every column's (score, public, private), the computed ones from their inputs' values
    (a split one input lacks is lacking in the result too)."""
    values: Values = {}
    for column in columns:
        if not column.computed:
            values[column.key] = {s: scored[column.key].get(s) for s in SPLITS}
            continue
        values[column.key] = {}
        for split in SPLITS:
            inputs = [values[k][split] for k in column.of]
            present = [v for v in inputs if v is not None]
            values[column.key][split] = (
                OPS[column.op](present) if len(present) == len(inputs) else None  # type: ignore[index]
            )
    return values


def score_columns(
    columns: Sequence[Column],
    key: AnswerKeyTable,
    y_pred: np.ndarray,
    score: Callable[[Metric, BaseModel, AnswerKeyTable, np.ndarray], Any],
) -> Values:
    """Each catalogue column scored on the same aligned predictions by ``score`` (the one scoring
    function, returning an object with ``score``, ``public``, ``private``), then the computed."""
    scored: dict[str, dict[str, float | None]] = {}
    for column in columns:
        if column.computed:
            continue
        result = score(column.metric, column.params, key, y_pred)  # type: ignore[arg-type]
        scored[column.key] = {
            "score": result.score,
            "public": result.public,
            "private": result.private,
        }
    return combine(columns, scored)


def sortable(value: float | None, maximize: bool) -> str:
    """16 hex digits that sort as the value does the board's way (best first); a missing value
    sorts last."""
    if value is None or math.isnan(value):
        return "f" * 16
    ordered = -value if maximize else value
    bits = struct.unpack(">Q", struct.pack(">d", ordered + 0.0))[0]
    # IEEE order to unsigned order: flip the sign bit of positives, every bit of negatives.
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | 1 << 63
    return f"{min(bits, 0xFFFFFFFFFFFFFFFE):016x}"


def tie_key(columns: Sequence[Column], values: Values, split: str) -> str:
    """The tie-breaking columns' values (every column after the ranking one, in order) as one
    string whose plain ordering is the board's; empty for a single column."""
    return "".join(sortable(values[c.key][split], c.maximize) for c in columns[1:])
