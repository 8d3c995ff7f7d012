"""Parsing a CSV with pyarrow under intake's rules, and explaining why a file does not parse.

The happy path is one multithreaded ``read_csv`` with explicit column types. When pyarrow
refuses a file, the file is read again, more slowly, to name the rows at fault: which lines have
the wrong number of fields, which cells are not numbers, where the first non-UTF-8 byte is.
"""

import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from app.scoring.intake_align import arrow_indices
from app.scoring.intake_errors import SHOWN, IntakeError, cut, plural, quote
from app.scoring.intake_source import (
    IntakeLimits,
    Source,
    first_invalid_utf8,
    line_numbers,
    open_stream,
)

BLOCK_SIZE = 1 << 22


def raise_not_utf8(source: Source, limits: IntakeLimits) -> None:
    where = first_invalid_utf8(source, limits=limits)
    at = f" (line {where[0]}, byte {where[1]})" if where else ""
    raise IntakeError(
        f"the file is not valid UTF-8 text{at}; save it as UTF-8 "
        '("CSV UTF-8" in spreadsheet programs)',
        kind="not_utf8",
    )


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


def read_table(
    source: Source, column_types: dict[str, pa.DataType], limits: IntakeLimits
) -> pa.Table:
    """The whole file as a table, parsed by pyarrow's multithreaded reader within ``limits``.

    A compressed file is parsed from the stream that enforces the limits as it unpacks (see
    :class:`LimitedReader`). A plain file's size is already within the byte limit; one larger
    than :data:`SCAN_ABOVE` is first scanned through that stream for its lines (cheap next to
    parsing), then parsed from its path: pyarrow reads a path natively, faster than through a
    Python object, and a process whose pyarrow threads read a Python object can abort at exit.
    """
    read_options = pacsv.ReadOptions(use_threads=True, block_size=BLOCK_SIZE)
    parse_options = pacsv.ParseOptions(newlines_in_values=False)
    convert_options = _convert_options(column_types)
    if source.container == "plain":
        if os.path.getsize(source.path) > SCAN_ABOVE:
            scan(source, limits)
        try:
            table = pacsv.read_csv(
                source.path,
                read_options=read_options,
                parse_options=parse_options,
                convert_options=convert_options,
            )
        except pa.ArrowInvalid as exc:
            raise _explain_parse_error(source, column_types, exc, limits) from None
        return _checked_rows(table, limits)
    with open_stream(source, limits=limits) as stream:
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
    return _checked_rows(table, limits)


# A plain file at most this large is parsed without a scan first: parsing it costs a bounded
# few hundred MB whatever it holds, and its rows are counted after.
SCAN_ABOVE = 64 << 20


def scan(source: Source, limits: IntakeLimits) -> None:
    """Read the file through the limits' stream and drop it: raises on the first limit passed."""
    with open_stream(source, limits=limits) as stream:
        while stream.read(1 << 22):
            pass


def _checked_rows(table: pa.Table, limits: IntakeLimits) -> pa.Table:
    # The parse's blocks are freed but kept by Arrow's pool; hand them back to the system before
    # the caller's numpy arrays (checks, alignment, targets) come on top of them.
    pa.default_memory_pool().release_unused()
    if table.num_rows == 0:
        raise IntakeError("the file has a header but no data rows", kind="no_rows")
    if table.num_rows > limits.max_rows:
        why = f" ({limits.why})" if limits.why else ""
        raise IntakeError(
            f"the file has {table.num_rows:,} rows, more than the limit of "
            f"{limits.max_rows:,}{why}",
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
            raise_not_utf8(source, limits)
        except IntakeError as err:
            return err
    if "Expected" in text and "columns" in text:
        return _ragged_rows(source, column_types, limits) or IntakeError(
            f"a row has the wrong number of fields: {cut(text.split(':', 1)[-1].strip(), 200)}",
            kind="ragged_row",
        )
    if "conversion error" in text:
        found = _non_numeric(source, column_types, limits)
        if found is not None:
            return found
    return IntakeError(f"the file could not be parsed as CSV: {cut(text, 300)}", kind="bad_csv")


def _stream_batches(
    source: Source,
    column_types: dict[str, pa.DataType],
    limits: IntakeLimits,
    *,
    invalid_row_handler: Callable[[Any], str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The file batch by batch, single-threaded and in order, so memory stays at one batch."""
    with open_stream(source, limits=limits) as stream:
        try:
            reader = pacsv.open_csv(
                stream,
                read_options=pacsv.ReadOptions(use_threads=False, block_size=BLOCK_SIZE),
                parse_options=pacsv.ParseOptions(
                    newlines_in_values=False, invalid_row_handler=invalid_row_handler
                ),
                convert_options=_convert_options(column_types),
            )
            yield from reader
        except Exception:  # noqa: BLE001 - pyarrow wraps what the stream raised
            if stream.error is not None:
                raise stream.error from None
            raise


# Bad rows a diagnostic pass counts before it stops reading: it names the first few and says
# "at least" past this, so a file of a hundred million bad rows costs no more than a few.
COUNTED = 1000


class _BadRows:
    """Counts offending rows and keeps the first :data:`SHOWN` of them, never a whole list."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list = []  # type: ignore[type-arg]

    def add(self, item: object) -> None:
        self.count += 1
        if len(self.first) < SHOWN:
            self.first.append(item)

    @property
    def full(self) -> bool:
        return self.count >= COUNTED

    def how_many(self, word: str) -> str:
        if self.full:
            return f"at least {self.count:,} {word}(s)"
        return plural(self.count, word)


def _ragged_rows(
    source: Source, column_types: dict[str, pa.DataType], limits: IntakeLimits
) -> IntakeError | None:
    # Read again, single-threaded so pyarrow knows line numbers, counting the bad rows.
    bad = _BadRows()
    expected = [0]

    def collect(row: pacsv.InvalidRow) -> str:
        expected[0] = row.expected_columns
        bad.add((row.number, row.actual_columns, row.text[:200]))
        return "error" if bad.full else "skip"

    as_text = {name: pa.string() for name in column_types}
    try:
        for _ in _stream_batches(source, as_text, limits, invalid_row_handler=collect):
            pass
    except Exception:  # noqa: BLE001 - the rows counted so far still explain it
        pass
    if not bad.count:
        return None
    # pyarrow numbers the non-blank lines from 1, the header included: row = number - 2.
    rows = np.array([number - 2 for number, *_ in bad.first if number is not None])
    lines = line_numbers(source, rows, limits=limits)
    shown = "; ".join(
        f"line {lines.get(number - 2, '?') if number is not None else '?'} has {actual}: "
        f"{quote(text)}"
        for number, actual, text in bad.first
    )
    more = bad.count - len(bad.first)
    tail = f" (and {'at least ' if bad.full else ''}{more:,} more)" if more > 0 else ""
    return IntakeError(
        f"{bad.how_many('row')} have the wrong number of "
        f"fields (expected {expected[0]}, one per column; a decimal comma or an unquoted comma "
        f"in a value splits a field): {shown}{tail}",
        kind="ragged_row",
    )


NUMBER = (
    r"^\s*[+-]?((\d+\.?\d*)|(\.\d+))([eE][+-]?\d+)?\s*$"
    r"|^\s*[+-]?(inf|infinity|nan)\s*$"
)


def _non_numeric(
    source: Source, column_types: dict[str, pa.DataType], limits: IntakeLimits
) -> IntakeError | None:
    """Read the numeric columns again as text, batch by batch, to say which cells are not
    numbers: the first few and how many (the read stops once :data:`COUNTED` are found)."""
    numeric = [name for name, dtype in column_types.items() if pa.types.is_floating(dtype)]
    as_text = {name: pa.string() for name in column_types}
    found: dict[str, _BadRows] = {name: _BadRows() for name in numeric}
    try:
        _count_non_numeric(source, as_text, limits, numeric, found)
    except pa.ArrowInvalid as exc:
        if "utf8" not in str(exc).lower():
            return None
        raise_not_utf8(source, limits)
    for name in numeric:
        bad_rows = found[name]
        if bad_rows.count:
            positions = np.array([r for r, _, _ in bad_rows.first], dtype=np.int64)
            return IntakeError(
                f"column '{name}' has {bad_rows.how_many('non-numeric cell')}: "
                + _describe(
                    source,
                    positions,
                    [i for _, i, _ in bad_rows.first],
                    limits,
                    values=[v for _, _, v in bad_rows.first],
                    more=bad_rows.count - len(bad_rows.first),
                    at_least=bad_rows.full,
                ),
                kind="non_numeric",
            )
    return None


def _count_non_numeric(
    source: Source,
    as_text: dict[str, pa.DataType],
    limits: IntakeLimits,
    numeric: list[str],
    found: dict[str, "_BadRows"],
) -> None:
    id_column = next(iter(as_text))
    row = 0
    for batch in _stream_batches(source, as_text, limits):
        for name in numeric:
            cells = batch.column(name)
            matches = pc.match_substring_regex(cells, NUMBER, ignore_case=True)
            bad = np.flatnonzero(~matches.to_numpy(zero_copy_only=False) & _nonempty(cells))
            for i in bad[:SHOWN].tolist():
                found[name].add((row + i, batch.column(id_column)[i].as_py(), cells[i].as_py()))
            found[name].count += max(bad.size - SHOWN, 0)
        row += batch.num_rows
        if any(f.full for f in found.values()):
            return


def _nonempty(cells: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.not_equal(pc.utf8_length(cells), 0).to_numpy(zero_copy_only=False))


def describe_rows(
    source: Source,
    ids: pa.ChunkedArray | pa.Array,
    rows: np.ndarray,
    limits: IntakeLimits,
    *,
    values: list | None = None,  # type: ignore[type-arg]
) -> str:
    """``line 7 (id 'a3', value 'x'), … (and 12 more)`` for the first offending rows."""
    shown = np.asarray(rows[:SHOWN], dtype=np.int64)
    shown_ids = ids.take(arrow_indices(shown)).to_pylist()
    return _describe(source, shown, shown_ids, limits, values=values, more=len(rows) - len(shown))


def _describe(
    source: Source,
    rows: np.ndarray,
    ids: list,  # type: ignore[type-arg]
    limits: IntakeLimits,
    *,
    values: list | None,  # type: ignore[type-arg]
    more: int,
    at_least: bool = False,
) -> str:
    lines = line_numbers(source, rows, limits=limits)
    parts = []
    for i, row in enumerate(rows.tolist()):
        detail = f"id {quote(ids[i])}"
        if values is not None:
            detail += f", value {quote(values[i])}"
        parts.append(f"line {lines.get(row, row + 2)} ({detail})")
    tail = f" (and {'at least ' if at_least else ''}{more:,} more)" if more > 0 else ""
    return ", ".join(parts) + tail
