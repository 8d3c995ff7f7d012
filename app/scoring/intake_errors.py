"""The one error intake raises, and the helpers that make its messages name what to fix.

A message says the kind of problem, how many rows it touches and the first few offending ids or
lines, so a competitor can fix the file without guessing. ``kind`` is a stable machine-readable
code (the list below); the service and the tests key on it, never on the wording.
"""

from collections.abc import Sequence

import numpy as np

SHOWN = 5  # how many offending ids or rows a message names
LONGEST_QUOTED = 100  # characters of an id or value quoted in a message; longer ones are cut
MAX_MESSAGE = 2000  # characters of a whole message: what is stored and shown has a ceiling

# The kinds of problem, in the order a file is examined.
KINDS = (
    "empty_file",  # no bytes, or only whitespace
    "not_text",  # binary content: NUL bytes, an image, a spreadsheet, …
    "unsupported_format",  # compressed with something other than gzip or zip
    "bad_archive",  # a damaged .gz/.zip, or a zip without exactly one file
    "too_large",  # over the decompressed-size limit (a zip bomb stops here)
    "line_too_long",  # a line longer than the line-length limit
    "too_many_columns",  # a header with more columns than the file could need
    "not_utf8",  # text in another encoding
    "not_csv",  # text of another format: JSON, an HTML page, XML
    "bad_header",  # empty or repeated column names
    "missing_header",  # the first line is data, not the header
    "missing_columns",
    "extra_columns",
    "ragged_row",  # a row with too many or too few fields
    "bad_csv",  # anything else the CSV parser refuses
    "no_rows",  # a header and nothing else
    "too_many_rows",
    "empty_cells",
    "non_numeric",
    "nan_values",
    "infinite_values",
    "huge_values",  # beyond ±1e100: any metric of them could overflow
    "duplicate_ids",
    "unknown_ids",
    "missing_ids",
    "bad_usage",
    "unknown_labels",  # a label outside the competition's published label set
)


class IntakeError(ValueError):
    """A file cannot be used; ``message`` names the problem for the person who uploaded it."""

    def __init__(self, message: str, *, kind: str = "invalid_file") -> None:
        message = cut(message, MAX_MESSAGE)
        super().__init__(message)
        self.message = message
        self.kind = kind
        # Every kind of problem the message names (a file may have several): kind is the first.
        self.kinds = [kind]


def combined(errors: list[IntakeError]) -> IntakeError:
    """Several problems of one file as one error: every message (each names the first few rows
    or ids of its kind), the first's kind; ``kinds`` lists them all."""
    if len(errors) == 1:
        return errors[0]
    error = IntakeError("; ".join(e.message for e in errors), kind=errors[0].kind)
    error.kinds = [k for e in errors for k in e.kinds]
    return error


def cut(text: str, limit: int) -> str:
    """``text`` itself, or its first characters and "…" when longer than ``limit``."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def quote(value: object) -> str:
    """An id or value as a message shows it: quoted, and cut at :data:`LONGEST_QUOTED`."""
    if isinstance(value, str):
        return repr(cut(value, LONGEST_QUOTED))
    return cut(repr(value), LONGEST_QUOTED)


def first_few(values: Sequence[object] | np.ndarray, *, total: int | None = None) -> str:
    """``'a', 'b', 'c' (and 7 more)``: the first :data:`SHOWN` values, quoted and cut.

    ``total`` is how many there are when ``values`` holds only the first few of them.
    """
    shown = [quote(v) for v in list(values[:SHOWN])]
    more = (len(values) if total is None else total) - len(shown)
    return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def plural(count: int, word: str) -> str:
    """``3 id(s)``: one spelling for any count, so messages are easy to search for."""
    return f"{count} {word}(s)"
