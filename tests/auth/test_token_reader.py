"""The upload guard's token read on the event loop (app.auth.token_reader): the user the ORM's
read gives, nobody for a wrong or revoked token, a connection the server dropped replaced without
the caller noticing, an unreachable server a 503 and not a 500, and the worker-thread read kept
where the reader cannot see what the session sees."""

from collections.abc import Iterator

import anyio
import psycopg
import pytest
from sqlalchemy import Engine, inspect, text
from sqlalchemy.orm import Session, sessionmaker

from app.auth.service import create_user, revoke_tokens, user_for_token
from app.auth.token_reader import TokenReader, token_reader
from app.auth.tokens import hash_token
from app.db import make_engine, make_session_factory, unit_of_work
from app.main import create_app
from app.models import Role, User
from app.ops.unavailable import outage
from tests.asgi_client import TestClient
from tests.helpers import API

SECRET = "k" * 32


# A migrated PostgreSQL database of its own, committed to for real: the reader has connections
# of its own, which would not see a test's uncommitted rows.
ON_POSTGRESQL = pytest.mark.parametrize("fresh_database_url", ["postgresql"], indirect=True)


@pytest.fixture
def engine(fresh_database_url: str) -> Iterator[Engine]:
    engine = make_engine(fresh_database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def factory(engine: Engine) -> sessionmaker[Session]:
    return make_session_factory(engine)


def _new_user(
    factory: sessionmaker[Session], name: str, role: Role, secret: str = SECRET
) -> tuple[int, str]:
    with unit_of_work(factory) as session:
        user, token = create_user(session, name=name, role=role, secret_key=secret)
        session.flush()
        return user.id, token


def _read(reader: TokenReader, token: str) -> User | None:
    async def read() -> User | None:
        return await reader.user(hash_token(token, secret_key=SECRET))

    return anyio.run(read)


def _columns(user: User) -> dict[str, object]:
    return {attribute.key: getattr(user, attribute.key) for attribute in inspect(User).column_attrs}


@ON_POSTGRESQL
def test_the_reader_gives_the_user_the_orms_read_gives(factory, engine):
    user_id, token = _new_user(factory, "alice", Role.organiser)
    reader = TokenReader(engine)
    found = _read(reader, token)
    with factory() as session:
        expected = user_for_token(session, token=token, secret_key=SECRET)
        assert found is not None and _columns(found) == _columns(expected)
        assert found.role is Role.organiser and found.created_at.tzinfo is not None
        # Detached and loaded: a session takes it without a query, as the guard's user was.
        assert inspect(found).detached and not inspect(found).expired_attributes
        assert session.merge(found, load=False).id == user_id


@ON_POSTGRESQL
def test_a_wrong_or_revoked_token_is_nobodys(factory, engine):
    _user_id, token = _new_user(factory, "bob", Role.participant)
    reader = TokenReader(engine)
    assert _read(reader, token) is not None
    assert _read(reader, "pdm_" + "x" * 40) is None
    with unit_of_work(factory) as session:
        user = user_for_token(session, token=token, secret_key=SECRET)
        assert revoke_tokens(session, user=user) == 1
    assert _read(reader, token) is None  # at once: nothing is cached


def _reader_backends(reader: TokenReader) -> list[int]:
    idle = reader._idle
    assert idle is not None
    return [c.info.backend_pid for c in list(idle._queue) if c is not None and not c.closed]  # type: ignore[attr-defined]


@ON_POSTGRESQL
def test_a_connection_the_server_dropped_is_replaced_without_the_caller_noticing(factory, engine):
    _user_id, token = _new_user(factory, "carol", Role.participant)
    reader = TokenReader(engine, connections=1)

    async def twice() -> tuple[User | None, User | None, int, int]:
        first = await reader.user(hash_token(token, secret_key=SECRET))
        [before] = _reader_backends(reader)
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT pg_terminate_backend(:p)"), {"p": before})
        second = await reader.user(hash_token(token, secret_key=SECRET))
        [after] = _reader_backends(reader)
        await reader.close()
        return first, second, before, after

    first, second, before, after = anyio.run(twice)
    assert first is not None and second is not None and first.id == second.id
    assert after != before


@ON_POSTGRESQL
def test_the_reader_serves_one_event_loop_after_another(factory, engine):
    # An app served by one test client after another: a loop's connections stay with it.
    _user_id, token = _new_user(factory, "dora", Role.participant)
    reader = TokenReader(engine)
    assert _read(reader, token) is not None
    assert _read(reader, token) is not None


def test_an_unreachable_server_is_an_outage_not_a_crash():
    dead = make_engine("postgresql+psycopg://postgres@127.0.0.1:1/podium?connect_timeout=2")
    reader = TokenReader(dead)
    with pytest.raises(psycopg.OperationalError) as raised:
        _read(reader, "pdm_anything")
    refusal = outage(raised.value)
    assert refusal is not None and refusal.extra["reason"] == "database_unreachable"


def test_an_upload_to_an_unreachable_database_answers_503(settings):
    dead = make_engine("postgresql+psycopg://postgres@127.0.0.1:1/podium?connect_timeout=2")
    app = create_app(settings, session_factory=make_session_factory(dead))
    assert app.state.token_reader is not None
    with TestClient(app) as client:
        response = client.post(
            f"{API}/competitions/any/submissions",
            headers={"Authorization": "Bearer pdm_x"},
            files={"file": ("s.csv", b"id,target\n1,0\n")},
        )
    assert response.status_code == 503, response.text
    assert response.json()["reason"] == "database_unreachable"


@ON_POSTGRESQL
def test_an_upload_is_authenticated_by_the_reader_on_a_postgresql_engine(settings, factory):
    _user_id, token = _new_user(factory, "erin", Role.participant, settings.secret_key)
    app = create_app(settings, session_factory=factory)
    seen: list[str] = []
    real = app.state.token_reader.user

    async def user(token_hash: str) -> User | None:
        seen.append(token_hash)
        return await real(token_hash)

    app.state.token_reader.user = user
    with TestClient(app) as client:
        # Nobody hosts "missing": the reader let the uploader in, the route answers 404.
        upload = client.post(
            f"{API}/competitions/missing/submissions",
            headers={"Authorization": f"Bearer {token}"},
            files={"file": ("s.csv", b"id,target\n1,0\n")},
        )
        wrong = client.post(
            f"{API}/competitions/missing/submissions",
            headers={"Authorization": "Bearer pdm_wrong"},
            files={"file": ("s.csv", b"id,target\n1,0\n")},
        )
    assert upload.status_code == 404, upload.text
    assert wrong.status_code == 401
    assert seen == [
        hash_token(token, secret_key=settings.secret_key),
        hash_token("pdm_wrong", secret_key=settings.secret_key),
    ]


@ON_POSTGRESQL
def test_sqlite_and_a_connection_bound_session_keep_the_thread_read(tmp_path, engine):
    url = f"sqlite:///{tmp_path}/reader.db"
    assert token_reader(make_session_factory(make_engine(url))) is None
    with engine.connect() as connection:
        # The tests' savepoint sessions: the reader could not see their uncommitted rows.
        assert token_reader(sessionmaker(bind=connection)) is None
    assert token_reader(make_session_factory(engine)) is not None
