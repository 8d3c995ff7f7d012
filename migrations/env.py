"""Alembic environment: the URL given to :func:`app.migrate.upgrade`, else Podium's settings."""

from alembic import context
from sqlalchemy import Connection

import app.models  # noqa: F401  (registers the tables)
from app.config import get_settings
from app.db import Base, make_engine

target_metadata = Base.metadata


def run_migrations() -> None:
    url = context.config.get_main_option("sqlalchemy.url") or get_settings().database_url
    engine = make_engine(url)
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            # A batch migration copies a table and drops the old one; with foreign keys on, the
            # drop cascades into every child table (answer keys → scores, standings), so they are
            # off while the chain runs, as SQLite's own procedure for altering tables says. Set
            # on the driver's connection: the PRAGMA is a no-op inside a transaction.
            conn.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        _run(conn)
        conn.commit()
    engine.dispose()


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
