"""The pages anyone may read: the competitions list and a competition's tabs. Each handler loads
through the services the API uses and renders one template."""

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse
from markupsafe import Markup
from sqlalchemy.orm import Session

from app.competitions.service import list_competitions, sample_submission_csv, to_public
from app.config import Settings
from app.datafiles import service as datafiles
from app.datafiles.download import file_response
from app.deps import SessionDep, SettingsDep
from app.errors import AppError, Forbidden
from app.evaluation.rounding import rounded
from app.honest.analysis.schemas import ShakeupPublic
from app.honest.analysis.service import shakeup_report
from app.honest.board.board import hides_public_scores
from app.http.headers import content_disposition
from app.leaderboard.history import best_public_over_time
from app.leaderboard.service import MAX_PAGE, leaderboard
from app.metrics.docs import render_markdown as metrics_markdown
from app.models import Competition, User
from app.models.types import MAX_INT, RowId
from app.teams.service import find_team, team_counts
from app.web.charts import PALETTE, score_over_time
from app.web.competition import VISITOR, PageCompetition, tab_context
from app.web.markdown import render_markdown
from app.web.session import WebUser
from app.web.templating import render

router = APIRouter(include_in_schema=False)

BOARD_PAGE_SIZE = 50
CHART_TEAMS = 10


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
    return render(request, "overview.html", tab_context(session, competition, user, "overview"))


@router.get("/c/{slug}/data", response_class=HTMLResponse)
def data(
    request: Request, competition: PageCompetition, session: SessionDep, user: WebUser
) -> Response:
    files, closed = [], None
    try:
        files = datafiles.list_files(session, competition=competition, user=user or VISITOR)
    except Forbidden as exc:
        closed = exc.detail
    return render(
        request,
        "data.html",
        {**tab_context(session, competition, user, "data"), "files": files, "closed": closed},
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
    return render(request, "evaluation.html", tab_context(session, competition, user, "evaluation"))


@router.get("/c/{slug}/leaderboard", response_class=HTMLResponse)
def leaderboard_page(
    request: Request,
    competition: PageCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: WebUser,
    board: Literal["public", "private"] = "public",
    page: Annotated[RowId, Query()] = 1,
) -> Response:
    context = tab_context(session, competition, user, "leaderboard")
    # A host sees full precision and the private board at any time; everyone else what a
    # participant sees, whatever their role elsewhere.
    viewer = user if context["is_host"] and user is not None else VISITOR
    closed = competition.is_past_deadline(datetime.now(UTC))
    private_open = closed or context["is_host"]
    if board == "private" and not private_open:
        board = "public"
    page = max(page, 1)
    # A page past the last is an empty page; its offset stays within the database's integers.
    offset = min((page - 1) * BOARD_PAGE_SIZE, MAX_INT)
    # The page is read from the standings (a fixed cost whatever the board's size); the public
    # board's head gives the chart's teams and, beside a private page, each team's public rank.
    public = leaderboard(
        session,
        competition=competition,
        board="public",
        user=viewer,
        limit=MAX_PAGE if board == "private" else BOARD_PAGE_SIZE,
        offset=0 if board == "private" else offset,
    )
    shown = public
    moves: dict[str, int | None] = {}
    if board == "private":
        shown = leaderboard(
            session,
            competition=competition,
            board="private",
            user=viewer,
            limit=BOARD_PAGE_SIZE,
            offset=offset,
        )
        moves = {row.team: row.rank for row in public.rows}
    mine = find_team(session, competition=competition, user=user) if user else None
    pages = max(1, -(-shown.total // BOARD_PAGE_SIZE))
    rows = shown.rows
    head = public
    if board == "public" and offset > 0:
        head = leaderboard(
            session, competition=competition, board="public", user=viewer, limit=2 * CHART_TEAMS
        )
    top = [row.team for row in head.rows if not row.baseline][:CHART_TEAMS]
    series = best_public_over_time(session, competition=competition, team_names=top)
    if public.score_decimals is not None:
        series = {
            team: [(t, rounded(v, public.score_decimals)) for t, v in points]
            for team, points in series.items()
        }
    chart = score_over_time(
        series,
        maximize=public.direction == "maximize",
        metric=public.metric,
        end=min(datetime.now(UTC), competition.deadline or datetime.now(UTC)),
    )
    if hides_public_scores(competition, context["is_host"]):
        # The history holds exact public scores: on a Ladder board only hosts may see them.
        chart, series = None, {}
    return render(
        request,
        "leaderboard.html",
        {
            **context,
            "board": shown,
            "rows": rows,
            "page": page,
            "pages": pages,
            "moves": moves,
            "private_open": private_open,
            "closed": closed,
            "my_team": mine.name if mine else None,
            "chart": chart,
            "honest": any(row.interval or row.band for row in rows),
            "shake": _shakeup(session, competition, viewer, settings) if closed else None,
            "legend": [(team, PALETTE[i % len(PALETTE)]) for i, team in enumerate(series)],
        },
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


def _shakeup(
    session: Session, competition: Competition, viewer: User, settings: Settings
) -> ShakeupPublic | None:
    """The shake-up report under the leaderboard once the competition is over."""
    try:
        return shakeup_report(session, competition=competition, user=viewer, settings=settings)
    except AppError:
        return None  # no key yet: nothing to report
