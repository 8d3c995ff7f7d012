"""Entry details: what a phase asks an uploader for (EvalAI's submission meta attributes,
Codabench's fact sheet), checked against the phase's fields.

The standard four (``method_name``, ``method_description``, ``project_url``,
``publication_url``) and host-defined fields of type ``text``, ``boolean`` or ``choice``. The
values are participants' words: bounded here, escaped on pages, neutralised in CSVs.
"""

import json
from typing import Any
from urllib.parse import urlsplit

from app.errors import Unprocessable

MAX_DETAILS_BYTES = 16 * 1024
MAX_TEXT = 200
MAX_LONG_TEXT = 4000  # method_description
LONG_TEXT = {"method_description"}


def _refuse(field: str, message: str) -> Unprocessable:
    return Unprocessable(f"details.{field}: {message}", extra={"field": f"details.{field}"})


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _refuse(key, "must be text")
    value = value.strip()
    limit = MAX_LONG_TEXT if key in LONG_TEXT else MAX_TEXT
    if len(value) > limit:
        raise _refuse(key, f"is {len(value):,} characters; at most {limit:,}")
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        raise _refuse(key, "holds control characters")
    if key.endswith("_url") and value:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise _refuse(key, "must be an http(s) URL")
    return value


def _boolean(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    raise _refuse(key, "must be true or false")


def parse_details(raw: str | dict[str, Any] | None, fields: list[dict[str, Any]]) -> dict[str, Any]:
    """The details an upload carries (a JSON object, as the form field ``details`` sends it),
    checked against the phase's fields; a 422 names the field at fault."""
    given: Any = {}
    if isinstance(raw, str) and raw.strip():
        if len(raw.encode()) > MAX_DETAILS_BYTES:
            raise Unprocessable(
                f"details: at most {MAX_DETAILS_BYTES:,} bytes", extra={"field": "details"}
            )
        try:
            given = json.loads(raw)
        except ValueError:
            raise Unprocessable(
                'details: not a JSON object, e.g. {"method_name": "..."}',
                extra={"field": "details"},
            ) from None
    elif isinstance(raw, dict):
        given = raw
    if not isinstance(given, dict):
        raise Unprocessable("details: must be a JSON object", extra={"field": "details"})
    by_key = {f["key"]: f for f in fields}
    unknown = sorted(k for k in given if k not in by_key)
    if unknown:
        asked = ", ".join(by_key) or "none"
        raise Unprocessable(
            f"details: unknown field(s) {', '.join(map(str, unknown[:5]))}; this phase asks for "
            f"{asked}",
            extra={"field": "details"},
        )
    details: dict[str, Any] = {}
    for key, field in by_key.items():
        value = given.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            if field.get("required"):
                raise _refuse(key, "is required by this phase")
            continue
        kind = field.get("type", "text")
        if kind == "boolean":
            details[key] = _boolean(key, value)
        elif kind == "choice":
            options = field.get("options") or []
            if value not in options:
                raise _refuse(key, f"must be one of {', '.join(options)}")
            details[key] = value
        else:
            details[key] = _text(key, value)
    return details


def on_board(details: dict[str, Any] | None, fields: list[dict[str, Any]]) -> dict[str, Any]:
    """The details a phase shows on its boards."""
    if not details:
        return {}
    shown = {f["key"] for f in fields if f.get("on_board")}
    return {k: v for k, v in details.items() if k in shown}
