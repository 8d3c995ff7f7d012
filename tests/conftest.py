"""Test fixtures: a database built by the Alembic migrations (SQLite and PostgreSQL), one
transaction per test rolled back afterwards, and an app whose scoring runs eagerly.

The suite runs in parallel (pytest-xdist): every worker makes its own throw-away databases and
its own Redis database, and a module's tests run on one worker (``--dist loadfile``), so a
module-scoped server or browser starts once and a module's tests keep their order. The tiers'
markers (``browser``, ``postgres``, ``redis``, ``slow``) are given here, from the fixtures a test
uses and the module it is in, so that ``make test-fast`` can leave them out; a test that starts a
process in an otherwise quick module carries ``@pytest.mark.slow`` itself."""

import functools
import gc
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

# Before the app is imported, and inherited by every server and process the tests start: password
# hashes at Argon2's smallest cost (app.auth.passwords), not 0.2 s of CPU a sign-in.
os.environ.setdefault("PODIUM_ENV", "test")
# Rank bands refreshed after every score that moves a board, not paced to one refresh per key
# version every 2 s: the pacing is kept per process by key id, and the tests' databases reuse
# ids, so one test's refresh would defer the next test's. Its own tests turn it back on
# (tests/jobs/test_bands_pacing.py).
os.environ.setdefault("PODIUM_BANDS_EVERY_SECONDS", "0")

import pytest
from sqlalchemy import Connection, Engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from app.auth.service import create_user
from app.config import Settings
from app.db import make_engine
from app.main import create_app
from app.migrate import upgrade
from app.models import Role
from tests.asgi_client import TestClient
from tests.databases import migrated, postgres_template, server_sql

POSTGRES_ENV = "PODIUM_TEST_DATABASE_URL"
REDIS_ENV = "PODIUM_TEST_REDIS_URL"
TESTS = Path(__file__).resolve().parent

# Modules whose tests start real processes (uvicorn servers, jailed metric runs, the CLI in a
# subprocess) or drive big inputs: they stay in the full suite and out of `make test-fast`.
SLOW_MODULES = frozenset(
    {
        "accounts/test_oidc.py",
        "bundles/test_ingestion.py",
        "bundles/test_program_scoring.py",
        "cli/test_attack.py",
        "cli/test_commands.py",
        "cli/test_demo.py",
        "cli/test_first_run.py",
        "client/test_host_cli.py",
        "http/test_body_limits.py",
        "http/test_proxy_headers.py",
        "http/test_slow_clients.py",
        "client/test_participant_cli.py",
        "client/test_term_cli.py",
        "client/test_reproduce_cli.py",
        "coderun/test_reproduce.py",
        "coderun/test_code_scoring.py",
        "coderun/test_coderun_jail.py",
        "custom_metrics/test_custom_metric_jail.py",
        "custom_metrics/test_custom_metric_processes.py",
        "custom_metrics/test_custom_metric_sandbox.py",
        "custom_metrics/test_custom_metric_inputs.py",
        "competitions/test_custom_metric_api.py",
        "competitions/test_key_upload_outside_transaction.py",
        "jail/test_jail_filesystems.py",
        "jobs/test_code_worker.py",
        "jobs/test_faults.py",
        "jobs/test_server_while_scoring.py",
        "kaggle/test_official_client.py",
        "ops/test_ops.py",
        "security/test_abuse.py",
        "shared/test_three_processes.py",
        "simulation/test_agent_jail.py",
        "simulation/test_episode_crash.py",
        "simulation/test_host_environment.py",
        "simulation/test_simulation_phase.py",
        # Statistical simulations of the honest boards' engine (coverage of intervals, the
        # level of a test, the boosting attack over many boards): 60 s of the fast tier's
        # worker time between them, for code that seldom changes.
        "honest/engine/test_bootstrap.py",
        "honest/engine/test_compare.py",
        "honest/engine/test_ladder.py",
        "honest/engine/test_shakeup.py",
    }
)
BROWSER_MODULES = frozenset({"web/test_browser.py", "web/test_browser_csp.py"})
# Quick enough for `make test-fast`, but among the suite's longest modules (10 s and more in a
# full run): handed out right after the slow ones, so that no long module is left for last.
# Only the order depends on this list.
LONG_MODULES = frozenset(
    {
        "ledger/test_record.py",
        "ledger/test_verify_cli.py",
        "leaderboard/test_pages.py",
        "competitions/test_hosts.py",
        "storage/test_s3.py",
        "auth/test_failed_auth_limit.py",
        "web/test_phase_pages.py",
        "competitions/test_phases.py",
        "honest/board/test_api.py",
        "honest/analysis/test_rounding.py",
        "jobs/test_jobs.py",
        "web/test_wizard_phases.py",
        "teams/test_merge.py",
        "web/test_web_flows.py",
        "web/test_cohosts.py",
        "test_path_ids.py",
        "leaderboard/test_api.py",
        "leaderboard/test_benchmark.py",
        "jobs/test_score_batch.py",
        "shared/test_stores.py",
        "test_migrations.py",
        "web/test_wizard.py",
        "metrics/test_text.py",
    }
)


def _worker_index() -> int:
    """0 outside xdist, else the number of this worker (``gw3`` is 3)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


def _uses_postgres(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    return (
        "postgres_url" in item.fixturenames
        or params.get("database_url") == "postgresql"
        or params.get("fresh_database_url") == "postgresql"
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (every test module, item and parameter) lives until the run ends:
    frozen, the cyclic collector stops walking it. With the first collection of each generation
    put off longer, it ran a tenth as often: in `make test-fast` it took 20 of the workers' 260
    CPU-seconds (gen-2 passes of 0.2 s over what the suite keeps, 25 a worker)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.resolve().relative_to(TESTS).as_posix()
        if module in BROWSER_MODULES or "chromium" in item.fixturenames:
            item.add_marker(pytest.mark.browser)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        if _uses_postgres(item):
            item.add_marker(pytest.mark.postgres)
        if "redis_url" in item.fixturenames:
            item.add_marker(pytest.mark.redis)
    items[:] = _heavy_modules_first(items)


def _heavy_modules_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The modules that start processes or a browser first, then the long ones
    (:data:`LONG_MODULES`), then the rest, each module's tests kept together and in their order.
    pytest-xdist hands out modules in this order as workers free up: long modules last would
    leave one core working through them while the other idles (a fifth of the suite's time went
    so when ``tests/web/`` came last)."""
    heavy = {
        item.path
        for item in items
        if item.get_closest_marker("slow") or item.get_closest_marker("browser")
    }
    first_seen: dict[Path, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(item.path, index)

    def rank(item: pytest.Item) -> tuple[int, int]:
        if item.path in heavy:
            return 0, first_seen[item.path]
        long = item.path.relative_to(TESTS).as_posix() in LONG_MODULES
        return 1 if long else 2, first_seen[item.path]

    return sorted(items, key=rank)


def _throwaway_postgres(*, migrated: bool = False) -> Iterator[str]:
    """A throw-away database on the server PODIUM_TEST_DATABASE_URL points at: empty, or
    ``migrated`` (a copy of this process's migrated template, :mod:`tests.databases`)."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{POSTGRES_ENV} must be set when CI=true: PostgreSQL tests may not skip")
        pytest.skip(
            f"PostgreSQL tests need {POSTGRES_ENV}, e.g. postgresql+psycopg://postgres@127.0.0.1/postgres"
        )
    name = f"podium_test_{uuid.uuid4().hex[:12]}"
    template = f' TEMPLATE "{postgres_template(base)}"' if migrated else ""
    server_sql(base, f'CREATE DATABASE "{name}"{template}')
    try:
        yield make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        server_sql(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _fastapi_callable_caches() -> list[Callable[[], None]]:
    import fastapi.dependencies.models
    import fastapi.dependencies.utils

    modules = (fastapi.dependencies.models, fastapi.dependencies.utils)
    found = (getattr(module, name) for module in modules for name in dir(module))
    return [cache.cache_clear for cache in found if isinstance(cache, functools._lru_cache_wrapper)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """Let each test's apps go. FastAPI keeps up to 4096 endpoint callables in lru_caches of its
    own; the suite's route closures hold their app, so a run kept a few hundred apps alive (4 GB
    by the end, and every full collection walked them all)."""
    yield
    for cache_clear in _fastapi_callable_caches():
        cache_clear()


@pytest.fixture
def redis_url() -> str:
    """PODIUM_TEST_REDIS_URL with this xdist worker's own database number, emptied: workers'
    Celery queues and results never meet (gw0 gets the configured number, gw1 the one below)."""
    base = os.environ.get(REDIS_ENV)
    if not base:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{REDIS_ENV} must be set when CI=true")
        pytest.skip(f"the Celery tests need {REDIS_ENV}, e.g. redis://127.0.0.1:6379/15")
    import redis

    parts = urlsplit(base)
    configured = int(parts.path.strip("/") or 0)
    url = urlunsplit(parts._replace(path=f"/{(configured - _worker_index()) % 16}"))
    redis.Redis.from_url(url).flushdb()
    return url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    yield from _throwaway_postgres()


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_database_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A migrated database of its own, committed to for real: for tests of concurrency."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/fresh.db"
        migrated(url)
        yield url
        return
    yield from _throwaway_postgres(migrated=True)


# The session's two databases, each migrated once. pytest tears a session-scoped fixture down
# whenever the next test asks for its other parameter, which happens at least once a module (the
# tests run module by module, a module's SQLite tests and then its PostgreSQL ones): migrating
# again each time was an eighth of the suite's CPU.
_MIGRATED: set[str] = set()


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.getbasetemp()}/podium.db"
    return request.getfixturevalue("postgres_url")


@pytest.fixture(scope="session")
def engine(database_url: str) -> Iterator[Engine]:
    if database_url not in _MIGRATED:
        upgrade(database_url)
        _MIGRATED.add(database_url)
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


def app_settings(data_dir: Path) -> Settings:
    return Settings(
        env="test",
        database_url="sqlite://",  # unused: the app gets the test's session factory
        data_dir=data_dir,
        secret_key="test-secret-key",
        scoring_backend="eager",
        uploads_per_minute=10_000,  # the rate limit's own tests set theirs
    )


@pytest.fixture
def settings(tmp_path) -> Settings:  # type: ignore[no-untyped-def]
    return app_settings(tmp_path / "data")


@pytest.fixture
def client(settings: Settings, session_factory: sessionmaker[Session]) -> Iterator[TestClient]:
    app = create_app(settings, session_factory=session_factory)
    with TestClient(app) as test_client:
        yield test_client


def another_client(running: TestClient, /, **kwargs: Any) -> TestClient:
    """A second client of ``running``'s app (its own cookies, or another ``client`` address),
    served by that app's event loop as a second connection to a server is. A TestClient that is
    not entered starts a new event loop, in a new thread, for every request it sends: most of the
    time of a test that sends hundreds."""
    other = TestClient(running.app, **kwargs)
    other.portal = running.portal
    return other


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
