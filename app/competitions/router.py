from typing import Annotated, Literal

from fastapi import APIRouter, Form, Response, UploadFile, status

from app.auth import hosts
from app.competitions import service
from app.competitions.schemas import (
    AnswerKeyPublic,
    CompetitionCreate,
    CompetitionPublic,
    CompetitionUpdate,
    HostCreate,
    HostPublic,
)
from app.deps import (
    CompetitionDep,
    CurrentUser,
    HostedCompetitionDep,
    OrganiserUser,
    SessionDep,
    SettingsDep,
)
from app.errors import error_responses
from app.http.headers import content_disposition
from app.pagination import PAGE_HEADERS, PageDep

router = APIRouter(
    prefix="/competitions", tags=["competitions"], responses=error_responses(403, 404, 409)
)


@router.post("", response_model=CompetitionPublic, status_code=status.HTTP_201_CREATED)
def create_competition(
    data: CompetitionCreate, session: SessionDep, organiser: OrganiserUser
) -> CompetitionPublic:
    competition = service.create_competition(session, data=data, owner=organiser)
    return service.to_public(competition)


@router.get("", response_model=list[CompetitionPublic], responses=PAGE_HEADERS)
def list_competitions(
    session: SessionDep, _user: CurrentUser, page: PageDep
) -> list[CompetitionPublic]:
    found = service.competitions_page(session, page=page)
    page.tell_total(found.total)
    return [service.to_public(c) for c in found.items]


@router.get("/{slug}", response_model=CompetitionPublic)
def get_competition(competition: CompetitionDep) -> CompetitionPublic:
    return service.to_public(competition)


@router.patch("/{slug}", response_model=CompetitionPublic)
def update_competition(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    data: CompetitionUpdate,
    session: SessionDep,
) -> CompetitionPublic:
    service.update_competition(session, competition=competition, data=data, actor=user)
    return service.to_public(competition)


@router.put(
    "/{slug}/answer-key",
    response_model=AnswerKeyPublic,
    status_code=201,
    responses=error_responses(413),
)
def upload_answer_key(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    file: UploadFile,
    session: SessionDep,
    settings: SettingsDep,
) -> AnswerKeyPublic:
    key = service.upload_answer_key(
        session, competition=competition, source=file.file, uploader=user, settings=settings
    )
    return AnswerKeyPublic.model_validate(key)


@router.put(
    "/{slug}/custom-metric", response_model=CompetitionPublic, responses=error_responses(413)
)
def upload_custom_metric(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    file: UploadFile,
    direction: Annotated[Literal["maximize", "minimize"], Form()],
    session: SessionDep,
    settings: SettingsDep,
) -> CompetitionPublic:
    service.upload_custom_metric(
        session,
        competition=competition,
        source=file.file,
        direction=direction,
        settings=settings,
        actor=user,
    )
    return service.to_public(competition)


@router.get("/{slug}/answer-key/versions", response_model=list[AnswerKeyPublic])
def list_answer_key_versions(competition: HostedCompetitionDep) -> list[AnswerKeyPublic]:
    return [AnswerKeyPublic.model_validate(k) for k in competition.answer_keys]


@router.get("/{slug}/sample-submission", response_class=Response)
def sample_submission(slug: str, session: SessionDep, settings: SettingsDep) -> Response:
    """Public, like the competition's page: no token needed."""
    competition = service.get_competition_by_slug(session, slug)
    return Response(
        content=service.sample_submission_csv(competition, settings),
        media_type="text/csv",
        headers={"Content-Disposition": content_disposition(f"{competition.slug}-sample.csv")},
    )


@router.get("/{slug}/hosts", response_model=list[HostPublic])
def list_hosts(competition: HostedCompetitionDep, session: SessionDep) -> list[HostPublic]:
    return [
        HostPublic(user=h.user.name, role=h.role.value, added_at=h.added_at)
        for h in hosts.hosts(session, competition=competition)
    ]


@router.post("/{slug}/hosts", response_model=HostPublic, status_code=status.HTTP_201_CREATED)
def add_host(
    body: HostCreate, competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> HostPublic:
    host = hosts.add_host(session, competition=competition, name=body.user, actor=user)
    return HostPublic(user=host.user.name, role=host.role.value, added_at=host.added_at)


@router.delete("/{slug}/hosts/{user_name}", status_code=status.HTTP_204_NO_CONTENT)
def remove_host(
    user_name: str, competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> Response:
    hosts.remove_host(session, competition=competition, name=user_name, actor=user)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
