"""The New competition page's later steps, on the draft the first step saved (``/host/new``):
its leaderboard columns from the metric catalogue, its phases, then each phase's answer key and
the data files; the checklist and Publish are the Launch tab (app.web.launch).

Each step is a plain form (no JavaScript: adding or removing a row is a submit button that shows
the form again with what was typed). Saving validates with the API's own schemas and services,
and a refusal is shown beside the field it names, the typed values kept. A saved step is in the
draft, so the host may leave and come back to any step.
"""

import re
from typing import Annotated, Any

from fastapi import APIRouter, Form, Response, UploadFile
from fastapi.responses import HTMLResponse
from pydantic import TypeAdapter, ValidationError
from starlette.datastructures import FormData

from app.competitions import drafts
from app.competitions import service as competitions
from app.competitions.phases import get_phase
from app.competitions.schemas import MAX_PHASES, ColumnConfig, PhaseConfig
from app.datafiles import service as datafiles
from app.deps import SettingsDep
from app.errors import AppError
from app.evaluation.columns import column_defs
from app.metrics import Metric, UnknownMetric, all_metrics, get_metric
from app.models import Competition, Phase
from app.models.phase import BOARD_RULES, COUNTING_RULES
from app.web.competition import tab_context
from app.web.forms import HostForm, HostPage, Visit, chosen, form_post
from app.web.session import CsrfChecked, redirect
from app.web.templating import render

router = APIRouter(include_in_schema=False)

MAX_COLUMNS = 20
_CELL = 200  # no field of a row is longer; more is cut before it is read
COMPUTED = "computed"
COLUMN_FIELDS = ("key", "title", "kind", "op", "of", "precision", "hidden")
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
)
STEPS = (
    ("basics", "Basics", "/host"),
    ("columns", "Columns", "/host/new/columns"),
    ("phases", "Phases", "/host/new/phases"),
    ("data", "Keys and data", "/host/new/data"),
    ("launch", "Checklist and Publish", "/host/launch"),
)
COLUMNS_ADAPTER = TypeAdapter(list[ColumnConfig])
PHASES_ADAPTER = TypeAdapter(list[PhaseConfig])


def _show(
    visit: Visit, template: str, step: str, status_code: int = 200, **context: Any
) -> Response:
    frame = tab_context(visit.session, visit.competition, visit.user, "host")
    return render(
        visit.request,
        template,
        {**frame, "host_tab": "launch", "step": step, "steps": STEPS, **context},
        status_code=status_code,
    )


def _metric(name: str) -> Metric | None:
    try:
        return get_metric(name)
    except UnknownMetric:
        return None


def catalogue() -> list[dict[str, Any]]:
    """Every catalogue metric with what the page shows beside a column: its parameters (name,
    default, meaning), what it expects of the file, its direction and reference."""
    return [
        {
            "name": m.name,
            "summary": m.summary,
            "direction": m.direction,
            "reference": m.reference,
            "column_help": m.column_help,
            "params": [
                (name, info.get_default(call_default_factory=True), info.description or "")
                for name, info in m.params.model_fields.items()
            ],
        }
        for m in all_metrics()
    ]


# --- Columns --------------------------------------------------------------------------------


def _column_row(definition: dict[str, Any]) -> dict[str, Any]:
    """A stored column definition as the form's row of text fields."""
    computed = definition.get("computed")
    metric = definition.get("metric") or {}
    return {
        "key": definition.get("key", ""),
        "title": definition.get("title") or "",
        "kind": COMPUTED if computed else metric.get("name", ""),
        "op": computed["op"] if computed else "mean",
        "of": ", ".join(computed["of"]) if computed else "",
        "precision": "" if definition.get("precision") is None else str(definition["precision"]),
        "hidden": "1" if definition.get("hidden") else "",
        "params": {k: _text(v) for k, v in (metric.get("params") or {}).items()},
    }


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _rows(form: FormData, prefix: str, fields: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
    """The rows the form posted (``col-0-key``, ...), in order, each cell bounded."""
    rows = []
    for i in range(limit):
        head = f"{prefix}-{i}-"
        if head + fields[0] not in form:
            continue
        row: dict[str, Any] = {f: str(form.get(head + f) or "").strip()[:_CELL] for f in fields}
        row["params"] = {
            key[len(head + "param-") :]: str(value).strip()[:_CELL]
            for key, value in form.multi_items()
            if key.startswith(head + "param-")
        }
        rows.append(row)
    return rows


def _column_body(row: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"key": row["key"]}
    if row["title"]:
        body["title"] = row["title"]
    if row["kind"] == COMPUTED:
        of = [part.strip() for part in row["of"].split(",") if part.strip()]
        body["computed"] = {"op": row["op"], "of": of}
    else:
        metric = _metric(row["kind"])
        # Only the chosen metric's parameters: a row whose metric was changed still shows the
        # old one's until the page is shown again.
        known = metric.params.model_fields if metric is not None else {}
        params = {k: v for k, v in row["params"].items() if v and k in known}
        body["metric"] = {"name": row["kind"], "params": params}
    if row["precision"]:
        body["precision"] = row["precision"]
    if row["hidden"]:
        body["hidden"] = True
    return body


def _error_key(prefix: str, loc: tuple[Any, ...]) -> str:
    """Where a message goes: ``col-1-computed`` for (1, "computed", "of"), ``form`` else."""
    if not loc or not isinstance(loc[0], int):
        return "form"
    return f"{prefix}-{loc[0]}-{loc[1]}" if len(loc) > 1 else f"{prefix}-{loc[0]}"


def _field_loc(field: str) -> tuple[Any, ...]:
    """A service's field (``columns[1].computed.of``) as a path: (1, "computed", "of")."""
    parts: list[Any] = [
        int(index) if index else name for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", field)
    ]
    return tuple(parts[1:])


def _validation_errors(prefix: str, exc: ValidationError) -> dict[str, str]:
    errors: dict[str, str] = {}
    for e in exc.errors():
        loc = tuple(p for p in e["loc"] if not str(p).startswith("function-"))
        errors.setdefault(_error_key(prefix, loc), e["msg"].removeprefix("Value error, "))
    return errors


def _service_errors(prefix: str, exc: AppError) -> dict[str, str]:
    field = exc.extra.get("field")
    key = _error_key(prefix, _field_loc(field)) if isinstance(field, str) else "form"
    return {key: exc.detail}


def _columns_page(
    visit: Visit,
    rows: list[dict[str, Any]],
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    return _show(
        visit,
        "host/new_columns.html",
        "columns",
        status_code,
        rows=rows,
        errors=errors or {},
        catalogue=catalogue(),
        computed=COMPUTED,
    )


@router.get("/c/{slug}/host/new/columns", response_class=HTMLResponse)
def columns_step(visit: HostPage) -> Response:
    rows = [_column_row(d) for d in column_defs(visit.competition)]
    if visit.competition.columns is None:
        # The draft's first column, named after its metric: no title of the host's yet.
        rows[0]["title"] = ""
    return _columns_page(visit, rows)


@router.post("/c/{slug}/host/new/columns", dependencies=[CsrfChecked])
async def save_columns(form_visit: HostForm) -> Response:
    visit = form_visit
    form = await visit.request.form()
    rows = _rows(form, "col", COLUMN_FIELDS, MAX_COLUMNS)
    action = str(form.get("action") or "save")
    if action in ("add_metric", "add_computed") and len(rows) < MAX_COLUMNS:
        kind = COMPUTED if action == "add_computed" else (rows[0]["kind"] if rows else "roc_auc")
        of = ", ".join(r["key"] for r in rows if r["kind"] != COMPUTED)
        rows.append(
            {
                "key": "",
                "title": "",
                "kind": kind,
                "op": "mean",
                "of": of if kind == COMPUTED else "",
            }
            | {"precision": "", "hidden": "", "params": {}}
        )
    if action.startswith("remove-"):
        index = action.removeprefix("remove-")
        rows = [r for i, r in enumerate(rows) if str(i) != index]
    if action != "save":
        return _columns_page(visit, rows)
    try:
        columns = COLUMNS_ADAPTER.validate_python([_column_body(r) for r in rows])
    except ValidationError as exc:
        return _columns_page(visit, rows, _validation_errors("col", exc), 422)
    if not columns:
        return _columns_page(visit, rows, {"form": "a competition needs at least one column"}, 422)
    try:
        with visit.session.begin_nested():
            drafts.revise_columns(
                visit.session, competition=visit.competition, columns=columns, actor=visit.user
            )
    except AppError as exc:
        return _columns_page(visit, rows, _service_errors("col", exc), 422)
    return redirect(
        visit.request,
        f"/c/{visit.competition.slug}/host/new/phases",
        ok=f"Columns saved: {', '.join(c.key for c in columns)}. Next: the phases.",
    )


# --- Phases ---------------------------------------------------------------------------------


def _instant(value: Any) -> str:
    # The stored instant exactly, in UTC, so the page echoes what it keeps.
    return value.isoformat().replace("+00:00", "Z") if value is not None else ""


def _phase_row(phase: Phase, competition: Competition) -> dict[str, Any]:
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
        "params": {},
        "stored_start": _instant(phase.start),
        "stored_end": _instant(phase.end),
    }


def _phase_body(row: dict[str, Any]) -> dict[str, Any]:
    return {name: row[name] for name in PHASE_FIELDS if row.get(name)}


def _phases_page(
    visit: Visit,
    rows: list[dict[str, Any]],
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    return _show(
        visit,
        "host/new_phases.html",
        "phases",
        status_code,
        rows=rows,
        errors=errors or {},
        boards=BOARD_RULES,
        counting=COUNTING_RULES,
    )


@router.get("/c/{slug}/host/new/phases", response_class=HTMLResponse)
def phases_step(visit: HostPage) -> Response:
    rows = [_phase_row(p, visit.competition) for p in visit.competition.phases]
    return _phases_page(visit, rows)


@router.post("/c/{slug}/host/new/phases", dependencies=[CsrfChecked])
async def save_phases(form_visit: HostForm) -> Response:
    visit = form_visit
    form = await visit.request.form()
    rows = _rows(form, "ph", PHASE_FIELDS, MAX_PHASES)
    action = str(form.get("action") or "save")
    if action == "add_phase" and len(rows) < MAX_PHASES:
        # No start: it opens when the phase before it ends (a bare end date is 23:59:59).
        rows.append(
            dict.fromkeys(PHASE_FIELDS, "")
            | {"name": f"phase-{len(rows) + 1}", "board": "public", "counts": "chosen"}
            | {"params": {}}
        )
    if action.startswith("remove-"):
        index = action.removeprefix("remove-")
        rows = [r for i, r in enumerate(rows) if str(i) != index]
    if action != "save":
        return _phases_page(visit, rows)
    try:
        phases = PHASES_ADAPTER.validate_python([_phase_body(r) for r in rows])
    except ValidationError as exc:
        return _phases_page(visit, rows, _validation_errors("ph", exc), 422)
    names = [p.name for p in phases]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if not phases or repeated:
        message = (
            f"duplicate phase name(s) in 'phases': {', '.join(repeated)}"
            if repeated
            else "a competition needs at least one phase"
        )
        return _phases_page(visit, rows, {"form": message}, 422)
    try:
        with visit.session.begin_nested():
            drafts.revise_phases(
                visit.session, competition=visit.competition, phases=phases, actor=visit.user
            )
    except AppError as exc:
        return _phases_page(visit, rows, _service_errors("ph", exc), 422)
    stored = "; ".join(
        f"{p.name} {_instant(p.start)} to {_instant(p.end) or 'open-ended'}"
        for p in visit.competition.phases
    )
    return redirect(
        visit.request,
        f"/c/{visit.competition.slug}/host/new/data",
        ok=f"Phases saved (UTC): {stored}. Next: each phase's answer key and the data files.",
    )


# --- Answer keys and data files -------------------------------------------------------------


@router.get("/c/{slug}/host/new/data", response_class=HTMLResponse)
def data_step(visit: HostPage) -> Response:
    files = datafiles.list_files(visit.session, competition=visit.competition, user=visit.user)
    return _show(visit, "host/new_data.html", "data", files=files)


@form_post(router, "/c/{slug}/host/new/data/key", back="/host/new/data")
def upload_phase_key(
    form: HostForm,
    settings: SettingsDep,
    phase: Annotated[str, Form(max_length=64)] = "",
    file: UploadFile | None = None,
) -> Response:
    key = competitions.upload_answer_key(
        form.session,
        competition=form.competition,
        phase=get_phase(form.competition, phase),
        source=chosen(file, "an answer key file").file,
        uploader=form.user,
        settings=settings,
    )
    then = "It is live." if key.published_at else "Rescore, preview and publish to use it."
    return form.done(f"Phase {phase}: answer key version {key.version} stored. {then}")


@form_post(router, "/c/{slug}/host/new/data/file", back="/host/new/data")
def upload_data_file(
    form: HostForm, settings: SettingsDep, file: UploadFile | None = None
) -> Response:
    upload = chosen(file, "a data file")
    datafile, created = datafiles.put_file(
        form.session,
        competition=form.competition,
        name=upload.filename or "",
        source=upload.file,
        user=form.user,
        settings=settings,
    )
    return form.done(f"{datafile.name} {'published' if created else 'replaced'}.")
