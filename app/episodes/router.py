from typing import Annotated, Any

from fastapi import APIRouter, Form, Path, UploadFile

from app.competitions import phases
from app.competitions.schemas import PhasePublic
from app.deps import (
    CurrentUser,
    HostedCompetitionDep,
    IdPath,
    OptionalUser,
    SessionDep,
    SettingsDep,
)
from app.episodes import hosting, service
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


@router.put(
    "/competitions/{slug}/phases/{phase}/environment",
    response_model=PhasePublic,
    responses=error_responses(403, 409, 413, 422),
)
def upload_environment(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    phase: Annotated[str, Path(max_length=64)],
    file: UploadFile,
    session: SessionDep,
    settings: SettingsDep,
    configuration: Annotated[str | None, Form(max_length=20_000)] = None,
) -> PhasePublic:
    """A host's own environment for a simulation phase: a zip of ``<name>.json`` (the
    specification), ``<name>.py`` (interpreter, renderer) and optionally ``<name>.js``, written
    to kaggle-environments' interface; made in the jail before the phase takes it."""
    updated = hosting.upload_environment(
        session,
        competition=competition,
        phase=phases.get_phase(competition, phase),
        source=file.file,
        filename=file.filename or "environment.zip",
        configuration=configuration,
        actor=user,
        settings=settings,
    )
    return phases.to_public(updated)
