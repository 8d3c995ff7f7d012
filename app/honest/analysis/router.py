from typing import Annotated

from fastapi import APIRouter, Query

from app.competitions.phases import board_phase
from app.deps import CompetitionDep, CurrentUser, IdQuery, SessionDep, SettingsDep
from app.honest.analysis import service
from app.honest.analysis.schemas import ComparisonPublic, ShakeupPublic

router = APIRouter(tags=["leaderboard"])


@router.get("/competitions/{slug}/compare", response_model=ComparisonPublic)
def compare_submissions(
    competition: CompetitionDep, user: CurrentUser, session: SessionDep, a: IdQuery, b: IdQuery
) -> ComparisonPublic:
    """Is A better than B? The paired bootstrap difference and a one-sided p-value."""
    return service.compare_submissions(session, competition=competition, user=user, a=a, b=b)


@router.get("/competitions/{slug}/shakeup", response_model=ShakeupPublic)
def shakeup(
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    phase: Annotated[str | None, Query(max_length=64)] = None,
) -> ShakeupPublic:
    """How far a phase's private board moved from its public one (default: the current
    phase), and whether it was overfit."""
    return service.shakeup_report(
        session,
        competition=competition,
        user=user,
        settings=settings,
        phase=board_phase(competition, phase),
    )
