"""The competition as the phases API takes it (issue 21's ``POST /api/v1/competitions`` body).

The ranking column goes first (the API's first column ranks; the others break ties in order, as
Codabench ranks by its primary column and then by index). A column an imported program writes is
``{"key", "title", "scorer": "program", "source_key", "direction", ...}``: it has no catalogue
metric, so its direction is stated, and ``source_key`` is the name the program writes it under.
Files (answer keys, the program) are not in the body: they are in the model.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.bundles.model import Column, Competition, EntryField, Phase


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


def column_body(column: Column) -> dict[str, Any]:
    body: dict[str, Any] = {"key": column.key, "title": column.title}
    if column.metric is not None:
        body["metric"] = {"name": column.metric.name, "params": column.metric.params_dict()}
    elif column.computed is not None:
        body["computed"] = {"op": column.computed.op, "of": list(column.computed.of)}
        body["direction"] = column.direction
    else:
        body["scorer"] = "program"
        body["source_key"] = column.program_key
        body["direction"] = column.direction
    if column.precision is not None:
        body["precision"] = column.precision
    body["hidden"] = column.hidden
    return body


def columns_body(columns: tuple[Column, ...], ranking: str) -> list[dict[str, Any]]:
    ordered = sorted(columns, key=lambda c: c.key != ranking)  # stable: the others keep their order
    return [column_body(c) for c in ordered]


def _field(field: EntryField) -> dict[str, Any]:
    body: dict[str, Any] = {
        "key": field.key,
        "title": field.title,
        "type": field.type,
        "required": field.required,
        "on_board": field.on_board,
    }
    if field.options:
        body["options"] = list(field.options)
    return body


def phase_body(competition: Competition, phase: Phase) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": phase.name,
        "title": phase.title,
        "start": _when(phase.start),
        "end": _when(phase.end),
        "daily_submission_limit": phase.daily_submission_limit,
        "total_submission_limit": phase.total_submission_limit,
        "board": phase.board,
        "counts": phase.counts,
    }
    if phase.final_selection_limit is not None:
        body["final_selection_limit"] = phase.final_selection_limit
    if phase.columns is not None:
        body["columns"] = columns_body(phase.columns, phase.ranking or phase.columns[0].key)
    if phase.tasks:
        body["tasks"] = [
            {
                "key": t.key,
                "title": t.title,
                "columns": columns_body(t.columns, t.columns[0].key),
            }
            for t in phase.tasks
        ]
    if phase.entry_fields:
        body["entry_fields"] = [_field(e) for e in phase.entry_fields]
    if phase.migrate is not None:
        body["migrate"] = {"from": phase.migrate[0], "take": phase.migrate[1]}
    return body


def to_api_body(competition: Competition, *, slug: str | None = None) -> dict[str, Any]:
    return {
        "title": competition.title,
        "slug": slug or competition.slug,
        "description": competition.description.content,
        "columns": columns_body(competition.columns, competition.ranking),
        "phases": [phase_body(competition, p) for p in competition.phases],
    }
