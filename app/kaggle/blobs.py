"""The official client's host uploads: ``competitions data update`` and ``solution create``.
Each file goes up as Kaggle's do, through ``blobs.BlobApiService/StartBlobUpload`` (a signed
URL the client PUTs the bytes to) and then a call that hands over the upload's token; here the
token's bytes become data files (``PUT .../files/{name}``) or the answer key (``PUT
.../answer-key``), by the same services and refusals."""

import uuid
from functools import partial
from typing import BinaryIO

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.auth.hosts import require_host
from app.competitions.phases import only_phase
from app.competitions.service import get_competition_by_slug, upload_answer_key
from app.config import Settings
from app.datafiles import service as datafiles
from app.db import after_rollback
from app.errors import BadRequest, Forbidden, NotFound, PayloadTooLarge
from app.kaggle import schemas as k
from app.kaggle.service import UPLOAD_TTL, Context, make_room
from app.kaggle.signing import sign, verify
from app.models import CompetitionHost, DataFile, User
from app.storage import delete_blob, open_blob

DATASET, SOLUTION = "DATASET", "COMPETITION_SOLUTION"
# Files a host may have uploaded and not yet handed over: a data update's whole folder.
MAX_PENDING_BLOBS = 200
RERUN = "COMPETITION_DATABUNDLE_TYPE_RERUN"


def _staged_key(user_id: int, nonce: str) -> str:
    return f"kaggle-blobs/{user_id}/{nonce}"


def blob_limit(kind: str, settings: Settings) -> int:
    """A data file may be as large as the data files API takes; a solution as an answer key."""
    return settings.max_data_file_bytes if kind == DATASET else settings.max_upload_bytes


def _hosts_something(session: Session, user: User) -> bool:
    return user.is_organiser or bool(
        session.scalar(select(exists().where(CompetitionHost.user_id == user.id)))
    )


def _make_room(user: User, settings: Settings) -> None:
    make_room(
        f"kaggle-blobs/{user.id}",
        MAX_PENDING_BLOBS,
        settings,
        "you have {pending} uploaded files not yet handed over; they expire within an hour",
    )


def start_blob_upload_call(
    session: Session, user: User, req: k.StartBlobUploadRequest, ctx: Context
) -> k.StartBlobUploadResponse:
    """Where to PUT one data file or solution. The request names no competition: only a
    competition's host (or an organiser) may upload, and the call that takes the token checks
    that they host the competition it names."""
    if req.type not in (DATASET, SOLUTION):
        raise BadRequest(
            f"Podium takes uploads of competition data and solutions, not {req.type[:40]}: "
            "datasets and models are not served"
        )
    if not _hosts_something(session, user):
        raise Forbidden("only a competition's hosts upload its data and solution")
    limit = blob_limit(req.type, ctx.settings)
    if req.content_length > limit:
        raise PayloadTooLarge(f"the file is larger than the {limit:,}-byte upload limit")
    _make_room(user, ctx.settings)
    token = sign(
        {"p": "blob", "u": user.id, "n": uuid.uuid4().hex, "t": req.type},
        secret_key=ctx.settings.secret_key,
        ttl_seconds=UPLOAD_TTL,
    )
    return k.StartBlobUploadResponse(
        token=token, create_url=f"{ctx.base_url}api/v1/kaggle/blob-uploads/{token}"
    )


def staged_blob(token: str, settings: Settings) -> tuple[str, str]:
    """The staged key and the kind of upload a signed blob URL stands for."""
    payload = verify(token, secret_key=settings.secret_key, purpose="blob")
    return _staged_key(int(payload["u"]), str(payload["n"])), str(payload["t"])


def _taken(token: str, user: User, kind: str, settings: Settings) -> str:
    """The staged key of the caller's own upload of ``kind``, or a refusal naming why not."""
    payload = verify(token, secret_key=settings.secret_key, purpose="blob")
    if payload.get("u") != user.id:
        raise NotFound("this upload belongs to another user")
    if payload.get("t") != kind:
        raise BadRequest(f"this upload was made as {payload.get('t')}, not as {kind}")
    return _staged_key(user.id, str(payload["n"]))


def _open_staged(key: str, settings: Settings) -> BinaryIO:
    try:
        return open_blob(key, settings=settings)
    except NotFound:
        raise NotFound(
            "an upload was not completed or has expired: run the command again"
        ) from None


def create_competition_data_call(
    session: Session, user: User, req: k.CreateCompetitionDataRequest, ctx: Context
) -> k.CreateCompetitionDataResponse:
    """``kaggle competitions data update``: the files become the competition's public data,
    replacing the set in full as on Kaggle (a public file not sent is deleted); with
    ``--rerun``, its hidden files (a code competition's inputs, never shown to participants)."""
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    datafiles.require_host(session, competition, user)
    rerun = req.competition_databundle_type == RERUN
    kind = datafiles.HIDDEN if rerun else datafiles.PUBLIC
    names = [f.name for f in req.files]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise BadRequest(f"the file {repeated[0][:200]!r} is named twice")
    for name in names:
        if "/" in name:
            raise BadRequest(
                f"{name[:200]!r} is in a folder: Podium's data files are one flat list, so "
                "upload a folder as one zip (kaggle competitions data update -p folder.zip)"
            )
        datafiles.check_name(name)
    keys = [_taken(f.token, user, DATASET, ctx.settings) for f in req.files]
    existing = {
        f.name: f
        for f in session.scalars(select(DataFile).where(DataFile.competition_id == competition.id))
    }
    try:
        for name, key in zip(names, keys, strict=True):
            before = existing.get(name)
            # A public file sent again keeps its release (held for a phase); any other takes
            # the set's visibility.
            keep = before is not None and before.visibility == kind and not rerun
            with _open_staged(key, ctx.settings) as source:
                datafile, _ = datafiles.put_file(
                    session,
                    competition=competition,
                    name=name,
                    source=source,
                    user=user,
                    settings=ctx.settings,
                    visibility=None if keep else kind,
                )
            after_rollback(
                session, partial(delete_blob, datafile.storage_key, settings=ctx.settings)
            )
    finally:
        for key in keys:
            delete_blob(key, settings=ctx.settings)
    for name, datafile in existing.items():
        if name not in names and datafile.visibility == kind:
            datafiles.delete_file(
                session, competition=competition, name=name, user=user, settings=ctx.settings
            )
    return k.CreateCompetitionDataResponse(
        url=f"{ctx.base_url}c/{competition.slug}/data", databundle_id=competition.id
    )


def create_competition_solution_call(
    session: Session, user: User, req: k.CreateCompetitionSolutionRequest, ctx: Context
) -> k.Message:
    """``kaggle competitions solution create``: the file becomes the answer key of the
    competition's only phase, checked as ``PUT .../answer-key`` checks it (its Usage column
    splits the public and private rows, as Kaggle's solution files do)."""
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    require_host(session, competition, user)
    phase = only_phase(competition, "answer-key")
    key = _taken(req.blob_token, user, SOLUTION, ctx.settings)
    try:
        with _open_staged(key, ctx.settings) as source:
            upload_answer_key(
                session,
                competition=competition,
                phase=phase,
                source=source,
                uploader=user,
                settings=ctx.settings,
            )
    finally:
        delete_blob(key, settings=ctx.settings)
    return k.Message()


def get_competition_solution_status_call(
    session: Session, user: User, req: k.CompetitionRequest, ctx: Context
) -> k.CompetitionSolutionStatus:
    """``kaggle competitions solution status``: the current phase's answer key as stored (a
    key is checked when it is uploaded, so a stored one is ready)."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    require_host(session, competition, user)
    phase = competition.current_phase
    key = phase.board_key if phase is not None else None
    if key is None:
        return k.CompetitionSolutionStatus(ready=False)
    return k.CompetitionSolutionStatus(
        ready=True,
        row_id_column_name=key.id_column,
        solution_info=k.SolutionFileInfo(
            upload_date=key.created_at,
            total_rows=key.n_rows,
            public_rows=key.n_public,
            private_rows=key.n_private,
        ),
    )
