from typing import Annotated, Literal

from fastapi import APIRouter, Form, Response, UploadFile, status

from app.competitions import service
from app.competitions.schemas import (
    AnswerKeyPublic,
    CompetitionCreate,
    CompetitionPublic,
    CompetitionUpdate,
)
from app.deps import CompetitionDep, CurrentUser, OrganiserUser, SessionDep, SettingsDep
from app.errors import error_responses
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
    organiser: OrganiserUser,
    competition: CompetitionDep,
    data: CompetitionUpdate,
    session: SessionDep,
) -> CompetitionPublic:
    service.update_competition(session, competition=competition, data=data, actor=organiser)
    return service.to_public(competition)


@router.put(
    "/{slug}/answer-key",
    response_model=AnswerKeyPublic,
    status_code=201,
    responses=error_responses(413),
)
def upload_answer_key(
    organiser: OrganiserUser,
    competition: CompetitionDep,
    file: UploadFile,
    session: SessionDep,
    settings: SettingsDep,
) -> AnswerKeyPublic:
    key = service.upload_answer_key(
        session, competition=competition, source=file.file, uploader=organiser, settings=settings
    )
    return AnswerKeyPublic.model_validate(key)


@router.put(
    "/{slug}/custom-metric", response_model=CompetitionPublic, responses=error_responses(413)
)
def upload_custom_metric(
    organiser: OrganiserUser,
    competition: CompetitionDep,
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
        actor=organiser,
    )
    return service.to_public(competition)


@router.get("/{slug}/answer-key/versions", response_model=list[AnswerKeyPublic])
def list_answer_key_versions(
    _organiser: OrganiserUser, competition: CompetitionDep
) -> list[AnswerKeyPublic]:
    return [AnswerKeyPublic.model_validate(k) for k in competition.answer_keys]


@router.get("/{slug}/sample-submission", response_class=Response)
def sample_submission(competition: CompetitionDep, settings: SettingsDep) -> Response:
    return Response(
        content=service.sample_submission_csv(competition, settings),
        media_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{competition.slug}-sample.csv"'},
    )
