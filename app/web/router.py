"""Public pages. They show only what any visitor may see: public boards with rounded scores, and
the private board once the deadline has passed."""

from datetime import UTC, datetime
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.competitions.service import get_competition_by_slug, list_competitions, to_public
from app.deps import SessionDep, SettingsDep
from app.errors import AppError
from app.leaderboard.service import leaderboard
from app.models import Role, User
from app.stats.service import shakeup_report

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")

# Boards are computed for an anonymous participant, so the same access and rounding rules apply.
_VISITOR = User(name="visitor", role=Role.participant)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, session: SessionDep) -> HTMLResponse:
    competitions = [to_public(c) for c in list_competitions(session)]
    return templates.TemplateResponse(
        request, "home.html", {"competitions": competitions, "now": datetime.now(UTC)}
    )


@router.get("/c/{slug}", response_class=HTMLResponse)
def competition_page(
    slug: str, request: Request, session: SessionDep, settings: SettingsDep
) -> HTMLResponse:
    competition = get_competition_by_slug(session, slug)
    public = leaderboard(session, competition=competition, board="public", user=_VISITOR)
    private = shake = None
    if competition.is_past_deadline(datetime.now(UTC)):
        private = leaderboard(session, competition=competition, board="private", user=_VISITOR)
        try:
            shake = shakeup_report(
                session, competition=competition, user=_VISITOR, settings=settings
            )
        except AppError:
            shake = None  # no key yet: nothing to report
    return templates.TemplateResponse(
        request,
        "competition.html",
        {"c": to_public(competition), "public": public, "private": private, "shake": shake},
    )
