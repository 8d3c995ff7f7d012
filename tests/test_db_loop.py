"""Units of work on the event loop (app.db.LoopUnits): which servers take them, and an upload on
PostgreSQL through them, committed, counted and ended as on a worker thread, with no thread."""

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import pytest
from sqlalchemy import Engine, create_engine, event, func, select, text
from sqlalchemy.exc import OperationalError

from app.auth.service import create_user
from app.auth.token_reader import TokenReader
from app.config import Settings
from app.db import LoopUnits, loop_units, make_engine, make_session_factory, unit_of_work
from app.deps import LOOP_UPLOAD_MAX_BYTES
from app.jobs.queue import CeleryQueue, EagerQueue, ThreadQueue
from app.main import create_app
from app.models import Role, Submission, SubmissionStatus
from app.ops.unavailable import outage
from tests.asgi_client import TestClient
from tests.databases import ON_POSTGRESQL
from tests.helpers import PERFECT, ParkedQueue, ready_competition, submit

PG_URL = "postgresql+psycopg://someone@127.0.0.1:5432/podium"


def _factory(url: str):  # type: ignore[no-untyped-def]
    return make_session_factory(create_engine(url))


def test_only_a_postgresql_engine_with_local_files_and_a_queue_that_never_waits_takes_the_loop(
    tmp_path,
):
    factory = _factory(PG_URL)  # no connection is made: the engine is only looked at
    thread_queue = ThreadQueue(factory, Settings(env="test"))
    assert isinstance(loop_units(factory, local_storage=True, queue=thread_queue), LoopUnits)
    assert isinstance(loop_units(factory, local_storage=True, queue=ParkedQueue()), LoopUnits)
    # Files stored on S3 would be sent from the loop.
    assert loop_units(factory, local_storage=False, queue=thread_queue) is None
    # A broker, the scoring itself, or a queue that does not say: each may wait.
    assert CeleryQueue.waits and EagerQueue.waits
    assert loop_units(factory, local_storage=True, queue=EagerQueue(factory)) is None
    assert loop_units(factory, local_storage=True, queue=object()) is None
    # SQLite, and sessions bound to one connection (the tests' savepoints), keep the thread.
    sqlite = _factory(f"sqlite:///{tmp_path}/loop.db")
    assert loop_units(sqlite, local_storage=True, queue=thread_queue) is None
    engine = create_engine(PG_URL)
    bound = make_session_factory(engine)
    bound.kw["bind"] = engine.connect  # stands for a Connection: anything but an Engine
    assert loop_units(bound, local_storage=True, queue=thread_queue) is None


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_database_that_is_away_is_an_outage_not_a_crash():
    units = LoopUnits(create_engine(f"postgresql+psycopg://x@127.0.0.1:{_closed_port()}/none"))

    async def run() -> None:
        try:
            await units.run(lambda session: session.execute(text("SELECT 1")))
        finally:
            await units.close()

    with pytest.raises(OperationalError) as raised:
        asyncio.run(run())
    found = outage(raised.value)
    assert found is not None and found.extra["reason"] == "database_unreachable"


# --- an upload on PostgreSQL -------------------------------------------------------------------


@pytest.fixture
def postgres_server(fresh_database_url, tmp_path) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    settings = Settings(
        env="test", database_url=fresh_database_url, data_dir=tmp_path / "data", secret_key="k" * 32
    )
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    tokens = {}
    with unit_of_work(factory) as session:
        for name, role in (("host", Role.organiser), ("alice", Role.participant)):
            tokens[name] = create_user(
                session, name=name, role=role, secret_key=settings.secret_key
            )[1]
    queue = ParkedQueue()
    app = create_app(settings, session_factory=factory, scoring_queue=queue)
    yield {
        "app": app,
        "factory": factory,
        "queue": queue,
        "host": {"Authorization": f"Bearer {tokens['host']}"},
        "alice": {"Authorization": f"Bearer {tokens['alice']}"},
    }
    engine.dispose()


def _thread_hops(monkeypatch) -> list[object]:  # type: ignore[no-untyped-def]
    hops: list[object] = []
    real = anyio.to_thread.run_sync
    monkeypatch.setattr(
        anyio.to_thread, "run_sync", lambda *a, **k: hops.append(a) or real(*a, **k)
    )
    return hops


def _submissions(factory) -> list[Submission]:  # type: ignore[no-untyped-def]
    with factory() as session:
        return list(session.scalars(select(Submission).order_by(Submission.id)))


@ON_POSTGRESQL
def test_a_small_upload_is_one_unit_on_the_loop_with_no_thread(postgres_server, monkeypatch):
    server = postgres_server
    assert isinstance(server["app"].state.loop_units, LoopUnits)
    with TestClient(server["app"]) as client:
        ready_competition(client, server["host"])
        hops = _thread_hops(monkeypatch)
        answer = submit(client, server["alice"], PERFECT)
        assert answer.status_code == 202, answer.text
        assert hops == []  # not the handler, not the commit, not the session's end
        [row] = _submissions(server["factory"])
        assert row.id == answer.json()["id"] and row.status == SubmissionStatus.queued
        assert server["queue"].ids == [row.id]  # handed on after the commit

        # A file past the loop's size takes a worker thread, with the request's session.
        padding = b"\n" * (LOOP_UPLOAD_MAX_BYTES + 1)
        answer = submit(client, server["alice"], PERFECT + padding)
        assert answer.status_code == 202, answer.text
        assert len(hops) >= 1
        assert [s.id for s in _submissions(server["factory"])] == server["queue"].ids


@ON_POSTGRESQL
def test_a_refusal_on_the_loop_is_committed_and_an_error_leaves_nothing(postgres_server):
    server = postgres_server
    with TestClient(server["app"]) as client:
        ready_competition(client, server["host"])
        # A file at fault: answered 4xx, and kept in the team's history as failed.
        bad = submit(client, server["alice"], b"id,nope\na,1\n")
        assert bad.status_code == 422, bad.text
        [failed] = _submissions(server["factory"])
        assert failed.status == SubmissionStatus.failed and failed.error
        assert server["queue"].ids == []
        # Raised inside the unit (no such competition; a host competing): rolled back whole.
        assert submit(client, server["alice"], PERFECT, slug="nowhere").status_code == 404
        assert submit(client, server["host"], PERFECT).status_code == 403
        assert [s.id for s in _submissions(server["factory"])] == [failed.id]
        assert server["queue"].ids == []
        engine = server["app"].state.loop_units._engine
        assert engine is not None and engine.sync_engine.pool.checkedout() == 0


@ON_POSTGRESQL
def test_one_app_served_by_one_loop_after_another_makes_each_its_own_connections(
    postgres_server,
):
    server = postgres_server
    with TestClient(server["app"]) as client:
        ready_competition(client, server["host"])
        assert submit(client, server["alice"], PERFECT).status_code == 202
    with TestClient(server["app"]) as client:  # a new loop: the last one's connections are gone
        assert submit(client, server["alice"], PERFECT).status_code == 202
    assert len(_submissions(server["factory"])) == 2


@ON_POSTGRESQL
def test_a_small_upload_on_the_loop_costs_at_most_six_statements(postgres_server, monkeypatch):
    server = postgres_server
    with TestClient(server["app"]) as client:
        ready_competition(client, server["host"])
        assert submit(client, server["alice"], PERFECT).status_code == 202  # the team exists now
        statements: list[str] = []

        def count(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
            statements.append(" ".join(statement.split()))

        # Every engine's statements (the loop's own included), and the token reader's, which
        # talks to PostgreSQL without SQLAlchemy.
        read = TokenReader._read

        async def counted(self, connection, token_hash):  # type: ignore[no-untyped-def]
            statements.append("token read")
            return await read(self, connection, token_hash)

        monkeypatch.setattr(TokenReader, "_read", counted)
        event.listen(Engine, "before_cursor_execute", count)
        try:
            assert submit(client, server["alice"], PERFECT).status_code == 202
        finally:
            event.remove(Engine, "before_cursor_execute", count)
    assert statements.count("token read") == 1
    assert len(statements) <= 6, "\n".join(statements)
    with server["factory"]() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 2
