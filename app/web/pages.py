"""The pages anyone may read: the competitions list and a competition's tabs. Each handler loads
through the services the API uses and renders one template."""

import re
from functools import lru_cache
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from app.coderun.runtime import runtime_info
from app.competitions.phases import code_limits
from app.competitions.service import list_competitions, sample_submission_csv, to_public
from app.datafiles import service as datafiles
from app.datafiles.download import file_response
from app.deps import SessionDep, SettingsDep
from app.errors import Forbidden
from app.http.headers import content_disposition
from app.ledger import service as ledger
from app.metrics.docs import render_markdown as metrics_markdown
from app.models.types import RowId
from app.registration import announcements
from app.teams.service import find_team, team_counts
from app.web.boards import board_page
from app.web.competition import VISITOR, PageCompetition, tab_context
from app.web.markdown import render_markdown
from app.web.session import WebUser
from app.web.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, session: SessionDep, user: WebUser) -> Response:
    competitions = list_competitions(session, user)
    counts = team_counts(session, competition_ids=[c.id for c in competitions])
    rows = [(to_public(c), counts.get(c.id, 0)) for c in competitions]
    # Archived competitions are listed apart, after the live ones (and a host's drafts).
    return render(
        request,
        "home.html",
        {
            "rows": [r for r in rows if r[0].status != "archived"],
            "archived": [r for r in rows if r[0].status == "archived"],
        },
    )


@router.get("/c/{slug}", response_class=HTMLResponse)
def overview(
    request: Request, competition: PageCompetition, session: SessionDep, user: WebUser
) -> Response:
    news = announcements.recent(session, competition=competition, limit=5)
    # The record's head, published where anyone can note it down (app.ledger).
    head = ledger.head_text(ledger.head(session, competition.id))
    return render(
        request,
        "overview.html",
        {**tab_context(session, competition, user, "overview"), "news": news, "ledger_head": head},
    )


@router.get("/c/{slug}/data", response_class=HTMLResponse)
def data(
    request: Request, competition: PageCompetition, session: SessionDep, user: WebUser
) -> Response:
    files, closed = [], None
    try:
        files = datafiles.list_files(session, competition=competition, user=user or VISITOR)
    except Forbidden as exc:
        closed = exc.detail
    # What comes when: files held for a phase that has not started yet, by name and date.
    coming = datafiles.coming(session, competition=competition)
    return render(
        request,
        "data.html",
        {
            **tab_context(session, competition, user, "data"),
            "files": files,
            "closed": closed,
            "coming": coming,
        },
    )


@router.get("/c/{slug}/data/files/{name}")
def data_file(
    name: str,
    competition: PageCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: WebUser,
) -> Response:
    datafile = datafiles.get_file(session, competition=competition, user=user or VISITOR, name=name)
    return file_response(datafile, settings)


@router.get("/c/{slug}/data/sample-submission.csv")
def sample_submission(competition: PageCompetition, settings: SettingsDep) -> Response:
    return Response(
        content=sample_submission_csv(competition, settings),
        media_type="text/csv",
        headers={"Content-Disposition": content_disposition(f"{competition.slug}-sample.csv")},
    )


@router.get("/c/{slug}/evaluation", response_class=HTMLResponse)
def evaluation(
    request: Request, competition: PageCompetition, session: SessionDep, user: WebUser
) -> Response:
    context = tab_context(session, competition, user, "evaluation")
    code_phases = [p for p in competition.phases if p.takes_code]
    if code_phases:
        # What the participants' code runs on, and with which limits (GET /api/v1/runtime).
        context["runtime"] = runtime_info()
        context["code_phases"] = [(p, code_limits(p)) for p in code_phases]
    return render(request, "evaluation.html", context)


@router.get("/c/{slug}/leaderboard", response_class=HTMLResponse)
def leaderboard_page(
    request: Request,
    competition: PageCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: WebUser,
    board: Literal["public", "private"] = "public",
    page: Annotated[RowId, Query()] = 1,
    phase: Annotated[str | None, Query(max_length=64)] = None,
    sort: Annotated[str | None, Query(max_length=64)] = None,
    task: Annotated[str | None, Query(max_length=32)] = None,
) -> Response:
    context = tab_context(session, competition, user, "leaderboard")
    # A host sees full precision and the private board at any time; everyone else what a
    # participant sees, whatever their role elsewhere.
    viewer = user if context["is_host"] and user is not None else VISITOR
    shown = board_page(
        session,
        competition=competition,
        viewer=viewer,
        is_host=context["is_host"],
        board=board,
        page=page,
        phase_name=phase,
        sort=sort,
        settings=settings,
        task=task,
    )
    mine = find_team(session, competition=competition, user=user) if user else None
    return render(
        request,
        "leaderboard.html",
        {**context, **shown, "my_team": mine.name if mine else None},
    )


@lru_cache(maxsize=1)
def _metrics_page() -> Markup:
    # The catalogue's own generated document, each metric's heading given an anchor.
    html = str(render_markdown(metrics_markdown()))
    return Markup(  # noqa: S704 - rendered and sanitised above; only ids are added
        re.sub(r"<h3><code>([a-z0-9_]+)</code></h3>", r'<h3 id="\1"><code>\1</code></h3>', html)
    )


@router.get("/metrics", response_class=HTMLResponse)
def metrics(request: Request, _user: WebUser) -> Response:
    return render(request, "metrics.html", {"body": _metrics_page()})
