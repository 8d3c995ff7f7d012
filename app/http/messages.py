"""Validation errors as sentences a host understands: what is allowed, with an example.

pydantic words its errors for programmers ("String should match pattern '^[A-Za-z0-9_]…'",
"invalid character in year"); the API's 422, a YAML file's errors in `podium competitions create`
and the pages' form errors all pass each error through :func:`sentence`, so the three say the
same thing. A leaf module: it imports nothing of the app.
"""

from typing import Any

# Every date a host gives lies in these years: far enough from datetime's own ends (year 1 and
# 9999) that a zone's offset or a day's arithmetic never overflows, wide enough for any schedule.
FIRST_YEAR, LAST_YEAR = 1970, 2999
DATE_RANGE = f"a date must lie between {FIRST_YEAR}-01-01 and {LAST_YEAR}-12-31"

DATE_EXAMPLE = (
    "write a date as 2026-12-31, or a date and time as 2026-12-31T18:00:00 (UTC) or "
    "2026-12-31T18:00:00+01:00"
)

# The names a host types (app.competitions.schemas), by the pattern that checks them.
_PATTERNS = {
    r"^[a-z0-9][a-z0-9-]{1,62}$": (
        "a slug is 2 to 63 lowercase letters, digits and '-', starting with a letter or "
        "a digit, e.g. 'titanic-2026'"
    ),
    r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$": (
        "a key is up to 64 letters, digits, '_', '.' and '-' (no spaces), starting with a "
        "letter, a digit or '_', e.g. 'rmse' or 'f1_macro'"
    ),
    r"^[a-z0-9][a-z0-9-]{0,62}$": (
        "a phase name is up to 63 lowercase letters, digits and '-', starting with a letter "
        "or a digit, e.g. 'dev' or 'final'"
    ),
}


def _shown(value: Any) -> str:
    text = str(value)
    return f"'{text[:40]}…'" if len(text) > 40 else f"'{text}'"


def sentence(error: dict[str, Any]) -> str:
    """One pydantic error (``type``, ``msg``, ``ctx``, ``input``) as a sentence."""
    kind = str(error.get("type", ""))
    msg = str(error.get("msg", ""))
    ctx = error.get("ctx") or {}
    given = error.get("input")
    if kind == "string_pattern_mismatch":
        rule = _PATTERNS.get(str(ctx.get("pattern")))
        if rule is not None:
            return f"{_shown(given)} is not allowed: {rule}"
    if kind in ("datetime_parsing", "datetime_from_date_parsing", "date_parsing", "datetime_type"):
        return f"{_shown(given)} is not a date: {DATE_EXAMPLE}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{_shown(given)} is not a whole number: give one such as 5"
    if kind in ("float_parsing", "float_type"):
        return f"{_shown(given)} is not a number: give one such as 0.5"
    if kind in ("bool_parsing", "bool_type"):
        return f"{_shown(given)} is not true or false"
    if kind == "extra_forbidden":
        return "is not a setting here: check its spelling (and its indentation in a YAML file)"
    if kind == "missing":
        return "a value is required"
    if kind == "literal_error":
        return f"{_shown(given)} is not one of the choices: it must be {ctx.get('expected')}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return msg.replace("Input should be", "must be") + f" (it is {_shown(given)})"
    if kind in ("string_too_long", "too_long"):
        return msg.replace("String should", "must").replace("List should", "must")
    if kind in ("string_too_short", "too_short"):
        return msg.replace("String should", "must").replace("List should", "must")
    if kind in ("dict_type", "model_type", "list_type", "model_attributes_type"):
        return msg.replace("Input should be", "must be")
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind == "assertion_error":
        return msg.removeprefix("Assertion failed, ")
    return msg.replace("Input should be", "must be")
