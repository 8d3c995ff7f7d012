from fastapi import APIRouter, Request, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from app.datafiles import service
from app.datafiles.download import file_response
from app.datafiles.schemas import DataFilePublic, DataFileRelease
from app.deps import CompetitionDep, CurrentUser, SessionDep, SettingsDep
from app.http.request_body import upload_source

router = APIRouter(prefix="/competitions/{slug}/files", tags=["data files"])


@router.get("", response_model=list[DataFilePublic])
def list_files(
    competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> list[DataFilePublic]:
    files = service.list_files(session, competition=competition, user=user)
    return [DataFilePublic.model_validate(f) for f in files]


@router.put(
    "/{name}",
    response_model=DataFilePublic,
    status_code=status.HTTP_201_CREATED,
    openapi_extra={
        "requestBody": {
            "content": {"application/octet-stream": {}, "multipart/form-data": {}},
            "description": "the file's bytes as the raw body, or a multipart part named 'file'",
        }
    },
)
async def put_file(
    name: str,
    request: Request,
    response: Response,
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> DataFilePublic:
    # The caller and the name are checked before any of the body is read.
    await run_in_threadpool(service.require_host, session, competition, user)
    service.check_name(name)
    # The session's slot is given back while the body arrives; put_file checks the host again.
    source = await upload_source(request, settings.max_data_file_bytes, session=session)
    visibility = await _field(request, "visibility")
    release_with = await _field(request, "release_with")
    datafile, created = await run_in_threadpool(
        lambda: service.put_file(
            session,
            competition=competition,
            name=name,
            source=source,
            user=user,
            settings=settings,
            visibility=visibility,
            release_with=release_with,
        )
    )
    if not created:
        response.status_code = status.HTTP_200_OK
    return DataFilePublic.model_validate(datafile)


async def _field(request: Request, name: str) -> str | None:
    """``name`` (``visibility``, ``release_with``) from the query, else from the multipart form
    (already read with the file); bounded like the names it holds."""
    value = request.query_params.get(name)
    if value is None and request.headers.get("content-type", "").startswith("multipart/"):
        field = (await request.form()).get(name)
        value = field if isinstance(field, str) else None
    return value[:100] if value is not None else None


@router.patch("/{name}", response_model=DataFilePublic)
def change_release(
    name: str,
    data: DataFileRelease,
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
) -> DataFilePublic:
    """A stored file made public now, hidden (code runs only), or public from a phase's start
    (``release_with``), without sending it again."""
    datafile = service.change_release(
        session,
        competition=competition,
        name=name,
        user=user,
        visibility=data.visibility,
        release_with=data.release_with,
    )
    return DataFilePublic.model_validate(datafile)


@router.get("/{name}", response_class=StreamingResponse)
def download_file(
    name: str,
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> StreamingResponse:
    datafile = service.get_file(session, competition=competition, user=user, name=name)
    return file_response(datafile, settings)


@router.delete("/{name}", status_code=status.HTTP_204_NO_CONTENT)
def delete_file(
    name: str,
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> None:
    service.delete_file(session, competition=competition, name=name, user=user, settings=settings)
