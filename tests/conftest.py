"""Test fixtures: a database built by the Alembic migrations (SQLite and PostgreSQL), one
transaction per test rolled back afterwards, and an app whose scoring runs eagerly."""

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NoReturn

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from app.auth.service import create_user
from app.config import Settings
from app.db import make_engine
from app.main import create_app
from app.migrate import upgrade
from app.models import Role

POSTGRES_ENV = "PODIUM_TEST_DATABASE_URL"


def _throwaway_postgres() -> Iterator[str]:
    """A throw-away database on the server PODIUM_TEST_DATABASE_URL points at."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{POSTGRES_ENV} must be set when CI=true: PostgreSQL tests may not skip")
        pytest.skip(
            f"PostgreSQL tests need {POSTGRES_ENV}, e.g. postgresql+psycopg://postgres@127.0.0.1/postgres"
        )
    name = f"podium_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    yield from _throwaway_postgres()


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_database_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A migrated database of its own, committed to for real: for tests of concurrency."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/fresh.db"
        upgrade(url)
        yield url
        return
    for url in _throwaway_postgres():
        upgrade(url)
        yield url


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('sqlite')}/podium.db"
    return request.getfixturevalue("postgres_url")


@pytest.fixture(scope="session")
def engine(database_url: str) -> Iterator[Engine]:
    upgrade(database_url)
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def connection(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            yield conn
        finally:
            transaction.rollback()


@pytest.fixture
def session_factory(connection: Connection) -> sessionmaker[Session]:
    # Every commit inside the test becomes a savepoint of the one outer transaction.
    return sessionmaker(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )


@pytest.fixture
def settings(tmp_path) -> Settings:  # type: ignore[no-untyped-def]
    return Settings(
        env="test",
        database_url="sqlite://",  # unused: the app gets the test's session factory
        data_dir=tmp_path / "data",
        secret_key="test-secret-key",
        scoring_backend="eager",
        uploads_per_minute=10_000,  # the rate limit's own tests set theirs
    )


@pytest.fixture
def client(settings: Settings, session_factory: sessionmaker[Session]) -> Iterator[TestClient]:
    app = create_app(settings, session_factory=session_factory)
    with TestClient(app) as test_client:
        yield test_client


@dataclass
class Caller:
    name: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture
def make_user(session_factory: sessionmaker[Session], settings: Settings) -> Callable[..., Caller]:
    def make(name: str, *, organiser: bool = False, admin: bool = False) -> Caller:
        role = Role.admin if admin else Role.organiser if organiser else Role.participant
        with session_factory() as session:
            _user, token = create_user(
                session,
                name=name,
                role=role,
                secret_key=settings.secret_key,
            )
            session.commit()
        return Caller(name=name, token=token)

    return make


@pytest.fixture
def host(make_user: Callable[..., Caller]) -> Caller:
    return make_user("host", organiser=True)


@pytest.fixture
def alice(make_user: Callable[..., Caller]) -> Caller:
    return make_user("alice")


@pytest.fixture
def bob(make_user: Callable[..., Caller]) -> Caller:
    return make_user("bob")


def skip_or_fail(reason: str) -> NoReturn:
    """Skip a test whose tool, service or privilege is missing here; under CI=true fail instead,
    as the PostgreSQL and Redis fixtures above do: CI runs every test or says why it could not."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this test may not skip)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
