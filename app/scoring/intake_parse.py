"""Parsing a CSV with pyarrow under intake's rules, and explaining why a file does not parse.

The happy path is one multithreaded ``read_csv`` with explicit column types. When pyarrow
refuses a file, the file is read again, more slowly, to name the rows at fault: which lines have
the wrong number of fields, which cells are not numbers, where the first non-UTF-8 byte is.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from app.scoring.intake_align import arrow_indices
from app.scoring.intake_errors import SHOWN, IntakeError, plural
from app.scoring.intake_source import (
    IntakeLimits,
    Source,
    first_invalid_utf8,
    line_numbers,
    open_stream,
)

BLOCK_SIZE = 1 << 22


def raise_not_utf8(source: Source, limits: IntakeLimits) -> None:
    where = first_invalid_utf8(source, max_bytes=limits.max_decompressed_bytes)
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
    read_options = pacsv.ReadOptions(use_threads=True, block_size=BLOCK_SIZE)
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
            raise_not_utf8(source, limits)
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
                read_options=pacsv.ReadOptions(use_threads=False, block_size=BLOCK_SIZE),
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


NUMBER = (
    r"^\s*[+-]?((\d+\.?\d*)|(\.\d+))([eE][+-]?\d+)?\s*$"
    r"|^\s*[+-]?(inf|infinity|nan)\s*$"
)


def _non_numeric(
    source: Source, column_types: dict[str, pa.DataType], limits: IntakeLimits
) -> IntakeError | None:
    # Read the numeric columns again as text to say exactly which cells are not numbers.
    as_text = {name: pa.string() for name in column_types}
    table = read_table(source, as_text, limits)
    ids = table.column(0)
    for name, dtype in column_types.items():
        if not pa.types.is_floating(dtype):
            continue
        cells = table.column(name)
        numeric = pc.match_substring_regex(cells, NUMBER, ignore_case=True)
        bad = np.flatnonzero(~numeric.to_numpy(zero_copy_only=False) & _nonempty(cells))
        if bad.size:
            values = cells.take(arrow_indices(bad[:SHOWN])).to_pylist()
            return IntakeError(
                f"column '{name}' has {plural(bad.size, 'non-numeric cell')}: "
                f"{describe_rows(source, ids, bad, limits, values=values)}",
                kind="non_numeric",
            )
    return None


def _nonempty(cells: pa.ChunkedArray) -> np.ndarray:
    return pc.not_equal(pc.utf8_length(cells), 0).to_numpy(zero_copy_only=False)


def describe_rows(
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
    shown_ids = ids.take(arrow_indices(shown)).to_pylist()
    parts = []
    for i, row in enumerate(shown.tolist()):
        detail = f"id {shown_ids[i]!r}"
        if values is not None:
            detail += f", value {values[i]!r}"
        parts.append(f"line {lines.get(row, row + 2)} ({detail})")
    more = len(rows) - len(shown)
    return ", ".join(parts) + (f" (and {more} more)" if more > 0 else "")
