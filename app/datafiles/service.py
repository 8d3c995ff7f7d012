"""Competition data files: hosts publish them, participants read them once the competition has
started. The bytes go through ``app.storage``; an answer key is refused, never published.

A ``hidden`` file (a code competition's test set) is an input of code runs only: for anyone but
the competition's hosts it does not exist (never listed, a 404 to download, never in a bundle).
A public file may be *released with a phase* (a final phase's test set): until that phase starts
it is hidden in the same way, from then on public. Code runs read every file at any time."""

import re
import uuid
from datetime import UTC, datetime
from typing import BinaryIO

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.auth.hosts import is_host
from app.config import Settings
from app.db import after_commit
from app.errors import Forbidden, NotFound, Unprocessable
from app.models import AnswerKey, Competition, DataFile, Phase, User
from app.storage import delete_blob, save_blob

MAX_NAME_LENGTH = 200
# A plain file name: no directories, no leading dot, nothing a shell or a zip would misread.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
PUBLIC, HIDDEN = "public", "hidden"
VISIBILITIES = (PUBLIC, HIDDEN)


def check_visibility(value: str | None) -> str | None:
    """``public``, ``hidden`` or None (a new file is public; a replaced one keeps its own)."""
    if value is None or value == "":
        return None
    if value not in VISIBILITIES:
        raise Unprocessable(
            f"visibility must be 'public' or 'hidden', not '{value[:20]}'",
            extra={"field": "visibility"},
        )
    return value


def release_phase(competition: Competition, name: str | None) -> Phase | None:
    """The phase named by ``release_with`` (None for none), or a 422 listing the phases."""
    if name is None or name == "":
        return None
    for phase in competition.phases:
        if phase.name == name:
            return phase
    names = ", ".join(p.name for p in competition.phases)
    raise Unprocessable(
        f"release_with: '{name[:64]}' is not a phase of '{competition.slug}'; name one of its "
        f"phases ({names}), and the file becomes public when that phase starts",
        extra={"field": "release_with"},
    )


def is_released(datafile: DataFile, now: datetime) -> bool:
    """Whether participants see the file now (the competition's own start aside)."""
    if datafile.visibility != PUBLIC:
        return False
    phase = datafile.release_phase
    return phase is None or phase.start <= now


def require_host(session: Session, competition: Competition, user: User) -> None:
    if not is_host(session, competition, user):
        raise Forbidden(f"only the hosts of '{competition.slug}' may manage its data files")


def check_name(name: str) -> str:
    if len(name) > MAX_NAME_LENGTH:
        raise Unprocessable(f"a file name may have at most {MAX_NAME_LENGTH} characters")
    if not _NAME.fullmatch(name) or ".." in name:
        raise Unprocessable(
            f"'{name[:60]}' is not a valid file name: use letters, digits, '.', '_', '+' and '-', "
            "starting with a letter or digit, with no '..' and no directories"
        )
    return name


def check_can_read(session: Session, competition: Competition, user: User) -> None:
    if is_host(session, competition, user):
        return
    if datetime.now(UTC) < competition.start:
        raise Forbidden(f"the data opens with the competition at {competition.start.isoformat()}")


def list_files(session: Session, *, competition: Competition, user: User) -> list[DataFile]:
    check_can_read(session, competition, user)
    query = select(DataFile).where(DataFile.competition_id == competition.id)
    if not is_host(session, competition, user):
        started = select(Phase.id).where(
            Phase.competition_id == competition.id, Phase.start <= datetime.now(UTC)
        )
        query = query.where(
            DataFile.visibility == PUBLIC,
            or_(DataFile.release_phase_id.is_(None), DataFile.release_phase_id.in_(started)),
        )
    return list(session.scalars(query.order_by(DataFile.name)))


def coming(session: Session, *, competition: Competition) -> list[DataFile]:
    """Public files still held back for a phase that has not started: their names and when they
    come are the Data tab's to tell (the bytes stay the hosts' until then)."""
    now = datetime.now(UTC)
    files = session.scalars(
        select(DataFile)
        .where(
            DataFile.competition_id == competition.id,
            DataFile.visibility == PUBLIC,
            DataFile.release_phase_id.is_not(None),
        )
        .order_by(DataFile.name)
    )
    return [f for f in files if not is_released(f, now)]


def run_inputs(session: Session, *, competition: Competition) -> list[DataFile]:
    """Every data file of the competition, hidden ones included: what a code run reads."""
    return list(
        session.scalars(
            select(DataFile)
            .where(DataFile.competition_id == competition.id)
            .order_by(DataFile.name)
        )
    )


def get_file(session: Session, *, competition: Competition, user: User, name: str) -> DataFile:
    check_can_read(session, competition, user)
    datafile = session.scalar(
        select(DataFile).where(DataFile.competition_id == competition.id, DataFile.name == name)
    )
    if datafile is not None and not is_released(datafile, datetime.now(UTC)):
        # The same answer as for no file at all: a participant learns nothing of hidden ones.
        if not is_host(session, competition, user):
            datafile = None
    if datafile is None:
        raise NotFound(f"no data file '{name[:MAX_NAME_LENGTH]}' in '{competition.slug}'")
    return datafile


def put_file(
    session: Session,
    *,
    competition: Competition,
    name: str,
    source: BinaryIO,
    user: User,
    settings: Settings,
    visibility: str | None = None,
    release_with: str | None = None,
) -> tuple[DataFile, bool]:
    """Store (or replace) the data file ``name``; returns it and whether it is new.
    ``release_with``: public from that phase's start (a replaced file keeps its own release
    unless ``visibility`` or ``release_with`` is given)."""
    require_host(session, competition, user)
    check_name(name)
    visibility = check_visibility(visibility)
    phase = release_phase(competition, release_with)
    check_release(visibility, phase)
    key = f"datafiles/{competition.id}/{uuid.uuid4().hex}"
    blob = save_blob(source, key=key, settings=settings, max_bytes=settings.max_data_file_bytes)
    is_key = session.scalar(
        select(AnswerKey.id).where(
            AnswerKey.competition_id == competition.id, AnswerKey.sha256 == blob.sha256
        )
    )
    if is_key is not None:
        delete_blob(key, settings=settings)
        raise Unprocessable(
            "this file is the competition's answer key: answer keys are never published as data"
        )
    datafile = session.scalar(
        select(DataFile).where(DataFile.competition_id == competition.id, DataFile.name == name)
    )
    created = datafile is None
    before = None
    if datafile is None:
        datafile = DataFile(competition_id=competition.id, name=name, visibility=PUBLIC)
        session.add(datafile)
    else:
        before = {
            "sha256": datafile.sha256,
            "size_bytes": datafile.size_bytes,
            **_release_of(datafile),
        }
        old_key = datafile.storage_key
        after_commit(session, lambda: delete_blob(old_key, settings=settings))
    datafile.storage_key = blob.key
    datafile.size_bytes = blob.size
    datafile.sha256 = blob.sha256
    datafile.uploaded_by_id = user.id
    datafile.created_at = datetime.now(UTC)
    if visibility is not None or phase is not None:
        _set_release(datafile, visibility, phase)
    session.flush()
    record(
        session,
        competition=competition,
        actor=user,
        action="data_file_upload",
        target=name,
        before=before,
        after={"sha256": blob.sha256, "size_bytes": blob.size, **_release_of(datafile)},
    )
    return datafile, created


def check_release(visibility: str | None, phase: Phase | None) -> None:
    if phase is not None and visibility == HIDDEN:
        raise Unprocessable(
            "release_with: a hidden file is never released to participants; leave visibility "
            "out (or give 'public') to make it public when the phase starts",
            extra={"field": "release_with"},
        )


def _set_release(datafile: DataFile, visibility: str | None, phase: Phase | None) -> None:
    datafile.visibility = visibility or PUBLIC
    datafile.release_phase_id = phase.id if phase is not None else None
    datafile.release_phase = phase


def _release_of(datafile: DataFile) -> dict[str, str | None]:
    phase = datafile.release_phase
    return {"visibility": datafile.visibility, "release_with": phase.name if phase else None}


def change_release(
    session: Session,
    *,
    competition: Competition,
    name: str,
    user: User,
    visibility: str | None,
    release_with: str | None,
) -> DataFile:
    """A stored file made public now, hidden, or public from a phase's start, without sending
    its bytes again (audited)."""
    require_host(session, competition, user)
    datafile = get_file(session, competition=competition, user=user, name=name)
    visibility = check_visibility(visibility)
    phase = release_phase(competition, release_with)
    check_release(visibility, phase)
    before = _release_of(datafile)
    _set_release(datafile, visibility, phase)
    session.flush()
    record(
        session,
        competition=competition,
        actor=user,
        action="data_file_release",
        target=name,
        before=before,
        after=_release_of(datafile),
    )
    return datafile


def delete_file(
    session: Session, *, competition: Competition, name: str, user: User, settings: Settings
) -> None:
    require_host(session, competition, user)
    datafile = get_file(session, competition=competition, user=user, name=name)
    key = datafile.storage_key
    session.delete(datafile)
    session.flush()
    record(
        session,
        competition=competition,
        actor=user,
        action="data_file_delete",
        target=name,
        before={"sha256": datafile.sha256, "size_bytes": datafile.size_bytes},
    )
    after_commit(session, lambda: delete_blob(key, settings=settings))
