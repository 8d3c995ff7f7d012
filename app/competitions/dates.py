"""The one reading of a date a host types, in the API, the page and a YAML file (Kaggle's
convention): a bare date as a start is 00:00:00 UTC of that day, as an end (a deadline) 23:59:59
UTC; a time without a zone is UTC; any other zone is converted, so what is stored and echoed is
the exact UTC instant."""

import re
from datetime import UTC, date, datetime, time
from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

_BARE_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
END_OF_DAY = time(23, 59, 59)


def _bare_date(value: Any, *, end: bool) -> Any:
    """A date with no time becomes a datetime at the start or the end of its UTC day; anything
    else is left for pydantic's datetime parsing."""
    if isinstance(value, str) and _BARE_DATE.fullmatch(value.strip()):
        try:
            value = date.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"'{value}' is not a date") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime.combine(value, END_OF_DAY if end else time(0), tzinfo=UTC)
    return value


def as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def parse_instant(raw: str, *, end: bool) -> datetime:
    """A typed date or date-time, read by the same rules as the API's fields."""
    value = _bare_date(raw, end=end)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip())
    return as_utc(value)


# A window's opening (start) and closing instants (deadline, team-merge deadline).
StartInstant = Annotated[
    datetime, BeforeValidator(partial(_bare_date, end=False)), AfterValidator(as_utc)
]
EndInstant = Annotated[
    datetime, BeforeValidator(partial(_bare_date, end=True)), AfterValidator(as_utc)
]
