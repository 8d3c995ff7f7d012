"""Reading typed values out of a parsed config, each failure naming the file and the field.

Dates follow Codabench's ``get_datetime``: a date alone is midnight, a string is read by dateutil
with the month first (``12-31-2026``, ``8-7-2019`` is 7 August), and a time without a zone is UTC.
A time that does carry an offset is converted to UTC (Codabench overwrote the zone instead, which
moved such a phase by the offset; EvalAI stored UTC).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date, datetime, time
from typing import Any

from dateutil import parser as date_parser

from app.bundles.errors import BundleError
from app.http.messages import DATE_RANGE, FIRST_YEAR, LAST_YEAR


class Fields:
    """Accessors for one config file; ``path`` is the field's place, e.g. ``phases[1].end``."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, message: str, path: str | None = None) -> BundleError:
        return BundleError(message, file=self.file, field=path)

    def mapping(self, value: Any, path: str) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"must be a mapping, not {_kind(value)}", path)
        return value

    def sequence(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(f"must be a list, not {_kind(value)}", path)
        return value

    def text(self, value: Any, path: str, *, required: bool = True, max_len: int = 10_000) -> str:
        if value is None:
            if required:
                raise self.fail("is required", path)
            return ""
        if isinstance(value, date):
            # An unquoted name that looks like a date (``name: 2021-06-01``) is read as one by YAML.
            value = value.isoformat()
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.fail(f"must be text, not {_kind(value)}", path)
        text = str(value).strip()
        if required and not text:
            raise self.fail("must not be empty", path)
        if len(text) > max_len:
            raise self.fail(f"is longer than {max_len} characters", path)
        return text

    def integer(self, value: Any, path: str, *, minimum: int | None = 0) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool):
            raise self.fail("must be a whole number, not true/false", path)
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise self.fail(f"must be a whole number, not {_kind(value)}", path)
        if minimum is not None and value < minimum:
            raise self.fail(f"must be at least {minimum}", path)
        return value

    def boolean(self, value: Any, path: str, *, default: bool) -> bool:
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        # Codabench's fact sheets and many hand-written configs say "True" / "false" as strings.
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
            return value.strip().lower() in ("true", "yes")
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise self.fail(f"must be true or false, not {value!r}", path)

    def when(self, value: Any, path: str, *, required: bool = True) -> datetime | None:
        if value is None or (
            isinstance(value, str) and value.strip().lower() in ("", "null", "none")
        ):
            if required:
                raise self.fail("is required", path)
            return None
        if isinstance(value, datetime):
            moment = value
        elif isinstance(value, date):
            moment = datetime.combine(value, time())
        elif isinstance(value, str):
            try:
                moment = date_parser.parse(value, dayfirst=False)
            except (ValueError, OverflowError):
                raise self.fail(f"{value!r} is not a date", path) from None
        else:
            raise self.fail(f"must be a date, not {_kind(value)}", path)
        out_of_range = f"{str(value)[:40]!r} is out of range: {DATE_RANGE}"
        if not FIRST_YEAR <= moment.year <= LAST_YEAR:
            raise self.fail(out_of_range, path)
        try:
            moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        except OverflowError:  # 9999-12-31T23:59:59-12:00: past datetime's last instant in UTC
            raise self.fail(out_of_range, path) from None
        if not FIRST_YEAR <= moment.year <= LAST_YEAR:
            raise self.fail(out_of_range, path)
        return moment


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false"}.get(
        type(value), type(value).__name__
    )


def slugify(text: str, *, fallback: str = "item", max_len: int = 63) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:max_len].strip("-")
    if len(slug) < 2:
        slug = (fallback + ("-" + slug if slug else ""))[:max_len]
    return slug


def unique_slugs(names: list[str], *, fallback: str) -> list[str]:
    """Slugs for ``names`` in order, a suffix added where two would be equal."""
    seen: set[str] = set()
    out = []
    for name in names:
        base = slugify(name, fallback=fallback)
        slug, n = base, 2
        while slug in seen:
            slug = f"{base[:58]}-{n}"
            n += 1
        seen.add(slug)
        out.append(slug)
    return out


def column_key(label: str) -> str:
    """A column key for a program's label: lower-case letters, digits and ``_``."""
    ascii_text = unicodedata.normalize("NFKD", label).encode("ascii", "ignore").decode()
    key = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")[:36]
    return key or "column"


def unique_column_keys(labels: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for label in labels:
        base = column_key(label)
        key, n = base, 2
        while key in seen:
            key = f"{base[:32]}_{n}"
            n += 1
        seen.add(key)
        out.append(key)
    return out
