"""The one reading of a date a host types, in the API, the page and a YAML file (Kaggle's
convention): a bare date as a start is 00:00:00 UTC of that day, as an end (a deadline) 23:59:59
UTC; a time without a zone is UTC; any other zone is converted, so what is stored and echoed is
the exact UTC instant."""

import re
from datetime import UTC, date, datetime, time
from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from app.http.messages import DATE_EXAMPLE, DATE_RANGE, FIRST_YEAR, LAST_YEAR

_BARE_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
END_OF_DAY = time(23, 59, 59)


def _bare_date(value: Any, *, end: bool) -> Any:
    """A date with no time becomes a datetime at the start or the end of its UTC day; anything
    else is left for pydantic's datetime parsing."""
    if isinstance(value, str) and _BARE_DATE.fullmatch(value.strip()):
        try:
            value = date.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"'{value}' is not a date: {DATE_EXAMPLE}") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime.combine(value, END_OF_DAY if end else time(0), tzinfo=UTC)
    return value


RANGE = DATE_RANGE


def as_utc(value: datetime) -> datetime:
    """The UTC instant, or a ValueError (a 422 naming the field) for one out of range: a year
    such as 9999 with a negative offset would otherwise overflow into a 500."""
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValueError(f"{value.isoformat()} is out of range: {RANGE}")
    try:
        moved = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{value.isoformat()} is out of range: {RANGE}") from None
    if not FIRST_YEAR <= moved.year <= LAST_YEAR:
        raise ValueError(f"{value.isoformat()} is out of range: {RANGE}")
    return moved


def parse_instant(raw: str, *, end: bool) -> datetime:
    """A typed date or date-time, read by the same rules as the API's fields (a ValueError
    that says what is allowed, with an example)."""
    value = _bare_date(raw, end=end)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"'{raw.strip()[:40]}' is not a date: {DATE_EXAMPLE}") from None
    return as_utc(value)


# A window's opening (start) and closing instants (deadline, team-merge deadline).
StartInstant = Annotated[
    datetime, BeforeValidator(partial(_bare_date, end=False)), AfterValidator(as_utc)
]
EndInstant = Annotated[
    datetime, BeforeValidator(partial(_bare_date, end=True)), AfterValidator(as_utc)
]
