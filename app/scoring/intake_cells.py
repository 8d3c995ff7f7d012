"""Cell values: the Arrow type each kind of cell is read as, its checks, and numpy arrays out.

Numbers are float64 and must be finite; a label is one non-empty string, read into a dictionary
column so that each distinct label exists once however many rows repeat it; a set of labels is a
plain string. Arrays handed to the metrics are zero-copy views where possible, placed in the
answer key's row order by a scatter when the submission's rows come in another order.
"""

import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import ChunkedArray

from app.metrics.registry import Metric
from app.scoring.intake_errors import SHOWN, IntakeError, combined, plural
from app.scoring.intake_parse import describe_rows
from app.scoring.intake_source import IntakeLimits, Source


def column_type(cell: str) -> pa.DataType:
    if cell == "number":
        return pa.float64()
    if cell == "label":
        # One label per row: a dictionary keeps each distinct label once, however many rows.
        return pa.dictionary(pa.int32(), pa.string())
    return pa.string()


def check_numbers(
    source: Source, name: str, column: ChunkedArray, ids: ChunkedArray, limits: IntakeLimits
) -> None:
    if column.null_count:
        empty = np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))
        # NaN in the same column is named too, so one fix mends the column.
        nan = np.flatnonzero(pc.fill_null(pc.is_nan(column), False).to_numpy(zero_copy_only=False))
        also = (
            f"; it also has {plural(nan.size, 'NaN value')} (every prediction must be a finite "
            f"number): {describe_rows(source, ids, nan, limits)}"
            if nan.size
            else ""
        )
        raise IntakeError(
            f"column '{name}' has {plural(empty.size, 'empty cell')} where a number is "
            f"required: {describe_rows(source, ids, empty, limits)}{also}",
            kind="empty_cells",
        )
    if all(_within_range(primitive(chunk)) for chunk in column.chunks):
        return
    values = np.concatenate([primitive(chunk) for chunk in column.chunks])
    # Every kind of bad value the column holds, each with its first few rows: one fix mends all.
    found: list[IntakeError] = []
    nan = np.flatnonzero(np.isnan(values))
    if nan.size:
        found.append(
            IntakeError(
                f"column '{name}' has {plural(nan.size, 'NaN value')}; every prediction must be "
                f"a finite number: {describe_rows(source, ids, nan, limits)}",
                kind="nan_values",
            )
        )
    inf = np.flatnonzero(np.isinf(values))
    if inf.size:
        found.append(
            IntakeError(
                f"column '{name}' has {plural(inf.size, 'infinite value')} (inf or -inf); every "
                f"prediction must be a finite number: "
                f"{describe_rows(source, ids, inf, limits, values=values[inf[:SHOWN]].tolist())}",
                kind="infinite_values",
            )
        )
    with np.errstate(invalid="ignore"):
        huge = np.flatnonzero(np.isfinite(values) & (np.abs(values) > MAX_MAGNITUDE))
    if huge.size:
        found.append(
            IntakeError(
                f"column '{name}' has {plural(huge.size, 'value')} beyond ±{MAX_MAGNITUDE:g}, "
                f"too large to score: "
                f"{describe_rows(source, ids, huge, limits, values=values[huge[:SHOWN]].tolist())}",
                kind="huge_values",
            )
        )
    if found:
        raise combined(found)


# The largest magnitude a number may have: squares and sums of such values stay finite, so no
# metric overflows on a file that passed intake. Checked on every row alike, whatever its Usage.
MAX_MAGNITUDE = 1e100


def _within_range(values: np.ndarray) -> bool:
    """Every value finite and within ±MAX_MAGNITUDE (NaN fails both comparisons)."""
    if values.size == 0:
        return True
    return bool(np.max(values) <= MAX_MAGNITUDE) and bool(np.min(values) >= -MAX_MAGNITUDE)


def _check_labels(
    source: Source, name: str, column: ChunkedArray, ids: ChunkedArray, limits: IntakeLimits
) -> None:
    # Look in each chunk's dictionary first: the rows are only searched once "" is known there.
    if not any("" in chunk.dictionary.to_pylist() for chunk in column.chunks):
        return
    rows = np.flatnonzero(
        np.concatenate([chunk_values(chunk, "label") == "" for chunk in column.chunks])
    )
    raise IntakeError(
        f"column '{name}' has {plural(rows.size, 'empty cell')} where a label is required: "
        f"{describe_rows(source, ids, rows, limits)}",
        kind="empty_cells",
    )


def check_column(
    source: Source,
    name: str,
    cell: str,
    column: ChunkedArray,
    ids: ChunkedArray,
    limits: IntakeLimits,
) -> None:
    if cell == "number":
        check_numbers(source, name, column, ids, limits)
    elif cell == "label":
        _check_labels(source, name, column, ids, limits)


def aligned_values(
    column: ChunkedArray, cell: str, rows: np.ndarray | None, n_out: int
) -> np.ndarray:
    """The column as numpy, scattered so that input row ``i`` lands at ``rows[i]``."""
    dtype = np.float64 if cell == "number" else object
    if rows is None and cell == "number" and column.num_chunks == 1:
        return primitive(column.chunk(0))
    if pa.types.is_dictionary(column.type):
        return _labels(column, rows, n_out)
    out = np.empty(n_out, dtype=dtype)
    start = 0
    for chunk in column.chunks:
        target = (
            slice(start, start + len(chunk)) if rows is None else rows[start : start + len(chunk)]
        )
        out[target] = chunk_values(chunk, cell)
        start += len(chunk)
    return out


def _labels(column: ChunkedArray, rows: np.ndarray | None, n_out: int) -> np.ndarray:
    """A dictionary column as an object array of interned labels, placed by small int codes.

    Each chunk has its own dictionary; their labels are numbered once for the whole column, the
    codes are scattered into place, and only then turned into objects (one gather), which is
    far cheaper than moving Python objects around row by row.
    """
    numbering: dict[str, int] = {}
    codes = np.empty(n_out, dtype=np.int32)
    start = 0
    for chunk in column.chunks:
        labels = chunk.dictionary.to_pylist()
        local = np.array(
            [numbering.setdefault(label, len(numbering)) for label in labels] or [0], dtype=np.int32
        )
        target = (
            slice(start, start + len(chunk)) if rows is None else rows[start : start + len(chunk)]
        )
        codes[target] = local[primitive(chunk.indices)]
        start += len(chunk)
    names = np.array([sys.intern(label) for label in numbering] or [""], dtype=object)
    return names[codes]


def primitive(chunk: pa.Array) -> np.ndarray:
    """A numeric Arrow array without nulls as a zero-copy numpy view.

    ``Array.to_numpy`` can import pandas (a large, slow import) for arrays read from IPC
    files; the buffer view never does.
    """
    if chunk.null_count or not (
        pa.types.is_floating(chunk.type) or pa.types.is_integer(chunk.type)
    ):
        return np.asarray(chunk.to_numpy(zero_copy_only=False))
    dtype = np.dtype(chunk.type.to_pandas_dtype())
    return np.frombuffer(
        chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize
    )


def chunk_values(chunk: pa.Array, cell: str) -> np.ndarray:
    if cell == "number":
        return primitive(chunk)
    if isinstance(chunk, pa.DictionaryArray):
        # Interned, so equal labels are one object and compare by identity.
        labels = np.array(
            [sys.intern(s) for s in chunk.dictionary.to_pylist()] or [""], dtype=object
        )
        return np.asarray(labels[primitive(chunk.indices)])
    return np.asarray(chunk.to_numpy(zero_copy_only=False))


def stack(
    table: pa.Table, columns: list[str], metric: Metric, rows: np.ndarray | None, n_out: int
) -> np.ndarray:
    arrays = [aligned_values(table.column(c), metric.cell, rows, n_out) for c in columns]
    if metric.columns == "one":
        return arrays[0]
    return np.column_stack(arrays)
