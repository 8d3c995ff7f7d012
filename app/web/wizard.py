"""The New competition page's later steps, on the draft the first step saved (``/host/new``):
its leaderboard columns from the metric catalogue, its phases (app.web.wizard_phases), then each
phase's answer key and the data files; the checklist and Publish are the Launch tab
(app.web.launch).

Each step is a plain form (no JavaScript: adding or removing a row is a submit button that shows
the form again with what was typed). Saving validates with the API's own schemas and services,
and a refusal is shown beside the field it names, the typed values kept. A saved step is in the
draft, so the host may leave and come back to any step.
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Form, Response, UploadFile
from fastapi.responses import HTMLResponse
from pydantic import TypeAdapter, ValidationError

from app.competitions import drafts
from app.competitions.schemas import ColumnConfig
from app.datafiles import service as datafiles
from app.deps import SettingsDep
from app.errors import AppError
from app.evaluation.columns import column_defs, columns_for
from app.metrics import Metric, UnknownMetric, all_metrics, get_metric
from app.models import Competition
from app.scoring.columns import is_program
from app.web.competition import tab_context
from app.web.forms import HostForm, HostPage, Visit, chosen, form_post
from app.web.host import store_phase_key
from app.web.rows import (
    CELL,
    RowShape,
    edit_rows,
    read_rows,
    service_errors,
    validation_errors,
)
from app.web.session import CsrfChecked, redirect
from app.web.templating import render

router = APIRouter(include_in_schema=False)

MAX_COLUMNS = 20
COMPUTED = "computed"
PROGRAM = "program"
FIRST_METRIC = "roc_auc"  # a new metric column's when there is none to follow
COLUMN_FIELDS = (
    "key",
    "title",
    "kind",
    "op",
    "of",
    "precision",
    "hidden",
    "direction",
    "source_key",
)
COLUMN_SHAPE = RowShape(COLUMN_FIELDS, MAX_COLUMNS)
STEPS = (
    ("basics", "Basics", "/host"),
    ("columns", "Columns", "/host/new/columns"),
    ("phases", "Phases", "/host/new/phases"),
    ("data", "Keys and data", "/host/new/data"),
    ("launch", "Checklist and Publish", "/host/launch"),
)
COLUMNS_ADAPTER = TypeAdapter(list[ColumnConfig])


def show_step(
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


def column_row(definition: dict[str, Any]) -> dict[str, Any]:
    """A stored column definition as the form's row of text fields."""
    computed = definition.get("computed")
    metric = definition.get("metric") or {}
    program = definition.get("scorer") == PROGRAM
    return {
        "key": definition.get("key", ""),
        "title": definition.get("title") or "",
        "kind": COMPUTED if computed else PROGRAM if program else metric.get("name", ""),
        "op": computed["op"] if computed else "mean",
        "of": ", ".join(computed["of"]) if computed else "",
        "precision": "" if definition.get("precision") is None else str(definition["precision"]),
        "hidden": "1" if definition.get("hidden") else "",
        "direction": definition.get("direction") or "",
        "source_key": definition.get("source_key") or "",
        "params": {k: as_text(v) for k, v in (metric.get("params") or {}).items()},
    }


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def column_body(row: dict[str, Any]) -> dict[str, Any]:
    """A row of the form as the API's column definition."""
    body: dict[str, Any] = {"key": row["key"]}
    if row["title"]:
        body["title"] = row["title"]
    if row["kind"] == COMPUTED:
        of = [part.strip() for part in row["of"].split(",") if part.strip()]
        body["computed"] = {"op": row["op"], "of": of}
    elif row["kind"] == PROGRAM:
        body |= {"scorer": PROGRAM, "direction": row["direction"] or "maximize"}
        if row["source_key"]:
            body["source_key"] = row["source_key"]
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


def column_adders(rows: list[dict[str, Any]]) -> dict[str, Callable[[], dict[str, Any]]]:
    """The new rows a list of columns' add buttons make: a metric column reading the file as
    the first does, or one computed from the metric columns there."""

    def new(kind: str, of: str = "") -> dict[str, Any]:
        blank = dict.fromkeys(COLUMN_FIELDS, "")
        return blank | {"kind": kind, "op": "mean", "of": of, "params": {}}

    first = rows[0]["kind"] if rows else FIRST_METRIC
    inputs = ", ".join(r["key"] for r in rows if r["kind"] not in (COMPUTED, PROGRAM))
    return {
        "add_metric": lambda: new(first),
        "add_computed": lambda: new(COMPUTED, inputs),
    }


def _columns_page(
    visit: Visit,
    rows: list[dict[str, Any]],
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    return show_step(
        visit,
        "host/new_columns.html",
        "columns",
        status_code,
        rows=rows,
        errors=errors or {},
        **column_context(visit.competition),
    )


def column_context(competition: Competition) -> dict[str, Any]:
    """What a column's row needs beside it: the catalogue, and how its kinds are named."""
    return {
        "catalogue": catalogue(),
        "computed": COMPUTED,
        "program": PROGRAM,
        "program_scored": is_program(columns_for(competition)),
    }


@router.get("/c/{slug}/host/new/columns", response_class=HTMLResponse)
def columns_step(visit: HostPage) -> Response:
    rows = [column_row(d) for d in column_defs(visit.competition)]
    if visit.competition.columns is None:
        # The draft's first column, named after its metric: no title of the host's yet.
        rows[0]["title"] = ""
    return _columns_page(visit, rows)


@router.post("/c/{slug}/host/new/columns", dependencies=[CsrfChecked])
async def save_columns(form_visit: HostForm) -> Response:
    visit = form_visit
    form = await visit.request.form()
    rows = read_rows(form, "col", COLUMN_SHAPE)
    action = str(form.get("action") or "save")[:CELL]
    if action != "save":
        edit_rows(rows, action, new=column_adders(rows), limit=MAX_COLUMNS)
        return _columns_page(visit, rows)
    try:
        columns = COLUMNS_ADAPTER.validate_python([column_body(r) for r in rows])
    except ValidationError as exc:
        return _columns_page(visit, rows, validation_errors("col", exc), 422)
    if not columns:
        return _columns_page(visit, rows, {"form": "a competition needs at least one column"}, 422)
    try:
        with visit.session.begin_nested():
            drafts.revise_columns(
                visit.session, competition=visit.competition, columns=columns, actor=visit.user
            )
    except AppError as exc:
        return _columns_page(visit, rows, service_errors("col", exc), 422)
    return redirect(
        visit.request,
        f"/c/{visit.competition.slug}/host/new/phases",
        ok=f"Columns saved: {', '.join(c.key for c in columns)}. Next: the phases.",
    )


# --- Answer keys and data files -------------------------------------------------------------


@router.get("/c/{slug}/host/new/data", response_class=HTMLResponse)
def data_step(visit: HostPage) -> Response:
    files = datafiles.list_files(visit.session, competition=visit.competition, user=visit.user)
    return show_step(visit, "host/new_data.html", "data", files=files)


@form_post(router, "/c/{slug}/host/new/data/key", back="/host/new/data")
def upload_phase_key(
    form: HostForm,
    settings: SettingsDep,
    phase: Annotated[str, Form(max_length=64)] = "",
    file: UploadFile | None = None,
) -> Response:
    return store_phase_key(form, settings, phase, file)


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
