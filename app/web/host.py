"""The host's pages: settings and timeline, answer keys, data files, co-hosts, every
submission with its diagnostics, rescoring, moderation and the audit log. Every route goes
through ``HostedCompetition``: anyone but this competition's hosts gets a 403 page."""

import re
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Path, Query, Response, UploadFile
from fastapi.responses import HTMLResponse
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.audit.service import entries
from app.auth import hosts
from app.coderun import reproduce
from app.competitions import service as competitions
from app.competitions.dates import parse_instant
from app.competitions.phases import (
    board_phase,
    code_limits,
    get_phase,
    only_phase,
    update_phase,
)
from app.competitions.schemas import CompetitionUpdate, PhaseUpdate
from app.config import Settings
from app.datafiles import service as datafiles
from app.deps import IdPath, SettingsDep
from app.errors import AppError, Conflict, NotFound, Unprocessable
from app.evaluation.metric import is_custom
from app.http.messages import sentence
from app.jobs import rescore
from app.leaderboard import moderation
from app.models import AuditEntry, Competition, Phase, Submission, User
from app.models.types import RowId
from app.pagination import MAX_LIMIT, Page
from app.submissions import service as submissions
from app.submissions import visibility
from app.submissions.rerun import rerun_submission
from app.teams.service import list_teams
from app.web.charts import confusion_heatmap
from app.web.competition import tab_context
from app.web.forms import HostForm, HostPage, Visit, chosen, form_post
from app.web.templating import render

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 50
_TIMES = ("start", "team_merge_deadline", "deadline")
_NUMBERS = (
    "daily_submission_limit",
    "total_submission_limit",
    "final_selection_limit",
    "max_team_size",
    "score_decimals",
)


def _show(visit: Visit, template: str, host_tab: str, **context: Any) -> Response:
    """A host page: the competition's tabs, the host sub-tab ``host_tab`` lit, and its content."""
    frame = tab_context(visit.session, visit.competition, visit.user, "host")
    return render(visit.request, template, {**frame, "host_tab": host_tab, **context})


def _hosted_submission(
    session: Any, competition: Competition, user: User, submission_id: int
) -> Submission:
    submission = submissions.visible_submission(session, submission_id=submission_id, user=user)
    if submission.competition_id != competition.id:
        # Worded as visible_submission's: a submission elsewhere is as good as missing here.
        raise NotFound(f"no submission {submission_id}")
    return submission


# --- Settings and timeline ----------------------------------------------------------------------


@router.get("/c/{slug}/host", response_class=HTMLResponse)
def settings_page(visit: HostPage) -> Response:
    # Not in CompetitionPublic: the host's own setting, shown only here.
    limit = visit.competition.scoring_time_limit_seconds
    return _show(visit, "host/settings.html", "settings", scoring_time_limit=limit)


def _parse_time(name: str, raw: str) -> datetime | None:
    # Read as the API reads it: no zone is UTC, as the page says; a bare date is the start of
    # its day for a start, the end of it for a deadline.
    if not raw.strip():
        return None
    try:
        return parse_instant(raw[:64], end=name not in ("start",))
    except ValueError as exc:
        raise Unprocessable(f"{name.replace('_', ' ')}: {exc}", extra={"field": name}) from None


def _parse_int(name: str, raw: str) -> int | None:
    if not raw.strip():
        return None
    try:
        return int(raw.strip())
    except ValueError:
        raise Unprocessable(
            f"{name.replace('_', ' ')}: '{raw[:40]}' is not a whole number"
        ) from None


def _parse_float(name: str, raw: str) -> float | None:
    if not raw.strip():
        return None
    try:
        return float(raw.strip())
    except ValueError:
        raise Unprocessable(
            f"{name.replace('_', ' ')}: '{raw[:40]}' is not a number: give one such as 0.05"
        ) from None


def _changed_settings(competition: Competition, form: FormData) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in ("title", "description", "rules", "registration"):
        if isinstance(raw := form.get(name), str):
            values[name] = raw.replace("\r\n", "\n")
    for name in ("allow", "deny"):
        # One address or @domain a line; the schema normalises and sorts them, so the list is
        # compared as the schema would store it.
        if isinstance(raw := form.get(name), str):
            lines = [line.strip() for line in raw.splitlines() if line.strip()]
            try:
                values[name] = getattr(CompetitionUpdate(**{name: lines}), name) or None
            except ValidationError as exc:
                raise Unprocessable(f"{name}: {exc.errors()[0]['msg']}") from None
    for name in _TIMES:
        if isinstance(raw := form.get(name), str):
            values[name] = _parse_time(name, raw)
    for name in (*_NUMBERS, "scoring_time_limit_seconds"):
        if isinstance(raw := form.get(name), str):
            values[name] = _parse_int(name, raw)
    if isinstance(raw := form.get("public_board_mode"), str) and raw:
        values["public_board_mode"] = raw[:20]
    if isinstance(raw := form.get("ladder_step"), str):
        values["ladder_step"] = _parse_float("ladder_step", raw)
    if isinstance(raw := form.get("score_intervals"), str) and raw in ("yes", "no"):
        values["score_intervals"] = raw == "yes"
    for name in ("benchmark", "board_every_submission"):
        # A checkbox after a hidden "no" of the same name: the last value is the box's, if ticked.
        if isinstance(raw := form.get(name), str) and raw in ("yes", "no"):
            values[name] = raw == "yes"
    if isinstance(raw := form.get("labels"), str):
        labels = [label.strip() for label in raw[:20_000].split(",") if label.strip()]
        values["labels"] = labels or None
    return _changed(competition, values)


def _changed(thing: Any, values: dict[str, Any]) -> dict[str, Any]:
    """Only what changed goes to the service, so the audit log names just that."""
    changed = {}
    for name, value in values.items():
        current = getattr(thing, name)
        if isinstance(current, datetime) and isinstance(value, datetime):
            if abs((current - value).total_seconds()) < 60:
                continue
        elif current == value:
            continue
        changed[name] = value
    return changed


@form_post(router, "/c/{slug}/host", back="/host")
async def save_settings(form: HostForm) -> Response:
    changed = _changed_settings(form.competition, await form.request.form())
    if not changed:
        return form.done("Nothing changed.")
    try:
        data = CompetitionUpdate(**changed)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])).replace('_', ' ')}: {sentence(e)}" for e in exc.errors()
        )
        raise Unprocessable(problems) from None
    competitions.update_competition(
        form.session, competition=form.competition, data=data, actor=form.user
    )
    return form.done(f"Saved: {_saved(form.competition, changed)}.")


def _saved(thing: Any, changed: dict[str, Any]) -> str:
    # A date is echoed as the exact UTC instant stored (a bare date's end of day, say); an end
    # cleared says so.
    return ", ".join(
        f"{name} ({value.isoformat()})"
        if isinstance(value, datetime)
        else f"{name} to open-ended"
        if name == "end" and value is None
        else name
        for name in sorted(changed)
        for value in [getattr(thing, name)]
    )


_LIMIT_FIELDS = {"wall_seconds": float, "memory_mb": int, "cpus": float, "working_mb": int}


def _code_limits(phase: Phase, posted: FormData) -> dict[str, Any] | None:
    """The phase's code limits with the form's changes, or None when none changed."""
    current = code_limits(phase).model_dump()
    merged = dict(current)
    for field, kind in _LIMIT_FIELDS.items():
        raw = posted.get(field)
        if not isinstance(raw, str) or not raw.strip():
            continue
        try:
            merged[field] = kind(raw.strip()[:20])
        except ValueError:
            raise Unprocessable(
                f"Phase {phase.name}: {field.replace('_', ' ')}: '{raw[:20]}' is not a number: "
                "give one such as 2"
            ) from None
    return merged if merged != current else None


_PHASE_TIMES = ("start", "end")


def _field_named(detail: str, fields: dict[str, Any]) -> str | None:
    """The form field a service's message is about (it names the field first, or names one of
    the fields this form changed), so the page shows it there."""
    if (limit := re.search(r"code_limits\.(\w+)", detail)) is not None:
        return limit.group(1)  # a code limit's own field (wall_seconds, memory_mb, ...)
    head = detail.split(":", 1)[0].strip().lower().replace(" ", "_")
    if head in fields:
        return head
    named = [field for field in fields if field.replace("_", " ") in detail.lower()]
    return named[0] if len(named) == 1 else None


_PHASE_NUMBERS = ("daily_submission_limit", "total_submission_limit", "final_selection_limit")


@form_post(router, "/c/{slug}/host/phases/{name}", back="/host")
async def save_phase(form: HostForm, name: Annotated[str, Path(max_length=64)]) -> Response:
    """One phase's title, dates, quotas, board and counting rule, as PATCH
    /api/v1/competitions/{slug}/phases/{name} changes them (the same rules and messages). The
    form shows the current end: emptied, the phase is open-ended (open until a host ends it, as
    an imported Codabench phase that never ends)."""
    phase = get_phase(form.competition, name)
    form.request.state.form_id = f"phase-{phase.name}"  # a refusal is shown in this phase's form
    posted = await form.request.form()
    values: dict[str, Any] = {}
    if isinstance(raw := posted.get("title"), str) and raw.strip():
        values["title"] = raw.strip()
    for field in _PHASE_TIMES:
        if isinstance(raw := posted.get(field), str):
            values[field] = _parse_time(field, raw)
            if field == "start" and values[field] is None:
                raise Unprocessable("start: a phase needs a start", extra={"field": "start"})
    for field in _PHASE_NUMBERS:
        if isinstance(raw := posted.get(field), str):
            values[field] = _parse_int(field, raw)
    for field in ("board", "counts", "submission_kind"):
        if isinstance(raw := posted.get(field), str) and raw:
            values[field] = raw[:20]
    changed = _changed(phase, values)
    limits = _code_limits(phase, posted)
    if limits is not None:
        changed["code_limits"] = limits
    if not changed:
        return form.done(f"Phase {phase.name}: nothing changed.")
    try:
        data = PhaseUpdate(**changed)
    except ValidationError as exc:
        errors = exc.errors()
        loc = [str(part) for part in errors[0]["loc"]]
        # A code limit's error is about its own field (code_limits.memory_mb: memory_mb).
        form.request.state.form_field = loc[-1] if loc[:1] == ["code_limits"] else loc[0]
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])).replace('_', ' ')}: {sentence(e)}" for e in errors
        )
        raise Unprocessable(f"Phase {phase.name}: {problems}") from None
    try:
        update_phase(
            form.session, competition=form.competition, phase=phase, data=data, actor=form.user
        )
    except AppError as exc:
        form.request.state.form_field = _field_named(exc.detail, changed)
        exc.detail = f"Phase {phase.name}: {exc.detail}"
        raise
    return form.done(f"Phase {phase.name} saved: {_saved(phase, changed)}.")


# --- Answer keys and the metric file ------------------------------------------------------------


@router.get("/c/{slug}/host/keys", response_class=HTMLResponse)
def keys_page(visit: HostPage) -> Response:
    return _show(
        visit,
        "host/keys.html",
        "keys",
        versions=list(reversed(visit.competition.answer_keys)),
        custom=is_custom(visit.competition),
        several=len(visit.competition.phases) > 1,
    )


@form_post(router, "/c/{slug}/host/keys", back="/host/keys")
def upload_key(
    form: HostForm,
    settings: SettingsDep,
    phase: Annotated[str, Form(max_length=64)] = "",
    file: UploadFile | None = None,
) -> Response:
    return store_phase_key(form, settings, phase, file)


def store_phase_key(
    form: Visit, settings: Settings, phase_name: str, file: UploadFile | None
) -> Response:
    """A phase's next answer key version, from the Answer keys tab or the New competition
    page's Keys step: the phase named, or a one-phase competition's only one."""
    competition = form.competition
    phase = (
        get_phase(competition, phase_name) if phase_name else only_phase(competition, "answer-key")
    )
    several = len(competition.phases) > 1
    try:
        key = competitions.upload_answer_key(
            form.session,
            competition=competition,
            phase=phase,
            source=chosen(file, "an answer key file").file,
            uploader=form.user,
            settings=settings,
        )
    except AppError as exc:
        # Shown above every phase's form: it says which phase's key was refused.
        if several:
            exc.detail = f"Phase {phase.name}: {exc.detail}"
        raise
    what = f"Phase {phase.name}: answer key" if several else "Answer key"
    then = "It is live." if key.published_at else "Rescore, preview and publish to use it."
    return form.done(f"{what} version {key.version} stored (SHA-256 {key.sha256[:12]}…). {then}")


@form_post(router, "/c/{slug}/host/metric", back="/host/keys")
def upload_metric(
    form: HostForm,
    settings: SettingsDep,
    direction: Annotated[Literal["maximize", "minimize"], Form()] = "maximize",
    file: UploadFile | None = None,
) -> Response:
    competitions.upload_custom_metric(
        form.session,
        competition=form.competition,
        source=chosen(file, "a metric file").file,
        direction=direction,
        settings=settings,
        actor=form.user,
    )
    return form.done("Metric file stored.")


# --- Data files and co-hosts ---------------------------------------------------------------------


@router.get("/c/{slug}/host/files", response_class=HTMLResponse)
def files_page(visit: HostPage) -> Response:
    files = datafiles.list_files(visit.session, competition=visit.competition, user=visit.user)
    return _show(visit, "host/files.html", "files", files=files)


@form_post(router, "/c/{slug}/host/files", back="/host/files")
def upload_file(
    form: HostForm,
    settings: SettingsDep,
    file: UploadFile | None = None,
    name: Annotated[str, Form(max_length=300)] = "",
    visibility: Annotated[str, Form(max_length=10)] = "",
    release_with: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    upload = chosen(file, "a data file")
    datafile, created = datafiles.put_file(
        form.session,
        competition=form.competition,
        name=name.strip() or upload.filename or "",
        source=upload.file,
        user=form.user,
        settings=settings,
        visibility=visibility or None,
        release_with=release_with or None,
    )
    return form.done(f"{datafile.name} {'published' if created else 'replaced'}{_when(datafile)}.")


def _when(datafile: Any) -> str:
    if datafile.release_with is None:
        return ""
    return f", public when phase '{datafile.release_with}' starts"


@form_post(router, "/c/{slug}/host/files/{name}/release", back="/host/files")
def change_file_release(
    form: HostForm, name: str, release: Annotated[str, Form(max_length=80)] = ""
) -> Response:
    """One choice: ``public`` (now), ``hidden`` (code runs only), or ``with:PHASE``."""
    phase = release.removeprefix("with:") if release.startswith("with:") else None
    datafile = datafiles.change_release(
        form.session,
        competition=form.competition,
        name=name,
        user=form.user,
        visibility=None if phase else release or None,
        release_with=phase,
    )
    said = _when(datafile) or (
        ": hidden, for code runs only" if datafile.visibility == "hidden" else ": public now"
    )
    return form.done(f"{datafile.name}{said}.")


@form_post(router, "/c/{slug}/host/files/{name}/delete", back="/host/files")
def delete_file(form: HostForm, name: str, settings: SettingsDep) -> Response:
    datafiles.delete_file(
        form.session, competition=form.competition, name=name, user=form.user, settings=settings
    )
    return form.done(f"{name} deleted.")


@router.get("/c/{slug}/host/hosts", response_class=HTMLResponse)
def hosts_page(visit: HostPage) -> Response:
    return _show(
        visit,
        "host/hosts.html",
        "hosts",
        hosts=hosts.hosts(visit.session, competition=visit.competition),
        may_change=hosts.may_change_hosts(visit.session, visit.competition, visit.user),
    )


@form_post(router, "/c/{slug}/host/hosts", back="/host/hosts")
def add_cohost(form: HostForm, user: Annotated[str, Form(max_length=64)] = "") -> Response:
    if not user.strip():
        raise Unprocessable("name the user to add as a co-host")
    added = hosts.add_host(
        form.session, competition=form.competition, name=user.strip(), actor=form.user
    )
    return form.done(f"{added.user.name} is now a co-host.")


@form_post(router, "/c/{slug}/host/hosts/remove", back="/host/hosts")
def remove_cohost(form: HostForm, user: Annotated[str, Form(max_length=64)] = "") -> Response:
    hosts.remove_host(form.session, competition=form.competition, name=user, actor=form.user)
    return form.done(f"{user} is no longer a host.")


# --- Submissions, diagnostics, moderation -------------------------------------------------------


@router.get("/c/{slug}/host/submissions", response_class=HTMLResponse)
def submissions_page(visit: HostPage, page: Annotated[RowId, Query()] = 1) -> Response:
    session, competition, user = visit.session, visit.competition, visit.user
    every = submissions.team_submissions(session, competition=competition, user=user)
    pages = max(1, -(-len(every) // PAGE_SIZE))
    page = min(max(page, 1), pages)
    shown = every[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return _show(
        visit,
        "host/submissions.html",
        "submissions",
        submissions=[
            visibility.view(session, submission=s, competition=competition, user=user)
            for s in shown
        ],
        page=page,
        pages=pages,
        total=len(every),
        takes_code=any(p.takes_code for p in competition.phases),
        reproduction=reproduce.report(session, competition=competition)
        if any(p.takes_code for p in competition.phases)
        else [],
    )


@form_post(router, "/c/{slug}/host/reproduce", back="/host/submissions")
def reproduce_winners(
    form: HostForm, top: Annotated[int, Form(ge=1, le=reproduce.MAX_TEAMS)] = 3
) -> Response:
    """Reproduce the winners: the top teams' counted code runs queued to run again."""
    rows = reproduce.request(form.session, competition=form.competition, actor=form.user, top=top)
    return form.done(
        f"{len(rows)} counted submission(s) of the top {top} team(s) are queued to run again; "
        "the report below fills in as they finish."
    )


@router.get("/c/{slug}/host/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(visit: HostPage, submission_id: IdPath) -> Response:
    session = visit.session
    submission = _hosted_submission(session, visit.competition, visit.user, submission_id)
    view = visibility.view(
        session, submission=submission, competition=visit.competition, user=visit.user
    )
    details = getattr(view, "metric_details", None) or {}
    heatmap = None
    if details.get("labels") and details.get("confusion_matrix"):
        heatmap = confusion_heatmap(
            [str(x) for x in details["labels"]], details["confusion_matrix"]
        )
    return _show(
        visit,
        "host/submission.html",
        "submissions",
        s=view,
        details=details,
        heatmap=heatmap,
        versions=visibility.score_versions(session, submission=submission),
        takes_code=submission.phase.takes_code,
    )


@form_post(router, "/c/{slug}/host/submissions/{submission_id}/rerun", back="/host/submissions")
def rerun(form: HostForm, submission_id: IdPath) -> Response:
    submission = _hosted_submission(form.session, form.competition, form.user, submission_id)
    rerun_submission(
        form.session,
        submission=submission,
        actor=form.user,
        queue=form.request.app.state.scoring_queue,
        settings=form.request.app.state.settings,
    )
    return form.done(f"Submission {submission_id} is queued to run again.")


@form_post(router, "/c/{slug}/host/submissions/{submission_id}/hide", back="/host/submissions")
def hide(
    form: HostForm,
    submission_id: IdPath,
    hidden: Annotated[bool, Form()] = True,
    reason: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    submission = _hosted_submission(form.session, form.competition, form.user, submission_id)
    moderation.set_hidden(
        form.session, submission=submission, hidden=hidden, reason=reason, actor=form.user
    )
    verb = "hidden from the boards" if hidden else "shown on the boards again"
    return form.done(f"Submission {submission_id} is {verb}.")


@router.get("/c/{slug}/host/teams", response_class=HTMLResponse)
def teams_page(visit: HostPage) -> Response:
    teams = list_teams(visit.session, competition=visit.competition)
    return _show(visit, "host/teams.html", "teams", teams=teams)


@form_post(router, "/c/{slug}/host/teams/ban", back="/host/teams")
def ban(
    form: HostForm,
    team: Annotated[str, Form(max_length=128)] = "",
    banned: Annotated[bool, Form()] = True,
    reason: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    moderation.set_banned(
        form.session,
        competition=form.competition,
        team_name=team,
        banned=banned,
        reason=reason,
        actor=form.user,
    )
    return form.done(f"Team {team} is {'banned' if banned else 'no longer banned'}.")


# --- Rescoring ----------------------------------------------------------------------------------


def _named_phase(form: Visit, name: str) -> Phase | None:
    """The phase a rescore form names (none: the current one, as the API's routes without
    one); the form's page, refusal or not, is that phase's."""
    if not name:
        return None
    phase = get_phase(form.competition, name)
    form.request.state.back += f"?{urlencode({'phase': phase.name})}"
    return phase


@router.get("/c/{slug}/host/rescore", response_class=HTMLResponse)
def rescore_page(
    visit: HostPage, phase: Annotated[str | None, Query(max_length=64)] = None
) -> Response:
    chosen_phase = board_phase(visit.competition, phase)
    preview, reason = None, None
    try:
        preview = rescore.preview(visit.session, competition=visit.competition, phase=chosen_phase)
    except Conflict as exc:
        reason = exc.detail
    return _show(
        visit,
        "host/rescore.html",
        "rescore",
        preview=preview,
        reason=reason,
        phase=chosen_phase,
        several=len(visit.competition.phases) > 1,
    )


@form_post(router, "/c/{slug}/host/rescore", back="/host/rescore")
def start_rescore(form: HostForm, phase: Annotated[str, Form(max_length=64)] = "") -> Response:
    named = _named_phase(form, phase)
    started = rescore.start_rescore(
        form.session,
        competition=form.competition,
        actor=form.user,
        queue=form.request.app.state.scoring_queue,
        phase=named,
    )
    return form.done(f"Rescoring {started.queued} submission(s) against version {started.version}.")


@form_post(router, "/c/{slug}/host/rescore/publish", back="/host/rescore")
def publish(form: HostForm, phase: Annotated[str, Form(max_length=64)] = "") -> Response:
    named = _named_phase(form, phase)
    key = rescore.publish(
        form.session,
        competition=form.competition,
        actor=form.user,
        queue=form.request.app.state.scoring_queue,
        phase=named,
    )
    if form.competition.benchmark:
        return form.done(
            f"Version {key.version} is now on the boards; every scored submission is being "
            "rescored against it (each board row names the version it was scored on)."
        )
    return form.done(f"Version {key.version} is now on the boards.")


# --- Audit log ----------------------------------------------------------------------------------


@router.get("/c/{slug}/host/audit", response_class=HTMLResponse)
def audit_page(visit: HostPage) -> Response:
    newest = _newest_entries(visit.session, visit.competition)
    return _show(visit, "host/audit.html", "audit", entries=newest)


def _newest_entries(session: Session, competition: Competition) -> list[AuditEntry]:
    """The log's newest entries, newest first (the API pages it oldest first)."""
    total = entries(session, competition=competition, page=Page(limit=1)).total
    newest = Page(limit=MAX_LIMIT, offset=max(0, total - MAX_LIMIT))
    return list(reversed(entries(session, competition=competition, page=newest).items))
