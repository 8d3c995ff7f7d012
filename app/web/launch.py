"""Starting a competition in the browser: the "New competition" form's first step (``/host/new``:
title, address and description) that saves a draft, and the Launch tab (``/c/{slug}/host/launch``)
with the checklist, Publish, Archive and Delete, its last step. The steps between (columns,
phases, keys and data) are app.web.wizard's. The same services and messages as the API; no
JavaScript needed (the Markdown preview is a second submit button)."""

import re
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from app.auth.hosts import is_owner
from app.competitions import lifecycle
from app.competitions import service as competitions
from app.competitions.schemas import CompetitionCreate
from app.deps import SessionDep, SettingsDep
from app.errors import AppError, Conflict
from app.http.messages import sentence
from app.web.competition import tab_context
from app.web.forms import HostForm, HostPage, form_post
from app.web.markdown import render_markdown
from app.web.session import CsrfChecked, HostsOnly, SignedInUser, redirect
from app.web.templating import render
from app.web.wizard import FIRST_METRIC, STEPS

router = APIRouter(include_in_schema=False)

WHO_MAY_HOST = (
    "Only organisers and site admins may create competitions. Ask a site admin to make you an "
    "organiser (podium users create NAME --organiser), or to add you as a co-host of theirs."
)
# The form's fields, as the API body names them; the rest of the body keeps its defaults.
_TEXT = ("title", "slug", "description")
_MAX_FIELD = 100_000


def suggest_slug(title: str) -> str:
    """A slug from a title: lowercase words joined by '-', as the API's pattern allows."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)[:62].strip("-")


def _body(values: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {name: values[name] for name in _TEXT if values.get(name)}
    body["slug"] = values.get("slug") or suggest_slug(values.get("title", ""))
    # The draft starts with one column and one open-ended phase; the next steps replace both.
    body["metric"] = {"name": FIRST_METRIC}
    body["status"] = "draft"
    return body


def _field_of(error: AppError) -> str:
    """Which field a service refusal is about, to show it beside that field."""
    text = error.detail
    if isinstance(error, Conflict) and "slug" in text:
        return "slug"
    return "form"


def _show_form(
    request: Request,
    values: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    preview: Any = None,
    status_code: int = 200,
) -> Response:
    return render(
        request,
        "new_competition.html",
        {
            "values": values,
            "errors": errors or {},
            "preview": preview,
            "steps": STEPS,
            "step": "basics",
        },
        status_code=status_code,
    )


@router.get("/host/new", response_class=HTMLResponse)
def new_competition(request: Request, user: SignedInUser) -> Response:
    if not user.is_organiser:
        raise HostsOnly(WHO_MAY_HOST)
    return _show_form(request, {})


@router.post("/host/new", dependencies=[CsrfChecked])
async def create_draft(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    if not user.is_organiser:
        raise HostsOnly(WHO_MAY_HOST)
    form = await request.form()
    values = {name: str(form.get(name) or "").strip()[:_MAX_FIELD] for name in _TEXT}
    if not values["slug"]:
        values["slug"] = suggest_slug(values["title"])
    if form.get("preview"):
        preview = render_markdown(values["description"])
        return _show_form(request, values, preview=preview)
    errors: dict[str, str] = {}
    try:
        data = CompetitionCreate.model_validate(_body(values))
    except ValidationError as exc:
        for e in exc.errors():
            field = str(e["loc"][0]) if e["loc"] else "form"
            errors.setdefault(field if field in values else "form", sentence(e))
        return _show_form(request, values, errors=errors, status_code=422)
    try:
        competition = competitions.create_competition(session, data=data, owner=user)
    except AppError as exc:
        errors[_field_of(exc)] = exc.detail
        return _show_form(request, values, errors=errors, status_code=422)
    return redirect(
        request,
        f"/c/{competition.slug}/host/new/columns",
        ok=f"Draft {competition.slug} saved: only its hosts see it. Next: the leaderboard's "
        "columns.",
    )


# --- The Launch tab -------------------------------------------------------------------------


@router.get("/c/{slug}/host/launch", response_class=HTMLResponse)
def launch_page(visit: HostPage, settings: SettingsDep) -> Response:
    frame = tab_context(visit.session, visit.competition, visit.user, "host")
    owner = visit.user.is_admin or is_owner(visit.session, visit.competition, visit.user)
    return render(
        visit.request,
        "host/launch.html",
        {
            **frame,
            "host_tab": "launch",
            "checklist": lifecycle.checklist(visit.competition, settings=settings),
            "may_close": owner,
            "steps": STEPS,
            "step": "launch",
        },
    )


@form_post(router, "/c/{slug}/host/publish", back="/host/launch")
def publish(form: HostForm, settings: SettingsDep) -> Response:
    lifecycle.publish(
        form.session, competition=form.competition, actor=form.user, settings=settings
    )
    return form.done(f"{form.competition.slug} is published: everyone can see it now.")


@form_post(router, "/c/{slug}/host/archive", back="/host/launch")
def archive(form: HostForm) -> Response:
    lifecycle.archive(form.session, competition=form.competition, actor=form.user)
    return form.done(f"{form.competition.slug} is archived: read-only from now on.")


@form_post(router, "/c/{slug}/host/delete", back="/host/launch")
def delete(form: HostForm, settings: SettingsDep) -> Response:
    slug = form.competition.slug
    lifecycle.delete(form.session, competition=form.competition, actor=form.user, settings=settings)
    return redirect(form.request, "/", ok=f"{slug} is deleted.")
