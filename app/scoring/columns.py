"""A leaderboard's columns: resolving their definitions, scoring every column in one pass, and
the string that breaks ties the board's way.

A column is a catalogue metric with its params, computed from other columns (``mean``,
``sum``, ``min``, ``max``, or ``average_rank``: see :data:`BOARD_OPS`), or written by an imported scoring program (``"scorer": "program"``,
with its stated direction and the name the program writes it under, ``source_key``). The first column ranks, the next ones break ties in order. Every
catalogue column reads the same aligned predictions, so a file is read and validated once
whatever the number of columns; the definitions are refused up front when two metrics would read
a submission differently. Pure: definitions in, numbers out.
"""

import math
import struct
from collections import Counter
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
# Computed where the board is ranked, not per submission: a row's rank in each input column
# among the board's rows, averaged (app.leaderboard.ranks). A submission's own row holds no
# value in it; as the ranking column, its score is the number of inputs it lacks (0: none),
# which is what picks a team's standing entry (app.jobs.tasks).
AVERAGE_RANK = "average_rank"
BOARD_OPS = (AVERAGE_RANK,)
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
    # Written by an imported scoring program under ``source_key`` (no catalogue metric).
    program: bool = False
    source_key: str | None = None

    @property
    def computed(self) -> bool:
        return self.op is not None

    @property
    def on_board(self) -> bool:
        """Whether its value is computed over the board's rows (see :data:`BOARD_OPS`)."""
        return self.op in BOARD_OPS

    @property
    def task(self) -> str | None:
        """The task of a multi-task phase this column belongs to (None: the phase's own)."""
        task = self.raw.get("task")
        return None if task is None else str(task)

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
    # A multi-task phase's tasks each hold as many columns as a phase (app.scoring.tasks).
    per_task = Counter(raw.get("task") for raw in definitions)
    if max(per_task.values()) > MAX_COLUMNS:
        raise ColumnError(where, f"at most {MAX_COLUMNS} columns, not {max(per_task.values())}")
    columns: dict[str, Column] = {}
    order: list[str] = []
    deferred: list[tuple[str, str, str, Any, bool, Mapping[str, Any], Any, Any]] = []
    # The first catalogue column of the board (of each task: a multi-task phase's tasks each
    # read a file of their own) and its shape, which every other one must share.
    firsts: dict[Any, tuple[tuple[str, str, tuple[str, ...]], str]] = {}
    for i, raw in enumerate(definitions):
        at = f"{where}[{i}]"
        key = str(raw["key"])
        if key in order:
            raise ColumnError(f"{at}.key", f"duplicate column key '{key}'")
        title = str(raw.get("title") or key)
        precision, hidden = raw.get("precision"), bool(raw.get("hidden", False))
        computed, metric_def = raw.get("computed"), raw.get("metric")
        program = raw.get("scorer") == "program"
        if sum(x for x in (computed is not None, metric_def is not None, program)) != 1:
            raise ColumnError(
                at,
                "give a column one of 'metric', 'computed' or 'scorer': 'program', "
                "not several or none",
            )
        stated = raw.get("direction")
        if stated is not None and stated not in ("maximize", "minimize"):
            raise ColumnError(f"{at}.direction", f"'{stated}' is not maximize or minimize")
        if program:
            if stated is None:
                raise ColumnError(
                    f"{at}.direction", "a column written by a program states its direction"
                )
            source = str(raw.get("source_key") or key)
            order.append(key)
            columns[key] = Column(
                key, title, stated, precision=precision, hidden=hidden, raw=dict(raw),
                program=True, source_key=source,
            )  # fmt: skip
            continue
        if metric_def is not None:
            try:
                metric = lookup(str(metric_def["name"]))
                params = metric.parse_params(metric_def.get("params"))
            except UnknownMetric as exc:
                raise ColumnError(f"{at}.metric.name", str(exc)) from None
            except MetricParamsError as exc:
                raise ColumnError(f"{at}.metric.params", str(exc)) from None
            if stated is not None and stated != metric.direction:
                raise ColumnError(
                    f"{at}.direction", f"'{metric.name}' sorts {metric.direction}, not {stated}"
                )
            this = shape(metric, params)
            first = firsts.setdefault(raw.get("task"), (this, key))
            if this != first[0]:
                raise ColumnError(
                    f"{at}.metric",
                    f"'{metric.name}' reads a submission differently from column "
                    f"'{first[1]}' ({_describe(this)} against {_describe(first[0])}); every "
                    "column must read the same file",
                )
            order.append(key)
            columns[key] = Column(
                key, title, metric.direction, metric, params, None, (), precision, hidden, dict(raw)
            )
            continue
        assert computed is not None  # checked above: a column is one or the other
        order.append(key)
        deferred.append((at, key, title, precision, hidden, raw, stated, computed))
    # Computed columns may read any other column, the ones shown after them too (the ranking
    # column comes first and is often a mean of the others): resolved once their inputs are.
    while deferred:
        ready = [d for d in deferred if all(str(k) in columns for k in d[7].get("of") or ())]
        if not ready:
            at, key, *_rest, computed = deferred[0]
            missing = [str(k) for k in computed["of"] if str(k) not in columns]
            unknown = [k for k in missing if k not in order or k == key]
            raise ColumnError(
                f"{at}.computed.of",
                f"unknown column(s) {', '.join(unknown)}; a computed column combines other "
                "columns of the board"
                if unknown
                else f"reads {', '.join(missing)}, which read(s) it back: a cycle",
            )
        for item in ready:
            deferred.remove(item)
            columns[item[1]] = _computed(columns, *item)
    columns = {k: columns[k] for k in order}
    for task in dict.fromkeys(c.task for c in columns.values()):
        programs = [c.key for c in columns.values() if c.program and c.task == task]
        reading = firsts.get(task)
        if reading is None and not programs and task is not None:
            raise ColumnError(
                where,
                f"task '{task}' needs a column of its own: a catalogue metric or one written "
                "by its program",
            )
        if reading is not None and programs:
            raise ColumnError(
                where,
                f"column '{programs[0]}' is written by a program and column '{reading[1]}' by a "
                "catalogue metric; a board (a task) is scored by one or the other",
            )
    if not firsts and not any(c.program for c in columns.values()):
        raise ColumnError(
            where, "at least one column must be a catalogue metric or written by a program"
        )
    return list(columns.values())


def _computed(
    columns: Mapping[str, Column],
    at: str,
    key: str,
    title: str,
    precision: Any,
    hidden: bool,
    raw: Mapping[str, Any],
    stated: Any,
    computed: Mapping[str, Any],
) -> Column:
    """A computed column whose inputs are resolved in ``columns``."""
    op, of = str(computed["op"]), tuple(str(k) for k in computed["of"])
    if op not in OPS and op not in BOARD_OPS:
        raise ColumnError(
            f"{at}.computed.op", f"'{op}' is not one of {', '.join([*OPS, *BOARD_OPS])}"
        )
    if not of:
        raise ColumnError(f"{at}.computed.of", "name at least one column")
    ranked = [k for k in of if columns[k].on_board]
    if ranked:
        raise ColumnError(
            f"{at}.computed.of",
            f"reads {', '.join(ranked)}, an average rank, which exists only on a board",
        )
    if op in BOARD_OPS:
        untasked = [k for k in of if columns[k].task is None]
        if untasked:
            raise ColumnError(
                f"{at}.computed.of",
                f"an average rank combines tasks' columns ({', '.join(untasked)} belongs to no "
                "task); give the phase tasks",
            )
        # Each input is ranked its own way, so their directions may differ; a lower average
        # rank is better.
        if stated is not None and stated != "minimize":
            raise ColumnError(f"{at}.direction", f"an average rank sorts minimize, not {stated}")
        return Column(key, title, "minimize", None, None, op, of, precision, hidden, dict(raw))
    directions = {columns[k].direction for k in of}
    if len(directions) > 1:
        raise ColumnError(
            f"{at}.computed.of",
            "its inputs' directions disagree ("
            + ", ".join(f"{k}: {columns[k].direction}" for k in of)
            + "); combine columns sorted the same way",
        )
    direction = directions.pop()
    if stated is not None and stated != direction:
        raise ColumnError(
            f"{at}.direction",
            f"a computed column sorts as its inputs do ({direction}), not {stated}",
        )
    return Column(key, title, direction, None, None, op, of, precision, hidden, dict(raw))


def _describe(reads: tuple[str, str, tuple[str, ...]]) -> str:
    cell, count, extra = reads
    words = f"{'one' if count == 'one' else 'several'} {cell} column(s)"
    return words + (f" and key column(s) {', '.join(extra)}" if extra else "")


def is_program(columns: Sequence[Column]) -> bool:
    """Whether an imported scoring program writes these columns (no catalogue metric reads
    the files: see :func:`resolve_columns`, which never mixes the two)."""
    return any(c.program for c in columns)


def reading_metric(columns: Sequence[Column]) -> Column:
    """The column whose metric reads files and keys: the ranking column, or for a computed
    ranking column the first catalogue column it rests on (for program columns, the first
    program column it rests on, which has no metric)."""
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
    for column in _inputs_first(columns):
        if not column.computed:
            values[column.key] = {s: scored[column.key].get(s) for s in SPLITS}
            continue
        values[column.key] = {}
        for split in SPLITS:
            inputs = [values[k][split] for k in column.of]
            present = [v for v in inputs if v is not None]
            if column.on_board:
                values[column.key][split] = None  # the board ranks it: no value of a row's own
                continue
            values[column.key][split] = (
                OPS[column.op](present) if len(present) == len(inputs) else None  # type: ignore[index]
            )
    return values


def _inputs_first(columns: Sequence[Column]) -> list[Column]:
    """The columns in an order where each computed one follows its inputs."""
    done: set[str] = set()
    out: list[Column] = []
    pending = list(columns)
    while pending:
        ready = [c for c in pending if not c.computed or all(k in done for k in c.of)]
        if not ready:  # unreachable for resolved columns (resolve_columns refuses cycles)
            raise ColumnError("columns", "computed columns read each other in a cycle")
        for column in ready:
            pending.remove(column)
            done.add(column.key)
            out.append(column)
    return out


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
