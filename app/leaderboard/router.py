from fastapi import APIRouter

from app.deps import CompetitionDep, CurrentUser, SessionDep
from app.leaderboard import service
from app.leaderboard.schemas import Board, Leaderboard

router = APIRouter(tags=["leaderboard"])


@router.get("/competitions/{slug}/leaderboard", response_model=Leaderboard)
def get_leaderboard(
    competition: CompetitionDep, user: CurrentUser, session: SessionDep, board: Board = "public"
) -> Leaderboard:
    return service.leaderboard(session, competition=competition, board=board, user=user)
