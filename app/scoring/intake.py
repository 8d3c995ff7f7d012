"""Reading answer keys and submissions: parse with pyarrow, validate, align rows by id.

Used by the server, the workers and ``podium score`` alike. A file is parsed once, by pyarrow's
multithreaded CSV reader, with column types taken from the answer key (ids and text as strings,
never guessed to be null; numeric predictions as float64). Every check is vectorised, and every
problem becomes an :class:`IntakeError` whose message a competitor can act on: what is wrong, how
many rows, which ids and on which lines. The slow work of explaining a problem happens only once a
file has been found wrong.
"""

import csv
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv
from pydantic import BaseModel

from app.metrics.registry import Metric
from app.scoring.intake_align import KeyIndex, in_key_order, positions, positions_exact
from app.scoring.intake_errors import SHOWN, IntakeError, first_few, plural
from app.scoring.intake_source import (
    Source,
    first_invalid_utf8,
    line_numbers,
    open_stream,
    read_head,
    sniff,
)

__all__ = [
    "IGNORED",
    "PRIVATE",
    "PUBLIC",
    "SHOWN",
    "USAGE_CODES",
    "USAGE_COLUMN",
    "AnswerKeyTable",
    "IntakeError",
    "IntakeLimits",
    "align",
    "check_submission_header",
    "check_upload",
    "load_cached_key",
    "read_answer_key",
    "read_header",
    "read_submission",
]

USAGE_COLUMN = "Usage"
USAGE_CODES = {"Public": 0, "Private": 1, "Ignored": 2}
PUBLIC, PRIVATE, IGNORED = 0, 1, 2
_BLOCK_SIZE = 1 << 22
_first_few = first_few  # the scoring core names offending ids with it


@dataclass(frozen=True)
class IntakeLimits:
    """How much a file may hold; the service fills these from its settings."""

    max_rows: int = 50_000_000
    max_decompressed_bytes: int = 4 * 1024 * 1024 * 1024


DEFAULT_LIMITS = IntakeLimits()


@dataclass
class AnswerKeyTable:
    id_column: str
    target_columns: list[str]
    ids: pa.Array
    y_true: np.ndarray
    usage: np.ndarray | None
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    index: KeyIndex | None = None  # built on first use when not loaded from the cache
    # Set for a key memory-mapped from the cache: drops its pages from the resident set.
    release_pages: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    @property
    def n_rows(self) -> int:
        return len(self.ids)

    def count(self, code: int) -> int:
        if self.usage is None:
            return self.n_rows if code != IGNORED else 0
        return int(np.count_nonzero(self.usage == code))

    def id_index(self) -> KeyIndex:
        if self.index is None:
            self.index = KeyIndex.build(self.ids)
        return self.index


# --- headers -------------------------------------------------------------------------------


def _parse_header(head: bytes) -> list[str]:
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    first_line = head.lstrip(b"\r\n").split(b"\n", 1)[0].rstrip(b"\r")
    try:
        text = first_line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntakeError(
            f"the file is not UTF-8 text: the header line has an invalid byte at position "
            f"{exc.start + 1}; save the file as UTF-8",
            kind="not_utf8",
        ) from None
    names = next(csv.reader([text]), [])
    if not names or all(not n.strip() for n in names):
        raise IntakeError("the header line is empty", kind="bad_header")
    if any(not n.strip() for n in names):
        raise IntakeError(
            f"the header has an empty column name: {text[:200]!r}", kind="bad_header"
        )
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise IntakeError(f"the header repeats column(s) {first_few(dupes)}", kind="bad_header")
    return names


def _check_head_utf8(source: Source, head: bytes, limits: IntakeLimits) -> None:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut at the end of the head
            _raise_not_utf8(source, limits)


def _raise_not_utf8(source: Source, limits: IntakeLimits) -> None:
    where = first_invalid_utf8(source, max_bytes=limits.max_decompressed_bytes)
    at = f" (line {where[0]}, byte {where[1]})" if where else ""
    raise IntakeError(
        f"the file is not valid UTF-8 text{at}; save it as UTF-8 "
        "(\"CSV UTF-8\" in spreadsheet programs)",
        kind="not_utf8",
    )


def read_header(path: Path, *, limits: IntakeLimits = DEFAULT_LIMITS) -> list[str]:
    """The column names of a CSV (plain, .gz or .zip), after checking it is UTF-8 text at all."""
    source = sniff(Path(path), max_bytes=limits.max_decompressed_bytes)
    head = read_head(source, max_bytes=limits.max_decompressed_bytes)
    names = _parse_header(head)
    _check_head_utf8(source, head, limits)
    return names


def check_submission_header(header: list[str], key: AnswerKeyTable) -> None:
    expected = [key.id_column, *key.target_columns]
    missing = [c for c in expected if c not in header]
    extra = [c for c in header if c not in expected]
    if not missing and not extra:
        return
    spelled = ", ".join(expected)
    if len(header) == 1 and any(sep in header[0] for sep in ";\t|"):
        raise IntakeError(
            f"the header {header[0]!r} is one column; the file seems to use another separator "
            f"than a comma; expected the comma-separated columns {spelled}",
            kind="bad_header",
        )
    if missing and len(header) == len(expected) and _looks_like_data(header, key):
        raise IntakeError(
            f"the first line should be the header {spelled} but is {','.join(header)[:200]!r}; "
            "the file seems to have no header line",
            kind="missing_header",
        )
    problems = []
    if missing:
        problems.append(f"missing column(s) {first_few(missing)}")
    if extra:
        problems.append(f"unexpected column(s) {first_few(extra)}")
    hint = ""
    folded = {c.strip().lower(): c for c in expected}
    if any(c.strip().lower() in folded for c in extra):
        hint = " (column names are case- and space-sensitive)"
    raise IntakeError(
        f"{' and '.join(problems)}; expected exactly {spelled}{hint}",
        kind="missing_columns" if missing else "extra_columns",
    )


def _looks_like_data(header: list[str], key: AnswerKeyTable) -> bool:
    """Whether a first line is a data row: it starts with a key id, or holds numbers."""
    if set(header) & {key.id_column, *key.target_columns}:
        return False
    numbers = pc.match_substring_regex(pa.array(header[1:], pa.string()), _NUMBER, ignore_case=True)
    if pc.any(numbers).as_py():
        return True
    ids = getattr(key, "ids", None)  # the service checks uploads against a key's columns only
    return ids is not None and bool(pc.any(pc.equal(ids, header[0])).as_py())


# --- parsing -------------------------------------------------------------------------------


def _convert_options(column_types: dict[str, pa.DataType]) -> pacsv.ConvertOptions:
    return pacsv.ConvertOptions(
        column_types=column_types,
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        null_values=[""],
        true_values=[],
        false_values=[],
        include_columns=list(column_types),
    )


def _read_table(
    source: Source, column_types: dict[str, pa.DataType], limits: IntakeLimits
) -> pa.Table:
    read_options = pacsv.ReadOptions(use_threads=True, block_size=_BLOCK_SIZE)
    parse_options = pacsv.ParseOptions(newlines_in_values=False)
    convert_options = _convert_options(column_types)
    if source.container == "plain":
        try:
            table = pacsv.read_csv(
                source.path,
                read_options=read_options,
                parse_options=parse_options,
                convert_options=convert_options,
            )
        except pa.ArrowInvalid as exc:
            raise _explain_parse_error(source, column_types, exc, limits) from None
    else:
        with open_stream(source, max_bytes=limits.max_decompressed_bytes) as stream:
            try:
                table = pacsv.read_csv(
                    stream,
                    read_options=read_options,
                    parse_options=parse_options,
                    convert_options=convert_options,
                )
            except Exception as exc:  # noqa: BLE001 - pyarrow wraps what the stream raised
                if stream.error is not None:
                    raise stream.error from None
                if isinstance(exc, IntakeError):
                    raise
                if isinstance(exc, pa.ArrowInvalid):
                    raise _explain_parse_error(source, column_types, exc, limits) from None
                raise
    if table.num_rows == 0:
        raise IntakeError("the file has a header but no data rows", kind="no_rows")
    if table.num_rows > limits.max_rows:
        raise IntakeError(
            f"the file has {table.num_rows} rows, more than the limit of {limits.max_rows}",
            kind="too_many_rows",
        )
    return table


def _explain_parse_error(
    source: Source,
    column_types: dict[str, pa.DataType],
    exc: pa.ArrowInvalid,
    limits: IntakeLimits,
) -> IntakeError:
    text = str(exc)
    if "UTF8" in text or "utf8" in text.lower():
        try:
            _raise_not_utf8(source, limits)
        except IntakeError as err:
            return err
    if "Expected" in text and "columns" in text:
        return _ragged_rows(source, column_types, limits) or IntakeError(
            f"a row has the wrong number of fields: {text.split(':', 1)[-1].strip()[:200]}",
            kind="ragged_row",
        )
    if "conversion error" in text:
        found = _non_numeric(source, column_types, limits)
        if found is not None:
            return found
    return IntakeError(f"the file could not be parsed as CSV: {text[:300]}", kind="bad_csv")


def _ragged_rows(
    source: Source, column_types: dict[str, pa.DataType], limits: IntakeLimits
) -> IntakeError | None:
    # Read again, single-threaded so pyarrow knows line numbers, collecting the bad rows.
    bad: list[tuple[int, int, int, str]] = []

    def collect(row: pacsv.InvalidRow) -> str:
        bad.append((row.number, row.expected_columns, row.actual_columns, row.text))
        return "skip"

    as_text = {name: pa.string() for name in column_types}
    with open_stream(source, max_bytes=limits.max_decompressed_bytes) as stream:
        try:
            pacsv.read_csv(
                stream,
                read_options=pacsv.ReadOptions(use_threads=False, block_size=_BLOCK_SIZE),
                parse_options=pacsv.ParseOptions(invalid_row_handler=collect),
                convert_options=_convert_options(as_text),
            )
        except Exception:  # noqa: BLE001 - the rows collected so far still explain it
            pass
    if not bad:
        return None
    expected = bad[0][1]
    # pyarrow numbers the non-blank lines from 1, the header included: row = number - 2.
    rows = np.array([number - 2 for number, *_ in bad[:SHOWN] if number is not None])
    lines = line_numbers(source, rows, max_bytes=limits.max_decompressed_bytes)
    shown = "; ".join(
        f"line {lines.get(number - 2, '?') if number is not None else '?'} has {actual}: "
        f"{text[:80]!r}"
        for number, _, actual, text in bad[:SHOWN]
    )
    more = f" (and {len(bad) - SHOWN} more)" if len(bad) > SHOWN else ""
    return IntakeError(
        f"{plural(len(bad), 'row')} have the wrong number of "
        f"fields (expected {expected}, one per column; a decimal comma or an unquoted comma "
        f"in a value splits a field): {shown}{more}",
        kind="ragged_row",
    )


_NUMBER = (
    r"^\s*[+-]?((\d+\.?\d*)|(\.\d+))([eE][+-]?\d+)?\s*$"
    r"|^\s*[+-]?(inf|infinity|nan)\s*$"
)


def _non_numeric(
    source: Source, column_types: dict[str, pa.DataType], limits: IntakeLimits
) -> IntakeError | None:
    # Read the numeric columns again as text to say exactly which cells are not numbers.
    as_text = {name: pa.string() for name in column_types}
    table = _read_table(source, as_text, limits)
    ids = table.column(0)
    for name, dtype in column_types.items():
        if not pa.types.is_floating(dtype):
            continue
        cells = table.column(name)
        numeric = pc.match_substring_regex(cells, _NUMBER, ignore_case=True)
        bad = np.flatnonzero(~numeric.to_numpy(zero_copy_only=False) & _nonempty(cells))
        if bad.size:
            values = cells.take(pa.array(bad[:SHOWN])).to_pylist()
            return IntakeError(
                f"column '{name}' has {plural(bad.size, 'non-numeric cell')}: "
                f"{_where(source, ids, bad, limits, values=values)}",
                kind="non_numeric",
            )
    return None


def _nonempty(cells: pa.ChunkedArray) -> np.ndarray:
    return pc.not_equal(pc.utf8_length(cells), 0).to_numpy(zero_copy_only=False)


def _where(
    source: Source,
    ids: pa.ChunkedArray | pa.Array,
    rows: np.ndarray,
    limits: IntakeLimits,
    *,
    values: list | None = None,
) -> str:
    """``line 7 (id 'a3', value 'x'), … (and 12 more)`` for the first offending rows."""
    shown = np.asarray(rows[:SHOWN], dtype=np.int64)
    lines = line_numbers(source, shown, max_bytes=limits.max_decompressed_bytes)
    shown_ids = ids.take(pa.array(shown)).to_pylist()
    parts = []
    for i, row in enumerate(shown.tolist()):
        detail = f"id {shown_ids[i]!r}"
        if values is not None:
            detail += f", value {values[i]!r}"
        parts.append(f"line {lines.get(row, row + 2)} ({detail})")
    more = len(rows) - len(shown)
    return ", ".join(parts) + (f" (and {more} more)" if more > 0 else "")


# --- cell values ---------------------------------------------------------------------------


def _column_type(cell: str) -> pa.DataType:
    if cell == "number":
        return pa.float64()
    if cell == "label":
        # One label per row: a dictionary keeps each distinct label once, however many rows.
        return pa.dictionary(pa.int32(), pa.string())
    return pa.string()


def _check_numbers(
    source: Source, name: str, column: pa.ChunkedArray, ids: pa.ChunkedArray, limits: IntakeLimits
) -> None:
    if column.null_count:
        empty = np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))
        raise IntakeError(
            f"column '{name}' has {plural(empty.size, 'empty cell')} where a number is "
            f"required: {_where(source, ids, empty, limits)}",
            kind="empty_cells",
        )
    finite = True
    for chunk in column.chunks:
        values = primitive(chunk)
        if not np.isfinite(values).all():
            finite = False
            break
    if finite:
        return
    values = column.to_numpy()
    nan = np.flatnonzero(np.isnan(values))
    if nan.size:
        raise IntakeError(
            f"column '{name}' has {plural(nan.size, 'NaN value')}; every prediction must be a "
            f"finite number: {_where(source, ids, nan, limits)}",
            kind="nan_values",
        )
    inf = np.flatnonzero(np.isinf(values))
    raise IntakeError(
        f"column '{name}' has {plural(inf.size, 'infinite value')} (inf or -inf); every "
        f"prediction must be a finite number: "
        f"{_where(source, ids, inf, limits, values=values[inf[:SHOWN]].tolist())}",
        kind="infinite_values",
    )


def _check_labels(
    source: Source, name: str, column: pa.ChunkedArray, ids: pa.ChunkedArray, limits: IntakeLimits
) -> None:
    # Look in each chunk's dictionary first: the rows are only searched once "" is known there.
    if not any("" in chunk.dictionary.to_pylist() for chunk in column.chunks):
        return
    rows = np.flatnonzero(
        np.concatenate([_chunk_values(chunk, "label") == "" for chunk in column.chunks])
    )
    raise IntakeError(
        f"column '{name}' has {plural(rows.size, 'empty cell')} where a label is required: "
        f"{_where(source, ids, rows, limits)}",
        kind="empty_cells",
    )


def _check_column(
    source: Source,
    name: str,
    cell: str,
    column: pa.ChunkedArray,
    ids: pa.ChunkedArray,
    limits: IntakeLimits,
) -> None:
    if cell == "number":
        _check_numbers(source, name, column, ids, limits)
    elif cell == "label":
        _check_labels(source, name, column, ids, limits)


def _values(column: pa.ChunkedArray, cell: str, rows: np.ndarray | None, n_out: int) -> np.ndarray:
    """The column as numpy, scattered so that input row ``i`` lands at ``rows[i]``."""
    dtype = np.float64 if cell == "number" else object
    if rows is None and cell == "number" and column.num_chunks == 1:
        return primitive(column.chunk(0))
    if pa.types.is_dictionary(column.type):
        return _labels(column, rows, n_out)
    out = np.empty(n_out, dtype=dtype)
    start = 0
    for chunk in column.chunks:
        target = slice(start, start + len(chunk)) if rows is None else rows[start : start + len(chunk)]
        out[target] = _chunk_values(chunk, cell)
        start += len(chunk)
    return out


def _labels(column: pa.ChunkedArray, rows: np.ndarray | None, n_out: int) -> np.ndarray:
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
        local = np.array([numbering.setdefault(label, len(numbering)) for label in labels]
                         or [0], dtype=np.int32)
        target = slice(start, start + len(chunk)) if rows is None else rows[start : start + len(chunk)]
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
        return chunk.to_numpy(zero_copy_only=False)
    dtype = np.dtype(chunk.type.to_pandas_dtype())
    return np.frombuffer(
        chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize
    )


def _chunk_values(chunk: pa.Array, cell: str) -> np.ndarray:
    if cell == "number":
        return primitive(chunk)
    if isinstance(chunk, pa.DictionaryArray):
        # Interned, so equal labels are one object and compare by identity.
        labels = np.array([sys.intern(s) for s in chunk.dictionary.to_pylist()] or [""], dtype=object)
        return labels[primitive(chunk.indices)]
    return chunk.to_numpy(zero_copy_only=False)


def _stack(
    table: pa.Table, columns: list[str], metric: Metric, rows: np.ndarray | None, n_out: int
) -> np.ndarray:
    arrays = [_values(table.column(c), metric.cell, rows, n_out) for c in columns]
    if metric.columns == "one":
        return arrays[0]
    return np.column_stack(arrays)


# --- answer keys ---------------------------------------------------------------------------


def read_answer_key(
    path: Path,
    *,
    metric: Metric,
    params: BaseModel,
    id_column: str | None = None,
    limits: IntakeLimits = DEFAULT_LIMITS,
) -> AnswerKeyTable:
    """Parse and validate an answer key for ``metric``; targets are all columns not otherwise named."""
    source = sniff(Path(path), max_bytes=limits.max_decompressed_bytes)
    head = read_head(source, max_bytes=limits.max_decompressed_bytes)
    header = _parse_header(head)
    _check_head_utf8(source, head, limits)
    id_col = id_column or header[0]
    if id_col not in header:
        raise IntakeError(f"the answer key has no id column '{id_col}'", kind="missing_columns")
    param_columns = metric.key_columns(params)
    missing = [c for c in param_columns if c not in header]
    if missing:
        raise IntakeError(
            f"the answer key lacks column(s) named by the metric params: {first_few(missing)}",
            kind="missing_columns",
        )
    reserved = {id_col, USAGE_COLUMN, *param_columns}
    targets = [c for c in header if c not in reserved]
    if not targets:
        raise IntakeError("the answer key has no target column", kind="missing_columns")
    if metric.columns == "one" and len(targets) != 1:
        raise IntakeError(
            f"metric '{metric.name}' takes exactly one target column, the answer key has "
            f"{len(targets)}: {first_few(targets)}",
            kind="extra_columns",
        )
    types: dict[str, pa.DataType] = {id_col: pa.string()}
    types.update({c: _column_type(metric.cell) for c in targets})
    types.update({c: pa.float64() for c in param_columns})
    if USAGE_COLUMN in header:
        types[USAGE_COLUMN] = pa.string()
    table = _read_table(source, types, limits)
    ids_chunked = table.column(id_col)
    for name in targets:
        _check_column(source, name, metric.cell, table.column(name), ids_chunked, limits)
    for name in param_columns:
        _check_numbers(source, name, table.column(name), ids_chunked, limits)
    ids = ids_chunked.combine_chunks()
    index = KeyIndex.build(ids)
    _check_unique_key_ids(ids, index)
    usage = _usage_codes(table.column(USAGE_COLUMN), ids) if USAGE_COLUMN in header else None
    n = table.num_rows
    return AnswerKeyTable(
        id_column=id_col,
        target_columns=targets,
        ids=ids,
        y_true=_stack(table, targets, metric, None, n),
        usage=usage,
        extra={c: _values(table.column(c), "number", None, n) for c in param_columns},
        index=index,
    )


def _check_unique_key_ids(ids: pa.Array, index: KeyIndex) -> None:
    suspects = index.colliding_rows()
    if not suspects.size:
        return
    counts = pc.value_counts(ids.take(pa.array(suspects)))
    repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise IntakeError(
            f"the answer key has {plural(len(repeated), 'duplicate id')}: "
            f"{first_few(repeated.to_pylist())}",
            kind="duplicate_ids",
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
            f"{first_few(np.unique(values[bad]))}, for id(s) "
            f"{first_few(ids.take(pa.array(bad[:SHOWN])).to_pylist())}",
            kind="bad_usage",
        )
    if not np.any(codes != IGNORED):
        raise IntakeError("every row of the answer key is Ignored", kind="bad_usage")
    return codes


# --- submissions ---------------------------------------------------------------------------


def check_upload(
    path: Path, *, key: AnswerKeyTable, limits: IntakeLimits = DEFAULT_LIMITS
) -> None:
    """The checks quick enough to answer an upload with a 422: format, size, encoding, header."""
    check_submission_header(read_header(path, limits=limits), key)


def read_submission(
    path: Path, *, key: AnswerKeyTable, metric: Metric, limits: IntakeLimits = DEFAULT_LIMITS
) -> np.ndarray:
    """Parse a submission and return its predictions aligned row for row with ``key``."""
    source = sniff(Path(path), max_bytes=limits.max_decompressed_bytes)
    head = read_head(source, max_bytes=limits.max_decompressed_bytes)
    header = _parse_header(head)
    _check_head_utf8(source, head, limits)
    check_submission_header(header, key)
    types: dict[str, pa.DataType] = {key.id_column: pa.string()}
    types.update({c: _column_type(metric.cell) for c in key.target_columns})
    table = _read_table(source, types, limits)
    ids = table.column(key.id_column)
    try:
        rows = _align_rows(source, ids, key, limits)
    finally:
        if key.release_pages is not None:
            key.release_pages()
    for name in key.target_columns:
        _check_column(source, name, metric.cell, table.column(name), ids, limits)
    y_pred = _stack(table, key.target_columns, metric, rows, key.n_rows)
    del table, ids, rows
    # Hand the parsed file's memory back to the system before the metric allocates its own.
    pa.default_memory_pool().release_unused()
    return y_pred


def _align_rows(
    source: Source | None, ids: pa.ChunkedArray, key: AnswerKeyTable, limits: IntakeLimits
) -> np.ndarray | None:
    """Key row of each submission row, or None when the submission is already in key order."""
    if in_key_order(ids, key.ids):
        return None
    found = positions(ids, key.ids, key.id_index())
    n_found = int(np.count_nonzero(found >= 0))
    if n_found == len(found) == key.n_rows:
        # Every id is known and there are as many as in the key: a permutation unless repeated.
        seen = np.zeros(key.n_rows, dtype=bool)
        seen[found] = True
        if seen.all():
            return found
    raise _id_problems(source, ids, key, found, limits)


def _id_problems(
    source: Source | None,
    ids: pa.ChunkedArray,
    key: AnswerKeyTable,
    found: np.ndarray,
    limits: IntakeLimits,
) -> IntakeError:
    """One message naming every id problem: repeated, unknown and missing ids."""
    problems: list[tuple[str, str]] = []
    counts = pc.value_counts(ids)
    repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    if len(repeated):
        problems.append((
            "duplicate_ids",
            f"{plural(len(repeated), 'id')} appear more than once: "
            f"{first_few(repeated.to_pylist())}",
        ))
    unknown = np.flatnonzero(found < 0)
    if unknown.size:
        where = (
            _where(source, ids, unknown, limits)
            if source is not None
            else first_few(ids.take(pa.array(unknown[:SHOWN])).to_pylist())
        )
        problems.append((
            "unknown_ids",
            f"{plural(unknown.size, 'id')} not in the answer key: {where}",
        ))
    present = np.zeros(key.n_rows, dtype=bool)
    present[found[found >= 0]] = True
    missing = np.flatnonzero(~present)
    if missing.size:
        problems.append((
            "missing_ids",
            f"{plural(missing.size, 'id')} of the answer key are missing: "
            f"{first_few(key.ids.take(pa.array(missing[:SHOWN])).to_pylist())}",
        ))
    if not problems:  # cannot happen: _align_rows only calls here on a problem
        problems.append(("unknown_ids", "the submission's ids do not match the answer key's"))
    return IntakeError("; ".join(text for _, text in problems), kind=problems[0][0])


def align(
    sub_ids: pa.Array | pa.ChunkedArray, key_ids: pa.Array, *, index: KeyIndex | None = None
) -> np.ndarray | None:
    """Positions that put the submission's rows in key order, or None when they already are.

    ``aligned = y_sub[order]``. The fast path compares the ids with the key's as they stand;
    otherwise a vectorised hash join (``index``, built here when not given) finds each id.
    """
    if isinstance(sub_ids, pa.Array):
        sub_ids = pa.chunked_array([sub_ids], type=sub_ids.type)
    key = AnswerKeyTable("id", [], key_ids, np.zeros(0), None, index=index)
    rows = _align_rows(None, sub_ids, key, DEFAULT_LIMITS)
    if rows is None:
        return None
    order = np.empty(len(key_ids), dtype=np.int64)
    order[rows] = np.arange(len(rows))
    return order


def align_exact(sub_ids: pa.Array, key_ids: pa.Array) -> np.ndarray:
    """Key row of each submission id, -1 where absent, by Arrow's own hash join (a reference)."""
    return positions_exact(sub_ids, key_ids)


def load_cached_key(
    source_csv: Path,
    cache_dir: Path,
    *,
    metric: Metric,
    params: BaseModel,
    id_column: str | None = None,
    sha256: str | None = None,
    limits: IntakeLimits = DEFAULT_LIMITS,
) -> AnswerKeyTable:
    """The answer key parsed once per version and cached on disk: see :mod:`.intake_cache`."""
    from app.scoring import intake_cache  # it builds on this module

    return intake_cache.load_cached_key(
        source_csv,
        cache_dir,
        metric=metric,
        params=params,
        id_column=id_column,
        sha256=sha256,
        limits=limits,
    )
