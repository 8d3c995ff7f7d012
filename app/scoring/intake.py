"""Reading answer keys and submissions: parse with pyarrow, validate, align rows by id.

Used by the server, the workers and ``podium score`` alike. A file is parsed once, by pyarrow's
multithreaded CSV reader, with column types taken from the answer key (ids and text as strings,
never guessed to be null; numeric predictions as float64). Every check is vectorised, and every
problem becomes an :class:`IntakeError` whose message a competitor can act on: what is wrong, how
many rows, which ids and on which lines. The slow work of explaining a problem happens only once a
file has been found wrong.
"""

import csv
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from app.metrics.registry import Metric
from app.scoring.intake_align import KeyIndex, arrow_indices, in_key_order, positions
from app.scoring.intake_cells import (
    aligned_values,
    check_column,
    check_numbers,
    column_type,
    primitive,
    stack,
)
from app.scoring.intake_errors import (
    SHOWN,
    IntakeError,
    combined,
    cut,
    first_few,
    plural,
    quote,
)
from app.scoring.intake_parse import NUMBER, describe_rows, raise_not_utf8, read_table
from app.scoring.intake_recent import RECENT
from app.scoring.intake_source import (
    DEFAULT_LIMITS,
    IntakeLimits,
    Source,
    foreign_text,
    line_numbers,
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
    "check_submission_header",
    "check_upload",
    "read_answer_key",
    "read_header",
    "read_submission",
]

USAGE_COLUMN = "Usage"
USAGE_CODES = {"Public": 0, "Private": 1, "Ignored": 2}
PUBLIC, PRIVATE, IGNORED = 0, 1, 2


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


def _parse_header(
    head: bytes, limits: IntakeLimits, *, max_columns: int | None = None
) -> list[str]:
    """The column names of the first line, in time linear in its length.

    ``max_columns`` (default: the limits') refuses a header wider than the file could need.
    """
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    head = head.lstrip(b"\r\n")
    end = head.find(b"\n")
    if end < 0 and len(head) > limits.max_line_bytes:
        end = len(head)
    if end > limits.max_line_bytes:
        raise IntakeError(
            f"the header line is longer than the limit of {limits.max_line_bytes:,} bytes",
            kind="line_too_long",
        )
    first_line = head[: end if end >= 0 else len(head)].rstrip(b"\r")
    limit = limits.max_columns if max_columns is None else max_columns
    if first_line.count(b",") >= limit:
        raise IntakeError(
            f"the header has {first_line.count(b',') + 1:,} columns, more than the "
            f"{limit:,} this file could need",
            kind="too_many_columns",
        )
    try:
        text = first_line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntakeError(
            f"the file is not UTF-8 text: the header line has an invalid byte at position "
            f"{exc.start + 1}; save the file as UTF-8",
            kind="not_utf8",
        ) from None
    try:
        names = next(csv.reader([text]), [])
    except csv.Error as exc:
        raise IntakeError(
            f"the header line cannot be read as CSV: {cut(str(exc), 200)}", kind="bad_header"
        ) from None
    if len(names) > limit:
        raise IntakeError(
            f"the header has {len(names):,} columns, more than the {limit:,} this file could need",
            kind="too_many_columns",
        )
    if not names or all(not n.strip() for n in names):
        raise IntakeError("the header line is empty", kind="bad_header")
    if any(not n.strip() for n in names):
        raise IntakeError(
            f"the header has an empty column name: {quote(cut(text, 200))}", kind="bad_header"
        )
    dupes = sorted(name for name, count in Counter(names).items() if count > 1)
    if dupes:
        raise IntakeError(f"the header repeats column(s) {first_few(dupes)}", kind="bad_header")
    return names


def _check_head_utf8(source: Source, head: bytes, limits: IntakeLimits) -> None:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut at the end of the head
            raise_not_utf8(source, limits)


def read_header(
    path: Path, *, limits: IntakeLimits = DEFAULT_LIMITS, max_columns: int | None = None
) -> list[str]:
    """The column names of a CSV (plain, .gz or .zip), after checking it is UTF-8 text at all."""
    source = sniff(Path(path), limits=limits)
    head = read_head(source, limits=limits)
    names = _parse_header(head, limits, max_columns=max_columns)
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
            f"the first line should be the header {spelled} but is "
            f"{quote(cut(','.join(header), 200))}; "
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
    numbers = pc.match_substring_regex(pa.array(header[1:], pa.string()), NUMBER, ignore_case=True)
    if pc.any(numbers).as_py():
        return True
    ids = getattr(key, "ids", None)  # the service checks uploads against a key's columns only
    return ids is not None and bool(pc.any(pc.equal(ids, header[0])).as_py())


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
    source = sniff(Path(path), limits=limits)
    head = read_head(source, limits=limits)
    header = _parse_header(head, limits)
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
    types.update({c: column_type(metric.cell) for c in targets})
    types.update({c: pa.float64() for c in param_columns})
    if USAGE_COLUMN in header:
        types[USAGE_COLUMN] = column_type("label")
    table = read_table(source, types, limits)
    ids_chunked = table.column(id_col)
    for name in targets:
        check_column(source, name, metric.cell, table.column(name), ids_chunked, limits)
    for name in param_columns:
        check_numbers(source, name, table.column(name), ids_chunked, limits)
    n = table.num_rows
    y_true = stack(table, targets, metric, None, n)
    extra = {c: aligned_values(table.column(c), "number", None, n) for c in param_columns}
    usage_column = table.column(USAGE_COLUMN) if USAGE_COLUMN in header else None
    # The targets are numpy now. The parsed table goes, and Arrow's pool hands its pages back,
    # before the id index is built: its numpy temporaries would otherwise come on top of
    # memory the pool keeps for reuse (the peak of a large key).
    del table
    ids = ids_chunked.combine_chunks()
    del ids_chunked
    pa.default_memory_pool().release_unused()
    index = KeyIndex.build(ids)
    _check_unique_key_ids(ids, index)
    usage = _usage_codes(usage_column, ids) if usage_column is not None else None
    return AnswerKeyTable(
        id_column=id_col,
        target_columns=targets,
        ids=ids,
        y_true=y_true,
        usage=usage,
        extra=extra,
        index=index,
    )


def _check_unique_key_ids(ids: pa.Array, index: KeyIndex) -> None:
    suspects = index.colliding_rows()
    if not suspects.size:
        return
    counts = pc.value_counts(ids.take(arrow_indices(suspects)))
    repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise IntakeError(
            f"the answer key has {plural(len(repeated), 'duplicate id')}: "
            f"{first_few(repeated.slice(0, SHOWN).to_pylist(), total=len(repeated))}",
            kind="duplicate_ids",
        )


def _usage_codes(column: pa.ChunkedArray, ids: pa.Array) -> np.ndarray:
    codes = np.empty(len(column), dtype=np.int8)
    start = 0
    for chunk in column.chunks:  # a dictionary column: map each chunk's few labels, not rows
        local = [USAGE_CODES.get(label, -1) for label in chunk.dictionary.to_pylist()]
        codes[start : start + len(chunk)] = np.array(local or [-1], dtype=np.int8)[
            primitive(chunk.indices)
        ]
        start += len(chunk)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        held = pc.unique(column.take(arrow_indices(bad)).cast(pa.string())).to_pylist()
        raise IntakeError(
            f"the Usage column must hold Public, Private or Ignored; {bad.size} row(s) hold "
            f"{first_few(sorted(held))}, for id(s) "
            f"{first_few(ids.take(arrow_indices(bad[:SHOWN])).to_pylist(), total=bad.size)}",
            kind="bad_usage",
        )
    if not np.any(codes != IGNORED):
        raise IntakeError("every row of the answer key is Ignored", kind="bad_usage")
    return codes


# --- submissions ---------------------------------------------------------------------------


# Columns a submission's header may hold beyond the expected ones before it is refused unread:
# enough to name a few unexpected columns, far too few to make the header costly.
HEADER_SLACK = 16


def submission_limits(key: AnswerKeyTable, limits: IntakeLimits = DEFAULT_LIMITS) -> IntakeLimits:
    """The budget of a submission to ``key``: no more rows than the key has, and no more bytes
    than its ids and generous room for each value could need (within the configured limits).

    Only the key's ids and row count enter it, both public through the sample submission.
    """
    per_value = 64 if key.target_columns and _numeric_key(key) else 1024
    id_bytes = _string_bytes(key.ids)
    budget = 2 * id_bytes + key.n_rows * (8 + len(key.target_columns) * per_value) + (1 << 20)
    # Some rows more than the key, so that a few extra rows are named as unknown ids.
    rows = min(limits.max_rows, key.n_rows + key.n_rows // 10 + 1000)
    max_bytes = min(limits.max_decompressed_bytes, budget)
    return IntakeLimits(
        max_rows=rows,
        max_decompressed_bytes=max_bytes,
        max_line_bytes=limits.max_line_bytes,
        max_columns=1 + len(key.target_columns) + HEADER_SLACK,
        why=f"a submission for an answer key of {key.n_rows:,} rows needs no more",
    )


def _numeric_key(key: AnswerKeyTable) -> bool:
    return key.y_true.dtype.kind == "f"


def _string_bytes(ids: pa.Array) -> int:
    """The bytes of all strings of ``ids``: two reads of its offsets, whatever its length."""
    if len(ids) == 0:
        return 0
    if not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
        return int(pc.sum(pc.binary_length(ids)).as_py() or 0)
    dtype = np.dtype(np.int64 if pa.types.is_large_string(ids.type) else np.int32)
    offsets = ids.buffers()[1]

    def at(i: int) -> int:
        return int(np.frombuffer(offsets, dtype=dtype, count=1, offset=i * dtype.itemsize)[0])

    return at(ids.offset + len(ids)) - at(ids.offset)


def check_upload(path: Path, *, key: AnswerKeyTable, limits: IntakeLimits = DEFAULT_LIMITS) -> None:
    """The checks quick enough to answer an upload with a 422: format, size, encoding, header.

    ``key`` needs only ``id_column`` and ``target_columns`` (the service passes its key row).
    """
    source = sniff(Path(path), limits=limits)
    head = read_head(source, limits=limits)
    _check_submission_head(source, head, key, limits)


def _check_submission_head(
    source: Source, head: bytes, key: AnswerKeyTable, limits: IntakeLimits
) -> list[str]:
    try:
        header = _parse_header(head, limits, max_columns=1 + len(key.target_columns) + HEADER_SLACK)
        _check_head_utf8(source, head, limits)
        check_submission_header(header, key)
    except IntakeError as exc:
        foreign = foreign_text(head) if exc.kind in _HEADER_KINDS else None
        if foreign is None:
            raise _in_member(source, exc) from None
        # Its "columns" would be fragments of JSON or markup: say what the file is instead.
        where = "the file"
        if source.container == "zip" and source.member is not None:
            where = f"the file {quote(source.member)} inside the .zip archive"
        spelled = ", ".join([key.id_column, *key.target_columns])
        raise IntakeError(
            f"{where} looks like {foreign}, not CSV; expected a CSV file whose first line is the "
            f"header {spelled}, then one line per id",
            kind="not_csv",
        ) from None
    return header


# Refusals of a header that, for a file of another format, would only quote its fragments.
_HEADER_KINDS = frozenset(
    {
        "bad_header",
        "missing_header",
        "missing_columns",
        "extra_columns",
        "too_many_columns",
        "line_too_long",
    }
)


def _in_member(source: Source, exc: IntakeError) -> IntakeError:
    """Name the file inside a .zip when its content is not the CSV expected."""
    if source.container != "zip" or source.member is None:
        return exc
    if source.member.lower().endswith(".csv"):
        what = f"the file {quote(source.member)} inside the .zip archive"
    else:
        what = f"the .zip archive holds {quote(source.member)}, which is not a CSV file;"
    return IntakeError(f"{what} {exc.message}", kind=exc.kind)


def read_submission(
    path: Path, *, key: AnswerKeyTable, metric: Metric, limits: IntakeLimits = DEFAULT_LIMITS
) -> np.ndarray:
    """Parse a submission and return its predictions aligned row for row with ``key``.

    ``limits`` are narrowed to what the key could need (:func:`submission_limits`) and enforced
    while the file is read. A small file read the same way moments ago (to score it, then for
    its intervals) is not parsed again (:mod:`app.scoring.intake_recent`).
    """
    return RECENT.read(
        Path(path),
        table=key,
        variant=(metric.name, metric.cell, metric.columns, limits),
        read=lambda: _read_submission(path, key=key, metric=metric, limits=limits),
    )


def _read_submission(
    path: Path, *, key: AnswerKeyTable, metric: Metric, limits: IntakeLimits
) -> np.ndarray:
    limits = submission_limits(key, limits)
    source = sniff(Path(path), limits=limits)
    head = read_head(source, limits=limits)
    _check_submission_head(source, head, key, limits)
    types: dict[str, pa.DataType] = {key.id_column: pa.string()}
    types.update({c: column_type(metric.cell) for c in key.target_columns})
    table = read_table(source, types, limits)
    ids = table.column(key.id_column)
    # A refused file names every problem found past parsing: its ids', then each column's.
    problems: list[IntakeError] = []
    rows = None
    try:
        rows = _align_rows(source, ids, key, limits)
    except IntakeError as exc:
        problems.append(exc)
    finally:
        if key.release_pages is not None:
            key.release_pages()
    for name in key.target_columns:
        try:
            check_column(source, name, metric.cell, table.column(name), ids, limits)
        except IntakeError as exc:
            problems.append(exc)
    if problems:
        raise combined(problems)
    # Aligned and checked, the ids are done with: they go back to the system before the
    # predictions are placed in key order (at 10M rows, the process's peak).
    table = table.select(key.target_columns)
    del ids
    pa.default_memory_pool().release_unused()
    y_pred = stack(table, key.target_columns, metric, rows, key.n_rows)
    del table, rows
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


# Lines named per repeated id: enough to find the copies, however many there are.
_LINES_PER_ID = 3


def _repeated_ids(
    source: Source | None, ids: pa.ChunkedArray, repeated: pa.Array, limits: IntakeLimits
) -> str:
    """``2 id(s) appear more than once: 'r01' (lines 2, 10), 'r03' (lines 4, 5, 6; 4 times)``."""
    shown = repeated.slice(0, SHOWN).to_pylist()
    rows_of: dict[object, tuple[np.ndarray, int]] = {}
    for value in shown:
        rows = np.flatnonzero(pc.equal(ids, value).to_numpy(zero_copy_only=False))
        rows_of[value] = (rows[:_LINES_PER_ID], rows.size)
    wanted = np.concatenate([rows for rows, _ in rows_of.values()])
    # Without the file (ids read from elsewhere), data rows are numbered from 1 instead.
    lines = line_numbers(source, wanted, limits=limits) if source is not None else {}
    word, base = ("lines", 2) if source is not None else ("data rows", 1)
    parts = []
    for value, (rows, count) in rows_of.items():
        at = ", ".join(str(lines.get(int(row), int(row) + base)) for row in rows)
        times = f"; {count:,} times" if count > len(rows) else ""
        parts.append(f"{quote(value)} ({word} {at}{times})")
    more = len(repeated) - len(shown)
    tail = f" (and {more:,} more)" if more > 0 else ""
    return f"{plural(len(repeated), 'id')} appear more than once: {', '.join(parts)}{tail}"


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
        problems.append(
            ("duplicate_ids", _repeated_ids(source, ids, repeated, limits)),
        )
    unknown = np.flatnonzero(found < 0)
    if unknown.size:
        where = (
            describe_rows(source, ids, unknown, limits)
            if source is not None
            else first_few(ids.take(arrow_indices(unknown[:SHOWN])).to_pylist(), total=unknown.size)
        )
        problems.append(
            (
                "unknown_ids",
                f"{plural(unknown.size, 'id')} not in the answer key: {where}",
            )
        )
    present = np.zeros(key.n_rows, dtype=bool)
    present[found[found >= 0]] = True
    missing = np.flatnonzero(~present)
    if missing.size:
        problems.append(
            (
                "missing_ids",
                f"{plural(missing.size, 'id')} of the answer key are missing: "
                f"{first_few(key.ids.take(arrow_indices(missing[:SHOWN])).to_pylist(), total=missing.size)}",
            )
        )
    if not problems:  # cannot happen: _align_rows only calls here on a problem
        problems.append(("unknown_ids", "the submission's ids do not match the answer key's"))
    return IntakeError("; ".join(text for _, text in problems), kind=problems[0][0])
