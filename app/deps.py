"""Request dependencies: the session (the one place that commits), the caller, the competition,
and the one authorization check for host-only routes (:data:`HostedCompetitionDep`)."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Annotated

import anyio.from_thread
from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.auth.hosts import require_host
from app.auth.service import user_for_token
from app.auth.throttle import FailedAuthLimiter, client_address
from app.competitions.visibility import READ_METHODS, load_competition, require_writable
from app.config import Settings
from app.db import REQUEST_SLOT, run_after_commit
from app.errors import Forbidden, NotFound, Unauthorized
from app.models import Competition, Submission, User


def get_settings_dep(request: Request) -> Settings:
    return request.app.state.settings


def auth_limiter(request: Request) -> FailedAuthLimiter:
    return request.app.state.auth_limiter


async def _database_slot(request: Request) -> AsyncIterator[None]:
    """Admit a bounded number of requests to the database at once.

    A request's transaction spans several worker-thread hops (dependencies, handler, commit).
    Were more requests inside their transactions than there are threads and connections, a lock
    holder could wait for a thread that every lock waiter occupies. Waiting here costs no thread.
    SQLite takes one request at a time: it has one writer anyway.
    """
    async with request.app.state.database_slots:
        yield


class _RequestSlot:
    """The slot taken by :func:`_database_slot`, given back and taken again from the handler's
    worker thread while its unit of work pauses (``app.db.no_transaction``)."""

    def __init__(self, slots: asyncio.Semaphore) -> None:
        self._slots = slots

    def release(self) -> None:
        anyio.from_thread.run_sync(self._slots.release)

    def acquire(self) -> None:
        anyio.from_thread.run(self._slots.acquire)


def get_session(
    request: Request, _slot: Annotated[None, Depends(_database_slot, scope="function")]
) -> Iterator[Session]:
    session: Session = request.app.state.session_factory()
    session.info[REQUEST_SLOT] = _RequestSlot(request.app.state.database_slots)
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        session.info.pop("after_commit", None)
        session.close()
        raise
    session.close()
    run_after_commit(session)


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
# scope="function": commit before the response is sent, so a 202 always names a durable row.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]

_bearer = HTTPBearer(auto_error=False)


def get_current_user(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized("missing bearer token")
    return auth_limiter(request).attempt(
        client_address(request.scope),
        lambda: user_for_token(
            session, token=credentials.credentials, secret_key=settings.secret_key
        ),
    )


CurrentUser = Annotated[User, Depends(get_current_user)]


def get_optional_user(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User | None:
    """The caller of a route that needs no token: None without one, checked like any if given."""
    if credentials is None:
        return None
    return get_current_user(request, session, settings, credentials)


# Routes open without a token (a sample submission): a token given still counts (a draft's host).
OptionalUser = Annotated[User | None, Depends(get_optional_user)]


def get_organiser(user: CurrentUser) -> User:
    if not user.is_organiser:
        raise Forbidden("only organisers may create competitions")
    return user


# May create competitions; what they may do in a competition is for HostedCompetitionDep to say.
OrganiserUser = Annotated[User, Depends(get_organiser)]

# Every integer id in a path: ids are 32-bit on PostgreSQL, so a bigger number can name nothing
# and is refused before it reaches the database (where it would overflow).
MAX_ID = 2**31 - 1
IdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="a positive id")]


def get_competition(
    request: Request, slug: str, session: SessionDep, user: CurrentUser
) -> Competition:
    # The one visibility rule (a draft is its hosts' alone; an archived one takes no writes).
    return load_competition(session, slug, user, writing=request.method not in READ_METHODS)


CompetitionDep = Annotated[Competition, Depends(get_competition)]


def get_hosted_competition(
    competition: CompetitionDep, session: SessionDep, user: CurrentUser
) -> Competition:
    require_host(session, competition, user)
    return competition


# A competition the caller hosts (owner, co-host or site admin), or 403.
HostedCompetitionDep = Annotated[Competition, Depends(get_hosted_competition)]


def get_hosted_submission(
    request: Request, submission_id: IdPath, session: SessionDep, user: CurrentUser
) -> Submission:
    submission = session.get(Submission, submission_id)
    if submission is None:
        raise NotFound(f"no submission {submission_id}")
    require_host(session, submission.competition, user)
    if request.method not in READ_METHODS:
        require_writable(submission.competition)  # an archived competition's are read-only
    return submission


# A submission in a competition the caller hosts, or 404 / 403.
HostedSubmissionDep = Annotated[Submission, Depends(get_hosted_submission)]
