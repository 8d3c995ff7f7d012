"""Forms of repeated rows without JavaScript, as the New competition page's steps have them (its
columns, its phases, and each phase's own columns and entry fields): reading the rows a form
posted, adding or removing one with a submit button, and placing a refusal of the API's schemas
or services beside the field it names.

A row's fields are named ``<prefix>-<i>-<field>`` (``col-0-key``), a nested row's
``<prefix>-<i>-<sub>-<j>-<field>`` (``ph-1-col-0-key``). A button's ``action`` is ``verb`` for
the outer rows and ``<scope>:verb`` for a nested list (``ph-1-col:add_metric``,
``ph-1-field:remove-0``).
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from starlette.datastructures import FormData

from app.errors import AppError
from app.http.messages import sentence

CELL = 200  # no field of a row is longer; more is cut before it is read
# The API's names for lists of rows, and the short names their form fields go by.
NESTED_NAMES = {"columns": "col", "entry_fields": "field"}


@dataclass(frozen=True)
class RowShape:
    """What one kind of row posts: its fields (the first is always sent), its longest cell
    where longer than ``CELL``, the most rows read, and its nested lists of rows by name."""

    fields: tuple[str, ...]
    limit: int
    wide: Mapping[str, int] = field(default_factory=dict)
    nested: Mapping[str, tuple[str, "RowShape"]] = field(default_factory=dict)


def read_rows(form: FormData, prefix: str, shape: RowShape) -> list[dict[str, Any]]:
    """The rows the form posted, in order, each cell bounded; ``params`` holds a row's
    ``<head>param-<name>`` fields, and each nested list is read under its own prefix."""
    rows = []
    for i in range(shape.limit):
        head = f"{prefix}-{i}-"
        if head + shape.fields[0] not in form:
            continue
        row: dict[str, Any] = {
            f: str(form.get(head + f) or "").strip()[: shape.wide.get(f, CELL)]
            for f in shape.fields
        }
        row["params"] = {
            key[len(head + "param-") :]: str(value).strip()[:CELL]
            for key, value in form.multi_items()
            if key.startswith(head + "param-")
        }
        for name, (short, inner) in shape.nested.items():
            row[name] = read_rows(form, head + short, inner)
        rows.append(row)
    return rows


def edit_rows(
    rows: list[dict[str, Any]],
    verb: str,
    *,
    new: Mapping[str, Callable[[], dict[str, Any]]],
    limit: int,
) -> bool:
    """Do what a row button asks of ``rows`` in place: ``new[verb]`` adds a row (up to
    ``limit``), ``remove-<i>`` drops row i, ``up-<i>`` swaps it with the one before (order
    matters: the first column ranks, phases run in order). False: not a row button's verb."""
    if verb in new:
        if len(rows) < limit:
            rows.append(new[verb]())
        return True
    if verb.startswith("remove-"):
        index = verb.removeprefix("remove-")
        rows[:] = [r for i, r in enumerate(rows) if str(i) != index]
        return True
    if verb.startswith("up-"):
        index = verb.removeprefix("up-")
        i = int(index) if index.isdigit() and len(index) < 4 else 0
        if 0 < i < len(rows):
            rows[i - 1], rows[i] = rows[i], rows[i - 1]
        return True
    return False


def split_action(action: str) -> tuple[str, str]:
    """A button's (scope, verb): ``("ph-1-col", "add_metric")``; the outer rows' scope is ''."""
    scope, _, verb = action.rpartition(":")
    return scope, verb


def error_key(prefix: str, loc: tuple[Any, ...]) -> tuple[str, str]:
    """Where a message goes, and what of the field it is about beyond that: for ("ph", (0,
    "columns", 1, "computed", "of")), ``("ph-0-col-1-computed", "of")``; ``"form"`` for a
    message about no row."""
    if not loc or not isinstance(loc[0], int):
        return "form", ""
    key, rest = f"{prefix}-{loc[0]}", list(loc[1:])
    while len(rest) >= 2 and rest[0] in NESTED_NAMES and isinstance(rest[1], int):
        key, rest = f"{key}-{NESTED_NAMES[rest[0]]}-{rest[1]}", rest[2:]
    if not rest:
        return key, ""
    return f"{key}-{rest[0]}", ".".join(str(p) for p in rest[1:] if not isinstance(p, int))


def _field_loc(field: str) -> tuple[Any, ...]:
    """A service's field (``phases[1].columns[0].metric``) as a path within its list:
    (1, "columns", 0, "metric")."""
    parts: list[Any] = [
        int(index) if index else name for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", field)
    ]
    return tuple(parts[1:])


def validation_errors(prefix: str, exc: ValidationError) -> dict[str, str]:
    """A schema's refusals by the field they name (the first for each)."""
    errors: dict[str, str] = {}
    for e in exc.errors():
        loc = tuple(p for p in e["loc"] if not str(p).startswith("function-"))
        key, about = error_key(prefix, loc)
        message = sentence(e)
        errors.setdefault(key, f"{about}: {message}" if about else message)
    return errors


def service_errors(prefix: str, exc: AppError) -> dict[str, str]:
    """A service's refusal beside the field its ``field`` names, else for the whole form."""
    field = exc.extra.get("field")
    key = error_key(prefix, _field_loc(field))[0] if isinstance(field, str) else "form"
    return {key: exc.detail}
