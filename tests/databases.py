"""Migrated databases for tests, made by copying one migrated template per process.

Running the Alembic chain takes 0.3-0.9 s of CPU (SQLite rebuilds a table for each batch
alteration), and the suite made a fresh migrated database hundreds of times: the per-test
databases of the concurrency tests, every server a test starts. The chain runs once per process
and backend here, into a template; each database after that is a copy: a file copy for SQLite,
``CREATE DATABASE … TEMPLATE`` for PostgreSQL (PostgreSQL copies the template's files too).
``tests/test_migrations.py`` still runs the chain itself, from empty and over old rows."""

import atexit
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from app.migrate import upgrade

SERVER_ENV = "PODIUM_TEST_DATABASE_URL"  # the server's own database, for CREATE and DROP

_sqlite_template: Path | None = None
_postgres_templates: dict[str, str] = {}  # server URL → the template database's name


def _template_file() -> Path:
    global _sqlite_template
    if _sqlite_template is None:
        folder = Path(tempfile.mkdtemp(prefix="podium-template-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        path = folder / "template.db"
        upgrade(f"sqlite:///{path}")
        _sqlite_template = path
    return _sqlite_template


def server_sql(server_url: str, *statements: str) -> None:
    """Run ``statements`` (CREATE or DROP DATABASE: no transaction) on the server's own
    database."""
    engine = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            for statement in statements:
                conn.execute(text(statement))
    finally:
        engine.dispose()


def postgres_template(server_url: str) -> str:
    """This process's migrated template on the server ``server_url`` reaches; made on first use,
    dropped when the process ends. Nothing stays connected to it (a template must be idle)."""
    name = _postgres_templates.get(server_url)
    if name is None:
        name = f"podium_template_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        server_sql(server_url, f'CREATE DATABASE "{name}"')
        upgrade(make_url(server_url).set(database=name).render_as_string(hide_password=False))
        _postgres_templates[server_url] = name

        atexit.register(server_sql, server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return name


def _is_empty(url: str) -> bool:
    engine = create_engine(url)
    try:
        return not inspect(engine).get_table_names()
    finally:
        engine.dispose()


def migrated(url: str) -> None:
    """Bring the new, empty database at ``url`` to the head revision, as ``upgrade(url)`` would:
    by a copy of the template where it is empty, else by running the chain over what is there."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database)
        if not path.exists() or path.stat().st_size == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(_template_file(), path)
            return
    elif parsed.get_backend_name() == "postgresql" and _is_empty(url):
        server = os.environ.get(SERVER_ENV) or parsed.set(database="postgres").render_as_string(
            hide_password=False
        )
        server_sql(
            server,
            f'DROP DATABASE "{parsed.database}" WITH (FORCE)',
            f'CREATE DATABASE "{parsed.database}" TEMPLATE "{postgres_template(server)}"',
        )
        return
    upgrade(url)
