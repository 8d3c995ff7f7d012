"""The endpoints the official ``kaggle`` client calls: JSON POSTs to
``/api/v1/competitions.CompetitionApiService/<Method>`` with HTTP Basic auth (user name and API
token), plus the signed URLs it PUTs submissions to and follows downloads to. Errors answer in
the client's own shape, ``{"code": <status>, "message": ...}``, so it prints the message."""

import base64
import binascii
import json
import logging
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse, StreamingResponse
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session
from starlette.convertors import Convertor, register_url_convertor

from app.auth.service import user_for_token
from app.auth.throttle import FailedAuthLimiter, client_address
from app.config import Settings
from app.datafiles.download import file_response
from app.db import run_after_rollback
from app.deps import SessionDep, SettingsDep, auth_limiter
from app.entry.gate import RulesNotAccepted
from app.errors import AppError, BadRequest, NotFound, Unauthorized
from app.http.headers import content_disposition
from app.http.request_body import upload_source
from app.kaggle import blobs, episodes, hosting, service
from app.kaggle import schemas as k
from app.models import User
from app.storage import iter_chunks, open_stored, save_blob

router = APIRouter(tags=["kaggle client"], include_in_schema=False)
log = logging.getLogger(__name__)

MAX_CALL_BYTES = 64 * 1024

# Method name → (request type, handler). A handler returns a message, a redirect URL or a file.
Handler = Callable[[Session, User, Any, service.Context], Any]
METHODS: dict[str, tuple[type[BaseModel], Handler]] = {
    "ListCompetitions": (k.ListCompetitionsRequest, service.list_competitions_call),
    "ListDataFiles": (k.ListDataFilesRequest, service.list_data_files_call),
    "DownloadDataFile": (k.DownloadDataFileRequest, service.download_data_file_call),
    "DownloadDataFiles": (k.CompetitionRequest, service.download_data_files_call),
    "StartSubmissionUpload": (
        k.StartSubmissionUploadRequest,
        service.start_submission_upload_call,
    ),
    "CreateSubmission": (k.CreateSubmissionRequest, service.create_submission_call),
    "ListSubmissions": (k.ListSubmissionsRequest, service.list_submissions_call),
    "GetSubmission": (k.GetSubmissionRequest, service.get_submission_call),
    "GetSubmissionLimits": (k.CompetitionRequest, service.get_submission_limits_call),
    "DownloadSubmission": (k.DownloadSubmissionRequest, service.download_submission_call),
    "ListCompetitionHosts": (k.CompetitionRequest, service.list_competition_hosts_call),
    "AddCompetitionHost": (k.AddCompetitionHostRequest, service.add_competition_host_call),
    "LaunchCompetition": (k.LaunchCompetitionRequest, service.launch_competition_call),
    "GetCompetitionSettings": (k.CompetitionRequest, service.get_competition_settings_call),
    "GetLeaderboard": (k.GetLeaderboardRequest, service.get_leaderboard_call),
    "DownloadLeaderboard": (k.CompetitionRequest, service.leaderboard_zip),
    "ListSubmissionEpisodes": (
        k.ListSubmissionEpisodesRequest,
        episodes.list_submission_episodes_call,
    ),
    "GetEpisodeReplay": (k.EpisodeRequest, episodes.episode_replay_call),
    "GetEpisodeAgentLogs": (k.EpisodeAgentLogsRequest, episodes.episode_agent_logs_call),
    "ListTeamPublicSubmissions": (
        k.ListTeamPublicSubmissionsRequest,
        episodes.list_team_public_submissions_call,
    ),
    # The host commands that make and change competitions (app.kaggle.hosting, .blobs).
    "CreateCompetition": (k.CreateCompetitionRequest, hosting.create_competition_call),
    "UpdateCompetitionSettings": (
        k.UpdateCompetitionSettingsRequest,
        hosting.update_competition_settings_call,
    ),
    "ListCompetitionPages": (k.ListCompetitionPagesRequest, hosting.list_competition_pages_call),
    "CreateCompetitionPage": (
        k.CreateCompetitionPageRequest,
        hosting.create_competition_page_call,
    ),
    "UpdateCompetitionPage": (
        k.UpdateCompetitionPageRequest,
        hosting.update_competition_page_call,
    ),
    "DeleteCompetitionPage": (
        k.DeleteCompetitionPageRequest,
        hosting.delete_competition_page_call,
    ),
    "CreateCompetitionData": (k.CreateCompetitionDataRequest, blobs.create_competition_data_call),
    "CreateCompetitionSolution": (
        k.CreateCompetitionSolutionRequest,
        blobs.create_competition_solution_call,
    ),
    "GetCompetitionSolutionStatus": (
        k.CompetitionRequest,
        blobs.get_competition_solution_status_call,
    ),
}
# kagglesdk's BlobApiService: where the host uploads (data, solution) start.
BLOB_METHODS: dict[str, tuple[type[BaseModel], Handler]] = {
    "StartBlobUpload": (k.StartBlobUploadRequest, blobs.start_blob_upload_call),
}
# A page's text, and a data update's list of up to 200 files and tokens, may be longer than any
# other call's body.
MAX_LARGE_CALL_BYTES = 1024 * 1024
_LARGE_CALLS = {"CreateCompetitionPage", "UpdateCompetitionPage", "CreateCompetitionData"}


# The host commands of kaggle 2.2.5 (kagglesdk's CompetitionApiService) not served here, and the
# way to do the same on Podium, said in the client's error (docs/kaggle-client.md lists them).
PODIUM_INSTEAD = {
    "CreateCompetitionSampleSubmission": "GET /api/v1/competitions/{slug}/sample-submission (built from the key)",
    "ListCompetitionJudges": "co-hosts: kaggle competitions hosts",
    "AddCompetitionJudge": "a co-host: kaggle competitions host-add",
    "ListCompetitionTopics": "the competition's announcements: GET /api/v1/competitions/{slug}/announcements",
    "ListTopicMessages": "the competition's announcements: GET /api/v1/competitions/{slug}/announcements",
}


def kaggle_error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        status_code=status, content={"code": status, "message": message}, headers=headers
    )


def _caller(session: Session, authorization: str | None, secret_key: str) -> User:
    """The user behind HTTP Basic ``name:token`` (what KAGGLE_USERNAME / KAGGLE_KEY send) or a
    bearer token. A token that belongs to someone else than the name given is refused."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() == "bearer" and value:
        return user_for_token(session, token=value.strip(), secret_key=secret_key)
    if scheme.lower() != "basic" or not value:
        raise Unauthorized("missing credentials: set KAGGLE_USERNAME and KAGGLE_KEY")
    try:
        name, sep, token = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise Unauthorized("malformed Basic credentials") from None
    if not sep:
        raise Unauthorized("malformed Basic credentials")
    user = user_for_token(session, token=token, secret_key=secret_key)
    if user.name != name:
        raise Unauthorized("unknown user name or key")
    return user


def _token_tried(authorization: str | None) -> str:
    """The token a Bearer or Basic ``name:token`` header tries, counted as the API counts it
    (the whole header when it is malformed)."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip(), validate=True).decode().partition(":")[2]
        except (binascii.Error, UnicodeDecodeError):
            pass
    elif scheme.lower() == "bearer":
        return value.strip()
    return authorization or ""


def _call(
    service_name: str,
    method: str,
    body: bytes,
    authorization: str | None,
    session: Session,
    ctx: service.Context,
    limiter: FailedAuthLimiter,
    address: str,
) -> Response:
    try:
        user = limiter.attempt_token(
            address,
            _token_tried(authorization),
            lambda: _caller(session, authorization, ctx.settings.secret_key),
        )
        methods = BLOB_METHODS if service_name == "BlobApiService" else METHODS
        if method not in methods:
            instead = PODIUM_INSTEAD.get(method)
            raise NotFound(
                f"Podium does not implement {service_name}/{method}"
                + (f"; on Podium: {instead}" if instead else "")
            )
        request_type, handler = methods[method]
        try:
            fields = json.loads(body or b"{}")
            request = request_type.model_validate(fields)
        except (ValueError, ValidationError) as exc:
            raise BadRequest(f"malformed {method} request: {exc}") from None
        result = handler(session, user, request, ctx)
    except RulesNotAccepted:
        # Rules changed between the upload's start and its creation: Kaggle's 403 all the same.
        session.rollback()
        session.info.pop("after_commit", None)
        return kaggle_error(403, service.KAGGLE_RULES.format(action="submit"))
    except AppError as exc:
        if not exc.recorded:  # a recorded refusal (a failed upload) is committed, not undone
            session.rollback()
            run_after_rollback(session)
        return kaggle_error(exc.status_code, exc.detail, getattr(exc, "headers", None))
    except Exception:
        # A bug, not the caller's doing; the client would print a traceback for Podium's own
        # error body, so it gets a sentence in its shape (and the log the details).
        log.exception("kaggle call %s/%s failed", service_name, method)
        session.rollback()
        run_after_rollback(session)
        return kaggle_error(500, "Podium failed on this call; the server's log says why")
    if isinstance(result, k.Message):
        return JSONResponse(result.to_json())
    if isinstance(result, str):  # a signed URL to follow
        return RedirectResponse(result, status_code=302)
    name, content, *media = result  # a file: a zip unless the handler names its type
    return Response(
        content,
        media_type=media[0] if media else "application/zip",
        headers={"Content-Disposition": content_disposition(name)},
    )


@router.post("/competitions.CompetitionApiService/{method}")
async def competition_api(
    method: str, request: Request, session: SessionDep, settings: SettingsDep
) -> Response:
    return await _serve("CompetitionApiService", method, request, session, settings)


@router.post("/blobs.BlobApiService/{method}")
async def blob_api(
    method: str, request: Request, session: SessionDep, settings: SettingsDep
) -> Response:
    return await _serve("BlobApiService", method, request, session, settings)


class _OtherService(Convertor[str]):
    """The name of a kagglesdk service Podium does not serve (``datasets.DatasetApiService``,
    ``discussions.DiscussionApiService``, ...)."""

    regex = r"[a-z]+\.[A-Za-z]+Service"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("kaggle_service", _OtherService())


@router.post("/{service_name:kaggle_service}/{method}")
def other_service(service_name: str, method: str) -> Response:
    """The client's other commands (datasets, kernels, models, discussions): one sentence in its
    own error shape, where Podium's 404 body would stop it with a TypeError."""
    return kaggle_error(
        404,
        f"Podium does not implement {service_name}/{method[:64]}: it serves the client's "
        "competitions commands only",
    )


async def _serve(
    service_name: str, method: str, request: Request, session: Session, settings: Settings
) -> Response:
    limit = MAX_LARGE_CALL_BYTES if method in _LARGE_CALLS else MAX_CALL_BYTES
    declared = request.headers.get("content-length", "0")
    if declared.isdigit() and int(declared) > limit:
        return kaggle_error(413, f"the request body is larger than the {limit:,}-byte limit")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return kaggle_error(413, f"the request body is larger than the {limit:,}-byte limit")
    ctx = service.Context(
        settings=settings,
        base_url=settings.public_url.rstrip("/") + "/"
        if settings.public_url
        else str(request.base_url),
        queue=request.app.state.scoring_queue,
    )
    return await run_in_threadpool(
        _call,
        service_name,
        method,
        bytes(body),
        request.headers.get("authorization"),
        session,
        ctx,
        auth_limiter(request),
        client_address(request.scope),
    )


@router.put("/kaggle/uploads/{token}")
async def upload_submission_bytes(
    token: str, request: Request, settings: SettingsDep
) -> dict[str, str]:
    """Where the client PUTs a submission's bytes; the signed token is the permission."""
    key = service.staged_upload_key(token, settings)
    source = await upload_source(request, settings.max_upload_bytes)
    await run_in_threadpool(
        lambda: save_blob(source, key=key, settings=settings, max_bytes=settings.max_upload_bytes)
    )
    return {}


@router.put("/kaggle/blob-uploads/{token}", response_model=None)
async def upload_blob_bytes(token: str, request: Request, settings: SettingsDep) -> Response:
    """Where the client PUTs a host upload's bytes (a data file, a solution). A resumed upload
    first asks what arrived (``Content-Range: bytes */N``): nothing is kept of a broken one,
    so the answer is 404 and the client starts that file again."""
    key, kind = blobs.staged_blob(token, settings)
    ranged = request.headers.get("content-range", "")
    if ranged.startswith("bytes */"):
        return kaggle_error(404, "nothing of this upload was kept: start it again")
    if ranged and not ranged.startswith("bytes 0-"):
        return kaggle_error(400, "Podium does not resume uploads: send the whole file")
    limit = blobs.blob_limit(kind, settings)
    source = await upload_source(request, limit)
    await run_in_threadpool(lambda: save_blob(source, key=key, settings=settings, max_bytes=limit))
    return JSONResponse({})


@router.get("/kaggle/blobs/{token}/{filename}")
def download_signed(
    token: str, filename: str, session: SessionDep, settings: SettingsDep
) -> StreamingResponse:
    if service.is_bundle(token, settings):
        files = service.signed_bundle(session, token, settings)
        return StreamingResponse(
            service.zip_stream(files, settings),
            media_type="application/zip",
            headers={"Content-Disposition": content_disposition(filename)},
        )
    submission = service.signed_submission(session, token, settings)
    if submission is not None:
        try:
            source = open_stored(submission.path, settings=settings)
        except NotFound:
            raise NotFound("this submission's file is not kept (refused at upload)") from None
        return StreamingResponse(
            iter_chunks(source),
            media_type="application/octet-stream",
            headers={"Content-Disposition": content_disposition(filename)},
        )
    return file_response(service.signed_file(session, token, settings), settings)
