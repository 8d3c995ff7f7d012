"""Request dependencies: the session (the one place that commits), the caller, the competition,
and the one authorization check for host-only routes (:data:`HostedCompetitionDep`)."""

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
import anyio.from_thread
import anyio.to_thread
from fastapi import Depends, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.auth.hosts import require_host
from app.auth.service import user_for_token
from app.auth.throttle import FailedAuthLimiter, client_address
from app.competitions.visibility import READ_METHODS, load_competition, require_writable
from app.config import Settings
from app.db import REQUEST_SLOT, run_after_commit, run_after_rollback
from app.errors import Forbidden, Unauthorized
from app.http.upload_guard import GUARDED_USER
from app.models import Competition, Submission, User
from app.models.types import RowId
from app.submissions.service import visible_submission


async def get_settings_dep(request: Request) -> Settings:
    # async: no thread hop for what needs no thread (FastAPI runs a plain def on a worker thread)
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


async def get_session(
    request: Request, _slot: Annotated[None, Depends(_database_slot, scope="function")]
) -> AsyncIterator[Session]:
    """The request's session, made on the event loop (a session touches the database only when
    first used) and committed or rolled back on a worker thread: one thread hop a request where
    a plain generator dependency took two. Both ends are shielded from cancellation: a request
    cancelled mid-handler (its client went away) is rolled back and closed, never left open."""
    session: Session = request.app.state.session_factory()
    session.info[REQUEST_SLOT] = _RequestSlot(request.app.state.database_slots)
    # The end never waits for a thread of the shared pool (a limiter of its own, as FastAPI's
    # contextmanager_in_threadpool does): with every pool thread taken by requests waiting on
    # this transaction's lock (SQLite's one writer), a commit queued behind them would wait
    # until their busy timeout, and they would answer 503 (tests/submissions/test_quota_race.py).
    end = anyio.CapacityLimiter(1)
    try:
        yield session
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_abandon, session, limiter=end)
        raise
    if session.info.get(_FINISHED):
        return  # committed by its handler, on the handler's thread (finish_here)
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(_finish, session, limiter=end)


# session.info: the unit of work was committed by finish_here (the dependency has nothing left).
_FINISHED = "finished"


def finish_here(session: Session) -> None:
    """End the request's unit of work now, as :func:`get_session` would after the handler: for a
    sync handler whose last step is its write (the upload route), on the worker thread it already
    runs on, where the dependency took one more thread hop for the commit (and its hand-offs of
    the GIL, the upload's costliest part under load). A failure here is the dependency's as
    well: rolled back, and raised to the error handlers."""
    _finish(session)
    session.info[_FINISHED] = True


def _finish(session: Session) -> None:
    try:
        session.commit()
    except BaseException:
        _abandon(session)
        raise
    session.close()
    run_after_commit(session)


def _abandon(session: Session) -> None:
    session.rollback()
    run_after_rollback(session)
    session.close()


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
# scope="function": commit before the response is sent, so a 202 always names a durable row.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]

_bearer = HTTPBearer(auto_error=False)


def _guarded_user(request: Request, session: Session) -> User | None:
    """The user the upload guard let in with this very Authorization header, if it did."""
    guarded = request.scope.get("state", {}).get(GUARDED_USER)
    if guarded is not None and guarded.authorization == request.headers.get("authorization"):
        # Checked a moment ago: no second query (a merge without loading does no I/O).
        return session.merge(guarded.user, load=False)
    return None


def get_current_user(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized("missing bearer token")
    if (guarded := _guarded_user(request, session)) is not None:
        return guarded
    return auth_limiter(request).attempt_token(
        client_address(request.scope),
        credentials.credentials,
        lambda: user_for_token(
            session, token=credentials.credentials, secret_key=settings.secret_key
        ),
    )


CurrentUser = Annotated[User, Depends(get_current_user)]


async def get_upload_user(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    """CurrentUser on the upload routes, where the upload guard has checked the token already:
    taken on the event loop, with no worker-thread hop (else as :func:`get_current_user`)."""
    if (guarded := _guarded_user(request, session)) is not None:
        return guarded
    return await run_in_threadpool(get_current_user, request, session, settings, credentials)


UploadUser = Annotated[User, Depends(get_upload_user)]


def get_optional_user(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User | None:
    """The caller where a token is optional (the public boards): None without one. A token that
    is given must be good: a wrong one is a 401, never a silent anonymous reader."""
    if credentials is None:
        if request.headers.get("authorization"):  # given, but not as "Bearer <token>"
            raise Unauthorized("the Authorization header must be 'Bearer <token>'")
        return None
    return get_current_user(request, session, settings, credentials)


# The caller or None, for what anyone may read (the public boards, a sample submission): a
# token given still counts (a draft's host).
OptionalUser = Annotated[User | None, Depends(get_optional_user)]


def get_organiser(user: CurrentUser) -> User:
    if not user.is_organiser:
        raise Forbidden("only organisers may create competitions")
    return user


# May create competitions; what they may do in a competition is for HostedCompetitionDep to say.
OrganiserUser = Annotated[User, Depends(get_organiser)]

# Every integer id in a path (API and web): bounded by app.models.types, so a number no row can
# have is a 422 before it reaches the database (where it would overflow).
IdPath = Annotated[RowId, Path(description="a positive id")]
# An id in a query string (``compare?a=&b=``).
IdQuery = Annotated[RowId, Query(description="a positive id")]


def get_competition(
    request: Request, slug: str, session: SessionDep, user: CurrentUser
) -> Competition:
    # The one visibility rule (a draft is its hosts' alone; an archived one takes no writes).
    return load_competition(session, slug, user, writing=request.method not in READ_METHODS)


CompetitionDep = Annotated[Competition, Depends(get_competition)]


def upload_competition(session: Session, slug: str, user: User) -> Competition:
    """What an upload reads of its competition (phases, keys, whether the uploader hosts it), in
    the one statement that loads it. Called by the upload route's handler on its own worker
    thread, not as a dependency of its own (which took a thread hop of its own)."""
    return load_competition(session, slug, user, writing=True, with_phases=True)


def get_public_competition(slug: str, session: SessionDep, user: OptionalUser) -> Competition:
    # The caller's token, if any, is checked first (a wrong one is a 401 before any 404); a
    # draft is still its hosts' alone (an anonymous reader is no host).
    return load_competition(session, slug, user)


# A competition anyone may read about (its public board), or 404.
PublicCompetitionDep = Annotated[Competition, Depends(get_public_competition)]


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
    # Another team's submission answers as a missing one does (one body): a 403 would tell an
    # id-walker which submissions exist. The submitting team, who may see it, hears 403.
    submission = visible_submission(session, submission_id=submission_id, user=user)
    require_host(session, submission.competition, user)
    if request.method not in READ_METHODS:
        require_writable(submission.competition)  # an archived competition's are read-only
    return submission


# A submission in a competition the caller hosts; 403 for its own team, else 404.
HostedSubmissionDep = Annotated[Submission, Depends(get_hosted_submission)]
