"""The request session (app.deps.get_session): made on the event loop, committed or rolled back on
one worker-thread hop, and never left open, even when the request is cancelled mid-way."""

import asyncio
from collections.abc import AsyncGenerator
from types import SimpleNamespace

import anyio
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.auth.service import create_user
from app.db import make_engine
from app.deps import finish_here, get_session
from app.models import Role, User
from tests.databases import migrated


@pytest.fixture
def factory(tmp_path) -> sessionmaker[Session]:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path}/deps.db"
    migrated(url)
    return sessionmaker(make_engine(url), expire_on_commit=False)


def _request(factory: sessionmaker[Session]) -> SimpleNamespace:
    state = SimpleNamespace(session_factory=factory, database_slots=asyncio.Semaphore(1))
    return SimpleNamespace(app=SimpleNamespace(state=state))


def _users(factory: sessionmaker[Session]) -> int:
    with factory() as session:
        return session.scalar(select(func.count()).select_from(User)) or 0


async def _handler_wrote(
    factory: sessionmaker[Session], ran: list[str]
) -> tuple[AsyncGenerator[Session, None], Session]:
    """The dependency opened as FastAPI opens it, with what a handler left in its session: a
    new user (written on a worker thread, as handlers run) and an after-commit hook."""
    dependency = get_session(_request(factory), None)  # type: ignore[arg-type]
    session = await anext(dependency)

    def add() -> None:
        create_user(session, name="alice", role=Role.participant, secret_key="k" * 32)
        session.flush()

    await anyio.to_thread.run_sync(add)
    session.info.setdefault("after_commit", []).append(lambda: ran.append("hook"))
    return dependency, session


@pytest.mark.parametrize("finished_by_handler", [False, True], ids=["dependency", "finish_here"])
def test_what_the_handler_wrote_is_committed_once_and_the_after_commit_hooks_run(
    factory, monkeypatch, finished_by_handler
):
    # With finish_here (the upload route) the handler commits on its own worker thread: the
    # dependency then takes no thread hop of its own, and nothing is committed or hooked twice.
    ran: list[str] = []
    hops: list[object] = []

    async def request() -> Session:
        dependency, session = await _handler_wrote(factory, ran)
        if finished_by_handler:
            await anyio.to_thread.run_sync(finish_here, session)
            assert _users(factory) == 1 and ran == ["hook"]  # before the dependency ends
        real = anyio.to_thread.run_sync
        monkeypatch.setattr(
            anyio.to_thread, "run_sync", lambda *a, **k: hops.append(a) or real(*a, **k)
        )
        with pytest.raises(StopAsyncIteration):
            await anext(dependency)
        return session

    session = anyio.run(request)
    assert _users(factory) == 1
    assert ran == ["hook"]
    assert len(hops) == (0 if finished_by_handler else 1)
    assert not session.in_transaction()


def test_a_failed_handler_leaves_nothing_and_no_hook_runs(factory):
    ran: list[str] = []

    async def request() -> Session:
        dependency, session = await _handler_wrote(factory, ran)
        with pytest.raises(ValueError, match="handler failed"):
            await dependency.athrow(ValueError("handler failed"))
        return session

    session = anyio.run(request)
    assert _users(factory) == 0
    assert ran == []
    assert not session.in_transaction()


def test_a_request_cancelled_mid_handler_is_rolled_back_not_left_open(factory):
    """The client went away: the cancellation reaches the dependency inside a cancelled scope,
    where an unshielded await would end at once and leave the transaction (and SQLite's one
    writer lock) open."""

    ran: list[str] = []

    async def request() -> Session:
        dependency, session = await _handler_wrote(factory, ran)
        with anyio.CancelScope() as scope:
            scope.cancel()
            with pytest.raises(anyio.get_cancelled_exc_class()):
                await dependency.athrow(anyio.get_cancelled_exc_class()())
        return session

    session = anyio.run(request)
    assert not session.in_transaction()
    assert _users(factory) == 0
    assert ran == []
