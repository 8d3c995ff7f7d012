"""The New competition page's Phases step (``/c/{slug}/host/new/phases``): every setting of
each phase of the draft (window, quotas, board, what counts, what participants send and a code
phase's limits), its own leaderboard columns if it has any (rows shaped as the Columns step's,
app.web.wizard) and the entry fields an uploader fills in. No JavaScript: a button adds or removes
a phase, a column or a field and shows the form again with what was typed; saving validates with
the API's schemas and services and shows a refusal beside the field it names.
"""

import re
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import HTMLResponse
from pydantic import TypeAdapter, ValidationError

from app.coderun.limits import CodeLimits, maxima
from app.competitions import drafts
from app.competitions.schemas import MAX_PHASES, STANDARD_FIELDS, PhaseConfig, TaskConfig
from app.config import Settings
from app.deps import SettingsDep
from app.errors import AppError
from app.evaluation.columns import column_defs
from app.models import Competition, Phase
from app.models.phase import BOARD_RULES, COUNTING_RULES, KIND_CODE, SUBMISSION_KINDS
from app.web.forms import HostForm, HostPage, Visit
from app.web.rows import (
    CELL,
    RowShape,
    edit_rows,
    read_rows,
    service_errors,
    split_action,
    validation_errors,
)
from app.web.session import CsrfChecked, redirect
from app.web.wizard import (
    COLUMN_SHAPE,
    MAX_COLUMNS,
    as_text,
    column_adders,
    column_body,
    column_context,
    column_row,
    show_step,
)

router = APIRouter(include_in_schema=False)

MAX_ENTRY_FIELDS = 20
PHASE_FIELDS = (
    "name",
    "title",
    "start",
    "end",
    "daily_submission_limit",
    "total_submission_limit",
    "final_selection_limit",
    "board",
    "counts",
    "submission_kind",
)
# A code phase's limits (app.coderun.limits.CodeLimits), as the form labels them.
LIMIT_FIELDS = {
    "wall_seconds": "Seconds a run",
    "memory_mb": "Memory (MB)",
    "cpus": "CPUs",
    "working_mb": "Working space (MB)",
}
FIELD_FIELDS = ("key", "title", "type", "options", "required", "on_board")
FIELD_TYPES = ("text", "boolean", "choice")
# A choice field's options, one a line: up to 100 of 200 characters.
FIELD_SHAPE = RowShape(FIELD_FIELDS, MAX_ENTRY_FIELDS, wide={"options": 100 * (CELL + 2)})
# Migration between phases (app.competitions.migration): which phase, and what of it.
MIGRATE_FIELDS = ("migrate_from", "migrate_take")
PHASE_SHAPE = RowShape(
    PHASE_FIELDS + tuple(LIMIT_FIELDS) + MIGRATE_FIELDS,
    MAX_PHASES,
    nested={"columns": ("col", COLUMN_SHAPE), "fields": ("field", FIELD_SHAPE)},
)
PHASES_ADAPTER = TypeAdapter(list[PhaseConfig])


def _instant(value: Any) -> str:
    # The stored instant exactly, in UTC, so the page echoes what it keeps.
    return value.isoformat().replace("+00:00", "Z") if value is not None else ""


def _phase_row(phase: Phase) -> dict[str, Any]:
    limits = phase.code_limits or {}
    return {
        "name": phase.name,
        "title": phase.title,
        "start": _instant(phase.start),
        "end": _instant(phase.end),
        "daily_submission_limit": str(phase.daily_submission_limit),
        "total_submission_limit": ""
        if phase.total_submission_limit is None
        else str(phase.total_submission_limit),
        "final_selection_limit": str(phase.final_selection_limit),
        "board": phase.board,
        "counts": phase.counts,
        "submission_kind": phase.submission_kind,
        **{name: as_text(limits.get(name)) for name in LIMIT_FIELDS},
        "params": {},
        "columns": [column_row(d) for d in phase.columns or []],
        "fields": [_field_row(f) for f in phase.entry_fields or []],
        "migrate_from": (phase.migrate or {}).get("from", ""),
        "migrate_take": (phase.migrate or {}).get("take", "selected"),
        "stored_start": _instant(phase.start),
        "stored_end": _instant(phase.end),
    }


def _new_phase(position: int) -> dict[str, Any]:
    # No start: it opens when the phase before it ends (a bare end date is 23:59:59).
    return dict.fromkeys(PHASE_SHAPE.fields, "") | {
        "name": f"phase-{position + 1}",
        "board": "public",
        "counts": "chosen",
        "submission_kind": "predictions",
        "migrate_take": "selected",
        "params": {},
        "columns": [],
        "fields": [],
    }


def _field_row(field: dict[str, Any]) -> dict[str, Any]:
    return {
        "key": field.get("key", ""),
        "title": field.get("title") or "",
        "type": field.get("type", "text"),
        "options": "\n".join(field.get("options") or []),
        "required": "1" if field.get("required") else "",
        "on_board": "1" if field.get("on_board") else "",
        "params": {},
    }


def _new_field(key: str = "") -> dict[str, Any]:
    return _field_row({"key": key})


def _field_body(row: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"key": row["key"], "type": row["type"] or "text"}
    if row["title"]:
        body["title"] = row["title"]
    options = [line.strip() for line in row["options"].splitlines() if line.strip()]
    if options:
        body["options"] = options
    body["required"] = bool(row["required"])
    body["on_board"] = bool(row["on_board"])
    return body


def _phase_body(row: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {name: row[name] for name in PHASE_FIELDS if row.get(name)}
    limits = {name: row[name] for name in LIMIT_FIELDS if row.get(name)}
    # A predictions phase runs nothing: the limits it keeps in the form are not sent.
    if limits and row.get("submission_kind") == KIND_CODE:
        body["code_limits"] = limits
    if row["columns"]:
        body["columns"] = [column_body(c) for c in row["columns"]]
    if row["fields"]:
        body["entry_fields"] = [_field_body(f) for f in row["fields"]]
    if row.get("migrate_from"):
        body["migrate"] = {
            "from": row["migrate_from"],
            "take": row.get("migrate_take") or "selected",
        }
    return body


def _edit_phases(rows: list[dict[str, Any]], action: str, competition: Competition) -> None:
    """What a button of the phases step asks: a phase added or removed, or within phase i
    (``ph-<i>-col:...``, ``ph-<i>-field:...``) a column or an entry field."""
    scope, verb = split_action(action)
    if not scope:
        edit_rows(rows, verb, new={"add_phase": lambda: _new_phase(len(rows))}, limit=MAX_PHASES)
        return
    found = re.fullmatch(r"ph-(\d{1,2})-(col|field)", scope)
    if found is None or int(found[1]) >= len(rows):
        return
    row = rows[int(found[1])]
    if found[2] == "col":
        if verb == "own":
            row["columns"] = [column_row(d) for d in column_defs(competition)]
        elif verb == "drop":
            row["columns"] = []
        else:
            edit_rows(row["columns"], verb, new=column_adders(row["columns"]), limit=MAX_COLUMNS)
        return
    if verb == "standard":
        asked = {f["key"] for f in row["fields"]}
        missing = [k for k in STANDARD_FIELDS if k not in asked]
        row["fields"] += [_new_field(k) for k in missing][: MAX_ENTRY_FIELDS - len(row["fields"])]
        return
    edit_rows(row["fields"], verb, new={"add": _new_field}, limit=MAX_ENTRY_FIELDS)


def _phases_page(
    visit: Visit,
    settings: Settings,
    rows: list[dict[str, Any]],
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    defaults, ceiling = CodeLimits(), maxima(settings)
    return show_step(
        visit,
        "host/new_phases.html",
        "phases",
        status_code,
        rows=rows,
        errors=errors or {},
        boards=BOARD_RULES,
        counting=COUNTING_RULES,
        kinds=SUBMISSION_KINDS,
        field_types=FIELD_TYPES,
        limits=[
            (name, text, as_text(getattr(defaults, name)), as_text(getattr(ceiling, name)))
            for name, text in LIMIT_FIELDS.items()
        ],
        scorers={
            p.name: p.scorer.get("kind") or "scoring"
            for p in visit.competition.phases
            if p.scorer is not None
        },
        competition_columns=[d["key"] for d in column_defs(visit.competition)],
        **column_context(visit.competition),
    )


def _with_tasks(phases: list[PhaseConfig], competition: Competition) -> list[PhaseConfig]:
    """Each phase with the tasks it holds: the page edits a phase's window, rules and own
    columns, not its tasks (the API and the competition YAML do), so a save keeps them."""
    held = {p.name: p.tasks for p in competition.phases if p.tasks}
    return [
        config.model_copy(
            update={
                "tasks": [
                    TaskConfig.model_validate({k: t[k] for k in ("key", "title", "columns")})
                    for t in held[config.name]
                ]
            }
        )
        if config.tasks is None and config.name in held
        else config
        for config in phases
    ]


@router.get("/c/{slug}/host/new/phases", response_class=HTMLResponse)
def phases_step(visit: HostPage, settings: SettingsDep) -> Response:
    rows = [_phase_row(p) for p in visit.competition.phases]
    return _phases_page(visit, settings, rows)


@router.post("/c/{slug}/host/new/phases", dependencies=[CsrfChecked])
async def save_phases(form_visit: HostForm, settings: SettingsDep) -> Response:
    visit = form_visit
    form = await visit.request.form()
    rows = read_rows(form, "ph", PHASE_SHAPE)
    action = str(form.get("action") or "save")[:CELL]
    if action != "save":
        _edit_phases(rows, action, visit.competition)
        return _phases_page(visit, settings, rows)
    try:
        phases = PHASES_ADAPTER.validate_python([_phase_body(r) for r in rows])
    except ValidationError as exc:
        return _phases_page(visit, settings, rows, validation_errors("ph", exc), 422)
    phases = _with_tasks(phases, visit.competition)
    names = [p.name for p in phases]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if not phases or repeated:
        message = (
            f"duplicate phase name(s) in 'phases': {', '.join(repeated)}"
            if repeated
            else "a competition needs at least one phase"
        )
        return _phases_page(visit, settings, rows, {"form": message}, 422)
    try:
        with visit.session.begin_nested():
            drafts.revise_phases(
                visit.session, competition=visit.competition, phases=phases, actor=visit.user
            )
    except AppError as exc:
        return _phases_page(visit, settings, rows, service_errors("ph", exc), 422)
    stored = "; ".join(
        f"{p.name} {_instant(p.start)} to {_instant(p.end) or 'open-ended'}"
        for p in visit.competition.phases
    )
    return redirect(
        visit.request,
        f"/c/{visit.competition.slug}/host/new/data",
        ok=f"Phases saved (UTC): {stored}. Next: each phase's answer key and the data files.",
    )
