from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.competitions.phases import board_phase
from app.competitions.schemas import AnswerKeyPublic
from app.deps import (
    CurrentUser,
    HostedCompetitionDep,
    OptionalUser,
    PublicCompetitionDep,
    SessionDep,
)
from app.errors import error_responses
from app.http.headers import content_disposition
from app.jobs import rescore
from app.leaderboard import moderation, service
from app.leaderboard.schemas import (
    BanRequest,
    Board,
    Leaderboard,
    RescorePreview,
    RescoreStarted,
)
from app.ledger import service as ledger
from app.ledger.service import LEDGER_HEAD
from app.models.types import Count

PhaseQuery = Annotated[str | None, Query(max_length=64)]
SortQuery = Annotated[str | None, Query(max_length=64)]
TaskQuery = Annotated[str | None, Query(max_length=32)]


router = APIRouter(tags=["leaderboard"], responses=error_responses(403, 404, 409))


# The boards need no token, as on the web page: the public board is anyone's, the private one
# too once the deadline has passed. A token adds the caller's own row (and a host's view).
@router.get("/competitions/{slug}/leaderboard", response_model=Leaderboard)
def get_leaderboard(
    competition: PublicCompetitionDep,
    user: OptionalUser,
    session: SessionDep,
    board: Board = "public",
    limit: Annotated[int, Query(ge=1, le=service.MAX_PAGE)] = 100,
    offset: Annotated[Count, Query()] = 0,
    phase: PhaseQuery = None,
    sort: SortQuery = None,
    task: TaskQuery = None,
) -> Leaderboard:
    """A phase's board, ranked by its first column or by ``sort``. Without ``phase``: of the
    boards the caller may read, an open public phase's (the latest-starting), else the current
    phase's, else the last readable one that ended. ``task``: a multi-task phase's one task."""
    return service.leaderboard(
        session,
        competition=competition,
        board=board,
        user=user,
        limit=limit,
        offset=offset,
        phase_name=phase,
        sort=sort,
        task=task,
    )


@router.get(
    "/competitions/{slug}/leaderboard.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}},
)
def get_leaderboard_csv(
    request: Request,
    competition: PublicCompetitionDep,
    user: OptionalUser,
    session: SessionDep,
    board: Board = "public",
    phase: PhaseQuery = None,
    sort: SortQuery = None,
    task: TaskQuery = None,
) -> Response:
    body = service.leaderboard_csv(
        session,
        competition=competition,
        board=board,
        user=user,
        cache=request.app.state.rendered_boards,
        phase_name=phase,
        sort=sort,
        task=task,
    )
    filename = f"{competition.slug}-{board}-leaderboard.csv"
    # The record's head as the board was read: a saved board names the chain it follows from.
    head = ledger.head_text(ledger.head(session, competition.id))
    return Response(
        body,
        media_type="text/csv",
        headers={"Content-Disposition": content_disposition(filename), LEDGER_HEAD: head},
    )


@router.post("/competitions/{slug}/bans", status_code=201)
def ban_team(
    user: CurrentUser, competition: HostedCompetitionDep, body: BanRequest, session: SessionDep
) -> dict[str, str]:
    moderation.set_banned(
        session,
        competition=competition,
        team_name=body.team,
        banned=True,
        reason=body.reason,
        actor=user,
    )
    return {"team": body.team, "status": "banned"}


@router.delete("/competitions/{slug}/bans/{team}")
def unban_team(
    user: CurrentUser, competition: HostedCompetitionDep, team: str, session: SessionDep
) -> dict[str, str]:
    moderation.set_banned(
        session, competition=competition, team_name=team, banned=False, reason="", actor=user
    )
    return {"team": team, "status": "active"}


@router.post("/competitions/{slug}/rescore", response_model=RescoreStarted, status_code=202)
def start_rescore(
    request: Request,
    user: CurrentUser,
    competition: HostedCompetitionDep,
    session: SessionDep,
    phase: PhaseQuery = None,
) -> RescoreStarted:
    """Score a phase's submissions (default: the current phase's) against its newest key; in a
    benchmark whose newest key is published, queue again those not yet rescored against it."""
    return rescore.start_rescore(
        session,
        competition=competition,
        actor=user,
        queue=request.app.state.scoring_queue,
        phase=board_phase(competition, phase),
    )


@router.get("/competitions/{slug}/rescore/preview", response_model=RescorePreview)
def rescore_preview(
    _user: CurrentUser,
    competition: HostedCompetitionDep,
    session: SessionDep,
    phase: PhaseQuery = None,
) -> RescorePreview:
    return rescore.preview(session, competition=competition, phase=board_phase(competition, phase))


@router.post("/competitions/{slug}/rescore/publish", response_model=AnswerKeyPublic)
def rescore_publish(
    request: Request,
    user: CurrentUser,
    competition: HostedCompetitionDep,
    session: SessionDep,
    phase: PhaseQuery = None,
) -> AnswerKeyPublic:
    key = rescore.publish(
        session,
        competition=competition,
        actor=user,
        queue=request.app.state.scoring_queue,
        phase=board_phase(competition, phase),
    )
    return AnswerKeyPublic.model_validate(key)
