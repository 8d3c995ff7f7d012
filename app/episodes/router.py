from typing import Annotated, Any

from fastapi import APIRouter, Path

from app.deps import IdPath, OptionalUser, SessionDep
from app.episodes import service
from app.episodes.schemas import EpisodePublic
from app.errors import error_responses

router = APIRouter(tags=["simulations"], responses=error_responses(404))


@router.get("/submissions/{submission_id}/episodes", response_model=list[EpisodePublic])
def submission_episodes(
    submission_id: IdPath, user: OptionalUser, session: SessionDep
) -> list[EpisodePublic]:
    """An agent's episodes, newest first (its validation: its team's and the hosts' only)."""
    return service.submission_episodes(session, submission_id=submission_id, user=user)


@router.get("/episodes/{episode_id}")
def episode_replay(episode_id: IdPath, user: OptionalUser, session: SessionDep) -> dict[str, Any]:
    """The episode's replay: Kaggle's JSON, as ``kaggle-environments`` writes it."""
    return service.replay(session, episode_id=episode_id, user=user)


@router.get("/episodes/{episode_id}/logs/{agent}")
def episode_log(
    episode_id: IdPath,
    # Kaggle's agent index, from 0: a short string (integer path parameters are row ids).
    agent: Annotated[str, Path(pattern=r"^[0-9]{1,2}$", description="the agent's seat, from 0")],
    user: OptionalUser,
    session: SessionDep,
) -> dict[str, Any]:
    """One agent's log of the episode (per step: duration, stdout, stderr; and its process's
    own output): its team's and the hosts' only."""
    return service.seat_log(session, episode_id=episode_id, position=int(agent), user=user)
