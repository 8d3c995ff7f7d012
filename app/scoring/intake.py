"""Reading answer keys and submissions: parse with pyarrow, validate, align rows by id.

Used by the server, the workers and ``podium score`` alike. Every problem becomes an
:class:`IntakeError` whose message a competitor can act on: what is wrong, how many, which ids.
"""

import codecs
import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv
from pydantic import BaseModel

from app.metrics.registry import Metric

USAGE_COLUMN = "Usage"
USAGE_CODES = {"Public": 0, "Private": 1, "Ignored": 2}
PUBLIC, PRIVATE, IGNORED = 0, 1, 2
SHOWN = 5  # how many offending ids or rows a message names


class IntakeError(ValueError):
    """A file cannot be used; ``message`` names the problem for the person who uploaded it."""

    def __init__(self, message: str, *, kind: str = "invalid_file") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


@dataclass
class AnswerKeyTable:
    id_column: str
    target_columns: list[str]
    ids: pa.Array
    y_true: np.ndarray
    usage: np.ndarray | None
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.ids)

    def count(self, code: int) -> int:
        if self.usage is None:
            return self.n_rows if code != IGNORED else 0
        return int(np.count_nonzero(self.usage == code))


def _first_few(values: np.ndarray | list) -> str:
    shown = [str(v) for v in list(values[:SHOWN])]
    more = len(values) - len(shown)
    return ", ".join(repr(v) for v in shown) + (f" (and {more} more)" if more > 0 else "")


def _line_numbers(rows: np.ndarray) -> str:
    # Line 1 is the header, so data row i sits on line i + 2.
    return _first_few(np.asarray(rows) + 2)


def read_header(path: Path) -> list[str]:
    with open(path, "rb") as fh:
        head = fh.read(1 << 20)
    if not head.strip():
        raise IntakeError("the file is empty", kind="empty_file")
    if b"\x00" in head:
        raise IntakeError("the file is not a text CSV file (it contains NUL bytes)", kind="not_text")
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8) :]
    first_line = head.split(b"\n", 1)[0].rstrip(b"\r")
    try:
        text = first_line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntakeError(
            f"the header line is not valid UTF-8 (byte {exc.start})", kind="not_utf8"
        ) from None
    names = next(csv.reader([text]), [])
    if any(not n.strip() for n in names):
        raise IntakeError("the header has an empty column name", kind="bad_header")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise IntakeError(f"the header repeats column(s) {_first_few(dupes)}", kind="bad_header")
    return names


def _read_table(path: Path, column_types: dict[str, pa.DataType]) -> pa.Table:
    try:
        return pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(use_threads=True, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types=column_types,
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                null_values=[""],
                include_columns=list(column_types),
            ),
        )
    except pa.ArrowInvalid as exc:
        raise _explain_parse_error(path, column_types, exc) from None


def _explain_parse_error(
    path: Path, column_types: dict[str, pa.DataType], exc: pa.ArrowInvalid
) -> IntakeError:
    text = str(exc)
    if "UTF8" in text or "utf8" in text.lower():
        return IntakeError("the file is not valid UTF-8 text", kind="not_utf8")
    if "Expected" in text and "columns" in text:
        return IntakeError(
            f"a row has the wrong number of fields: {text.split(':', 1)[-1].strip()}",
            kind="ragged_row",
        )
    if "conversion error" in text:
        # Read the numeric columns again as text to say exactly which cells are not numbers.
        as_text = {name: pa.string() for name in column_types}
        table = _read_table(path, as_text)
        for name, dtype in column_types.items():
            if pa.types.is_floating(dtype):
                cells = table.column(name)
                bad = _non_numeric_rows(cells)
                if bad.size:
                    values = cells.take(pa.array(bad[:SHOWN])).to_pylist()
                    return IntakeError(
                        f"column '{name}' has {bad.size} non-numeric cell(s): "
                        f"values {_first_few(values)} on line(s) {_line_numbers(bad)}",
                        kind="non_numeric",
                    )
    return IntakeError(f"the file could not be parsed as CSV: {text}", kind="bad_csv")


def _non_numeric_rows(cells: pa.ChunkedArray) -> np.ndarray:
    stripped = pc.utf8_trim_whitespace(cells)
    numeric = pc.match_substring_regex(
        stripped, r"^[+-]?((\d+\.?\d*)|(\.\d+))([eE][+-]?\d+)?$|^[+-]?(inf|Inf|INF|nan|NaN|NAN)$"
    )
    return np.flatnonzero(~numeric.to_numpy(zero_copy_only=False))


def _target_type(metric: Metric) -> pa.DataType:
    return pa.float64() if metric.cell == "number" else pa.string()


def _column_values(table: pa.Table, name: str, cell: str, ids: pa.Array) -> np.ndarray:
    column = table.column(name)
    if cell == "number":
        nulls = np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))
        if nulls.size:
            raise IntakeError(
                f"column '{name}' has {nulls.size} empty cell(s), for id(s) "
                f"{_first_few(ids.take(pa.array(nulls[:SHOWN])).to_pylist())}",
                kind="empty_cells",
            )
        values = column.to_numpy().astype(np.float64, copy=False)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise IntakeError(
                f"column '{name}' has {bad.size} non-finite value(s) (NaN or ±inf), for id(s) "
                f"{_first_few(ids.take(pa.array(bad[:SHOWN])).to_pylist())}",
                kind="non_finite",
            )
        return values
    values = column.to_numpy(zero_copy_only=False)
    if cell == "label":
        empty = np.flatnonzero(values == "")
        if empty.size:
            raise IntakeError(
                f"column '{name}' has {empty.size} empty cell(s) where a label is required, "
                f"for id(s) {_first_few(ids.take(pa.array(empty[:SHOWN])).to_pylist())}",
                kind="empty_cells",
            )
    return values


def _stack(table: pa.Table, columns: list[str], metric: Metric, ids: pa.Array) -> np.ndarray:
    arrays = [_column_values(table, c, metric.cell, ids) for c in columns]
    if metric.columns == "one":
        return arrays[0]
    return np.column_stack(arrays)


def _check_not_empty(table: pa.Table) -> None:
    if table.num_rows == 0:
        raise IntakeError("the file has a header but no data rows", kind="no_rows")


def read_answer_key(
    path: Path, *, metric: Metric, params: BaseModel, id_column: str | None = None
) -> AnswerKeyTable:
    """Parse and validate an answer key for ``metric``; targets are all columns not otherwise named."""
    header = read_header(path)
    id_col = id_column or header[0]
    if id_col not in header:
        raise IntakeError(f"the answer key has no id column '{id_col}'", kind="missing_columns")
    param_columns = metric.key_columns(params)
    missing = [c for c in param_columns if c not in header]
    if missing:
        raise IntakeError(
            f"the answer key lacks column(s) named by the metric params: {_first_few(missing)}",
            kind="missing_columns",
        )
    reserved = {id_col, USAGE_COLUMN, *param_columns}
    targets = [c for c in header if c not in reserved]
    if not targets:
        raise IntakeError("the answer key has no target column", kind="missing_columns")
    if metric.columns == "one" and len(targets) != 1:
        raise IntakeError(
            f"metric '{metric.name}' takes exactly one target column, the answer key has "
            f"{len(targets)}: {_first_few(targets)}",
            kind="extra_columns",
        )
    types: dict[str, pa.DataType] = {id_col: pa.string()}
    types.update({c: _target_type(metric) for c in targets})
    types.update({c: pa.float64() for c in param_columns})
    if USAGE_COLUMN in header:
        types[USAGE_COLUMN] = pa.string()
    table = _read_table(path, types)
    _check_not_empty(table)
    ids = table.column(id_col).combine_chunks()
    _check_unique_ids(ids, who="answer key")
    usage = None
    if USAGE_COLUMN in header:
        usage = _usage_codes(table.column(USAGE_COLUMN), ids)
    extra = {c: _column_values(table, c, "number", ids) for c in param_columns}
    return AnswerKeyTable(
        id_column=id_col,
        target_columns=targets,
        ids=ids,
        y_true=_stack(table, targets, metric, ids),
        usage=usage,
        extra=extra,
    )


def _usage_codes(column: pa.ChunkedArray, ids: pa.Array) -> np.ndarray:
    values = column.to_numpy(zero_copy_only=False)
    codes = np.full(len(values), -1, dtype=np.int8)
    for label, code in USAGE_CODES.items():
        codes[values == label] = code
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        raise IntakeError(
            f"the Usage column must hold Public, Private or Ignored; {bad.size} row(s) hold "
            f"{_first_few(np.unique(values[bad]))}, for id(s) "
            f"{_first_few(ids.take(pa.array(bad[:SHOWN])).to_pylist())}",
            kind="bad_usage",
        )
    if not np.any(codes != IGNORED):
        raise IntakeError("every row of the answer key is Ignored", kind="bad_usage")
    return codes


def _check_unique_ids(ids: pa.Array, *, who: str) -> None:
    counts = pc.value_counts(ids)
    repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise IntakeError(
            f"the {who} has {len(repeated)} duplicate id(s): {_first_few(repeated.to_pylist())}",
            kind="duplicate_ids",
        )


def check_submission_header(header: list[str], key: AnswerKeyTable) -> None:
    expected = [key.id_column, *key.target_columns]
    missing = [c for c in expected if c not in header]
    extra = [c for c in header if c not in expected]
    problems = []
    if missing:
        problems.append(f"missing column(s) {_first_few(missing)}")
    if extra:
        problems.append(f"unexpected column(s) {_first_few(extra)}")
    if problems:
        raise IntakeError(
            f"{' and '.join(problems)}; expected exactly {', '.join(expected)}",
            kind="missing_columns" if missing else "extra_columns",
        )


def read_submission(path: Path, *, key: AnswerKeyTable, metric: Metric) -> np.ndarray:
    """Parse a submission and return its predictions aligned row for row with ``key``."""
    header = read_header(path)
    check_submission_header(header, key)
    types: dict[str, pa.DataType] = {key.id_column: pa.string()}
    types.update({c: _target_type(metric) for c in key.target_columns})
    table = _read_table(path, types)
    _check_not_empty(table)
    ids = table.column(key.id_column).combine_chunks()
    order = align(ids, key.ids)
    y_pred = _stack(table, key.target_columns, metric, ids)
    return y_pred if order is None else y_pred[order]


def align(sub_ids: pa.Array, key_ids: pa.Array) -> np.ndarray | None:
    """Positions that put the submission's rows in key order, or None when they already are."""
    if len(sub_ids) == len(key_ids) and sub_ids.equals(key_ids):
        return None
    position = pc.index_in(sub_ids, value_set=key_ids)
    unknown = np.flatnonzero(position.is_null().to_numpy(zero_copy_only=False))
    if unknown.size:
        raise IntakeError(
            f"{unknown.size} id(s) are not in the answer key: "
            f"{_first_few(sub_ids.take(pa.array(unknown[:SHOWN])).to_pylist())}",
            kind="unknown_ids",
        )
    position_np = position.to_numpy(zero_copy_only=False).astype(np.int64)
    counts = np.bincount(position_np, minlength=len(key_ids))
    repeated = np.flatnonzero(counts > 1)
    if repeated.size:
        raise IntakeError(
            f"{repeated.size} id(s) appear more than once: "
            f"{_first_few(key_ids.take(pa.array(repeated[:SHOWN])).to_pylist())}",
            kind="duplicate_ids",
        )
    missing = np.flatnonzero(counts == 0)
    if missing.size:
        raise IntakeError(
            f"{missing.size} id(s) of the answer key are missing: "
            f"{_first_few(key_ids.take(pa.array(missing[:SHOWN])).to_pylist())}",
            kind="missing_ids",
        )
    order = np.empty(len(key_ids), dtype=np.int64)
    order[position_np] = np.arange(len(position_np))
    return order
