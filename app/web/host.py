"""The host's pages: settings and timeline, answer keys, data files, co-hosts, every
submission with its diagnostics, rescoring, moderation and the audit log. Every route goes
through ``HostedCompetition``: anyone but this competition's hosts gets a 403 page."""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Request, Response, UploadFile
from fastapi.responses import HTMLResponse
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.audit.service import entries
from app.competitions import service as competitions
from app.competitions.schemas import CompetitionUpdate
from app.datafiles import service as datafiles
from app.deps import IdPath, SessionDep, SettingsDep
from app.errors import Conflict, NotFound, Unprocessable
from app.evaluation.metric import is_custom
from app.jobs import rescore
from app.leaderboard import moderation
from app.models import AuditEntry, Competition, Submission, User
from app.pagination import MAX_LIMIT, Page
from app.submissions import service as submissions
from app.submissions import visibility
from app.teams.service import list_teams
from app.web.charts import confusion_heatmap
from app.web.competition import HostedCompetition, back_to, tab_context
from app.web.session import CsrfChecked, SignedInUser, redirect
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


def _host(
    request: Request, session: Any, competition: Competition, user: User, tab: str
) -> dict[str, Any]:
    return {**tab_context(session, competition, user, "host"), "host_tab": tab}


def _hosted_submission(
    session: Any, competition: Competition, user: User, submission_id: int
) -> Submission:
    submission = submissions.visible_submission(session, submission_id=submission_id, user=user)
    if submission.competition_id != competition.id:
        raise NotFound(f"no submission {submission_id} in this competition")
    return submission


# --- Settings and timeline ----------------------------------------------------------------------


@router.get("/c/{slug}/host", response_class=HTMLResponse)
def settings_page(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    return render(
        request, "host/settings.html", _host(request, session, competition, user, "settings")
    )


def _parse_time(name: str, raw: str) -> datetime | None:
    # The form's datetime-local fields are read as UTC, as the page says.
    if not raw.strip():
        return None
    try:
        value = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise Unprocessable(
            f"{name.replace('_', ' ')}: '{raw[:40]}' is not a date and time"
        ) from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _parse_int(name: str, raw: str) -> int | None:
    if not raw.strip():
        return None
    try:
        return int(raw.strip())
    except ValueError:
        raise Unprocessable(
            f"{name.replace('_', ' ')}: '{raw[:40]}' is not a whole number"
        ) from None


@router.post("/c/{slug}/host", dependencies=[CsrfChecked, back_to("/host")])
async def save_settings(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    form = await request.form()
    values: dict[str, Any] = {}
    for name in ("title", "description"):
        if isinstance(raw := form.get(name), str):
            values[name] = raw.replace("\r\n", "\n")
    for name in _TIMES:
        if isinstance(raw := form.get(name), str):
            values[name] = _parse_time(name, raw)
    for name in _NUMBERS:
        if isinstance(raw := form.get(name), str):
            values[name] = _parse_int(name, raw)
    # Only what changed goes to the service, so the audit log names just that.
    changed = {}
    for name, value in values.items():
        current = getattr(competition, name)
        if isinstance(current, datetime) and isinstance(value, datetime):
            if abs((current - value).total_seconds()) < 60:
                continue
        elif current == value:
            continue
        changed[name] = value
    if not changed:
        return redirect(request, f"/c/{competition.slug}/host", ok="Nothing changed.")
    try:
        data = CompetitionUpdate(**changed)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise Unprocessable(problems) from None
    competitions.update_competition(session, competition=competition, data=data, actor=user)
    return redirect(
        request, f"/c/{competition.slug}/host", ok=f"Saved: {', '.join(sorted(changed))}."
    )


# --- Answer keys and the metric file ------------------------------------------------------------


@router.get("/c/{slug}/host/keys", response_class=HTMLResponse)
def keys_page(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    return render(
        request,
        "host/keys.html",
        {
            **_host(request, session, competition, user, "keys"),
            "versions": list(reversed(competition.answer_keys)),
            "custom": is_custom(competition),
        },
    )


@router.post("/c/{slug}/host/keys", dependencies=[CsrfChecked, back_to("/host/keys")])
def upload_key(
    request: Request,
    competition: HostedCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: SignedInUser,
    file: UploadFile | None = None,
) -> Response:
    if file is None or not file.filename:
        raise Unprocessable("choose an answer key file to upload")
    key = competitions.upload_answer_key(
        session, competition=competition, source=file.file, uploader=user, settings=settings
    )
    then = " It is live." if key.published_at else " Rescore, preview and publish to use it."
    return redirect(
        request,
        f"/c/{competition.slug}/host/keys",
        ok=f"Answer key version {key.version} stored.{then}",
    )


@router.post("/c/{slug}/host/metric", dependencies=[CsrfChecked, back_to("/host/keys")])
def upload_metric(
    request: Request,
    competition: HostedCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: SignedInUser,
    direction: Annotated[Literal["maximize", "minimize"], Form()] = "maximize",
    file: UploadFile | None = None,
) -> Response:
    if file is None or not file.filename:
        raise Unprocessable("choose a metric file to upload")
    competitions.upload_custom_metric(
        session,
        competition=competition,
        source=file.file,
        direction=direction,
        settings=settings,
        actor=user,
    )
    return redirect(request, f"/c/{competition.slug}/host/keys", ok="Metric file stored.")


# --- Data files and co-hosts ---------------------------------------------------------------------


@router.get("/c/{slug}/host/files", response_class=HTMLResponse)
def files_page(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    return render(
        request,
        "host/files.html",
        {
            **_host(request, session, competition, user, "files"),
            "files": datafiles.list_files(session, competition=competition, user=user),
        },
    )


@router.post("/c/{slug}/host/files", dependencies=[CsrfChecked, back_to("/host/files")])
def upload_file(
    request: Request,
    competition: HostedCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: SignedInUser,
    file: UploadFile | None = None,
    name: Annotated[str, Form(max_length=300)] = "",
) -> Response:
    if file is None or not file.filename:
        raise Unprocessable("choose a data file to upload")
    datafile, created = datafiles.put_file(
        session,
        competition=competition,
        name=name.strip() or file.filename,
        source=file.file,
        user=user,
        settings=settings,
    )
    verb = "published" if created else "replaced"
    return redirect(request, f"/c/{competition.slug}/host/files", ok=f"{datafile.name} {verb}.")


@router.post(
    "/c/{slug}/host/files/{name}/delete", dependencies=[CsrfChecked, back_to("/host/files")]
)
def delete_file(
    request: Request,
    name: str,
    competition: HostedCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: SignedInUser,
) -> Response:
    datafiles.delete_file(session, competition=competition, name=name, user=user, settings=settings)
    return redirect(request, f"/c/{competition.slug}/host/files", ok=f"{name} deleted.")


@router.get("/c/{slug}/host/hosts", response_class=HTMLResponse)
def hosts_page(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    owner = session.get(User, competition.created_by_id)
    return render(
        request,
        "host/hosts.html",
        {**_host(request, session, competition, user, "hosts"), "owner": owner},
    )


# --- Submissions, diagnostics, moderation -------------------------------------------------------


@router.get("/c/{slug}/host/submissions", response_class=HTMLResponse)
def submissions_page(
    request: Request,
    competition: HostedCompetition,
    session: SessionDep,
    user: SignedInUser,
    page: int = 1,
) -> Response:
    every = submissions.team_submissions(session, competition=competition, user=user)
    pages = max(1, -(-len(every) // PAGE_SIZE))
    page = min(max(page, 1), pages)
    shown = every[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return render(
        request,
        "host/submissions.html",
        {
            **_host(request, session, competition, user, "submissions"),
            "submissions": [
                visibility.view(session, submission=s, competition=competition, user=user)
                for s in shown
            ],
            "page": page,
            "pages": pages,
            "total": len(every),
        },
    )


@router.get("/c/{slug}/host/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(
    request: Request,
    competition: HostedCompetition,
    submission_id: IdPath,
    session: SessionDep,
    user: SignedInUser,
) -> Response:
    submission = _hosted_submission(session, competition, user, submission_id)
    view = visibility.view(session, submission=submission, competition=competition, user=user)
    details = getattr(view, "details", None) or {}
    heatmap = None
    if details.get("labels") and details.get("confusion_matrix"):
        heatmap = confusion_heatmap(
            [str(x) for x in details["labels"]], details["confusion_matrix"]
        )
    return render(
        request,
        "host/submission.html",
        {
            **_host(request, session, competition, user, "submissions"),
            "s": view,
            "details": details,
            "heatmap": heatmap,
            "versions": visibility.score_versions(session, submission=submission),
        },
    )


@router.post(
    "/c/{slug}/host/submissions/{submission_id}/hide",
    dependencies=[CsrfChecked, back_to("/host/submissions")],
)
def hide(
    request: Request,
    competition: HostedCompetition,
    submission_id: IdPath,
    session: SessionDep,
    user: SignedInUser,
    hidden: Annotated[bool, Form()] = True,
    reason: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    submission = _hosted_submission(session, competition, user, submission_id)
    moderation.set_hidden(session, submission=submission, hidden=hidden, reason=reason, actor=user)
    verb = "hidden from the boards" if hidden else "shown on the boards again"
    return redirect(
        request,
        f"/c/{competition.slug}/host/submissions",
        ok=f"Submission {submission_id} is {verb}.",
    )


@router.get("/c/{slug}/host/teams", response_class=HTMLResponse)
def teams_page(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    return render(
        request,
        "host/teams.html",
        {
            **_host(request, session, competition, user, "teams"),
            "teams": list_teams(session, competition=competition),
        },
    )


@router.post("/c/{slug}/host/teams/ban", dependencies=[CsrfChecked, back_to("/host/teams")])
def ban(
    request: Request,
    competition: HostedCompetition,
    session: SessionDep,
    user: SignedInUser,
    team: Annotated[str, Form(max_length=128)] = "",
    banned: Annotated[bool, Form()] = True,
    reason: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    moderation.set_banned(
        session, competition=competition, team_name=team, banned=banned, reason=reason, actor=user
    )
    verb = "banned" if banned else "no longer banned"
    return redirect(request, f"/c/{competition.slug}/host/teams", ok=f"Team {team} is {verb}.")


# --- Rescoring ----------------------------------------------------------------------------------


@router.get("/c/{slug}/host/rescore", response_class=HTMLResponse)
def rescore_page(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    preview, reason = None, None
    try:
        preview = rescore.preview(session, competition=competition)
    except Conflict as exc:
        reason = exc.detail
    return render(
        request,
        "host/rescore.html",
        {
            **_host(request, session, competition, user, "rescore"),
            "preview": preview,
            "reason": reason,
        },
    )


@router.post("/c/{slug}/host/rescore", dependencies=[CsrfChecked, back_to("/host/rescore")])
def start_rescore(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    started = rescore.start_rescore(
        session, competition=competition, actor=user, queue=request.app.state.scoring_queue
    )
    return redirect(
        request,
        f"/c/{competition.slug}/host/rescore",
        ok=f"Rescoring {started.queued} submission(s) against version {started.version}.",
    )


@router.post("/c/{slug}/host/rescore/publish", dependencies=[CsrfChecked, back_to("/host/rescore")])
def publish(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    key = rescore.publish(session, competition=competition, actor=user)
    return redirect(
        request,
        f"/c/{competition.slug}/host/rescore",
        ok=f"Version {key.version} is now on the boards.",
    )


# --- Audit log ----------------------------------------------------------------------------------


@router.get("/c/{slug}/host/audit", response_class=HTMLResponse)
def audit_page(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    return render(
        request,
        "host/audit.html",
        {
            **_host(request, session, competition, user, "audit"),
            "entries": _newest_entries(session, competition),
        },
    )


def _newest_entries(session: Session, competition: Competition) -> list[AuditEntry]:
    """The log's newest entries, newest first (the API pages it oldest first)."""
    total = entries(session, competition=competition, page=Page(limit=1)).total
    newest = Page(limit=MAX_LIMIT, offset=max(0, total - MAX_LIMIT))
    return list(reversed(entries(session, competition=competition, page=newest).items))
