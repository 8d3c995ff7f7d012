"""The upload guard's token check on the event loop, for a server on PostgreSQL.

Every upload's token is read before its body (:mod:`app.http.upload_guard`). On a worker thread
that read cost a thread hop and, under load, a dozen hand-offs of the GIL for its one round trip
(the thread waits for the GIL again after the socket answers, against the event loop and every
other worker): bench/bench_upload.py measured 11 % of an upload's server CPU. Here the event loop
sends the query itself (psycopg's asyncio connections) and no thread is involved.

The statement is :func:`app.auth.service.user_by_token`, compiled once for PostgreSQL, and the
row becomes a detached :class:`~app.models.User` with its columns loaded, as the ORM's own read
gave it; the route's session takes it without a query. A few autocommit connections of their own
(:data:`CONNECTIONS`), made when first needed; waiting for one costs no thread. A connection the
server dropped (a restart, an idle timeout) fails its read once and is replaced: the read is
tried again on a new one. The server unreachable raises :class:`psycopg.OperationalError`, which
the guard answers 503 (:func:`app.ops.unavailable.outage`).

SQLite, and a session factory bound to one connection (the tests' savepoint sessions), keep the
worker-thread read: :func:`token_reader` gives None for them.
"""

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import psycopg
from sqlalchemy import Engine
from sqlalchemy import inspect as inspect_model
from sqlalchemy.orm import Session, make_transient_to_detached, sessionmaker

from app.auth.service import user_by_token
from app.models import User

log = logging.getLogger(__name__)

# Token reads in flight at once in one process; more wait on the loop for a connection.
CONNECTIONS = 4
# Bounds on the server: a connection that takes longer to open, or a read longer to answer,
# fails (503) rather than holding its request, and everyone queued behind it, for ever.
CONNECT_TIMEOUT_SECONDS = 5
STATEMENT_TIMEOUT_MS = 5000


class TokenReader:
    """``await reader.user(token_hash)``: the user holding that live token, or None."""

    def __init__(self, engine: Engine, *, connections: int = CONNECTIONS) -> None:
        dialect = engine.dialect
        # The engine's own connection parameters, with the bounds above added.
        args, kwargs = dialect.create_connect_args(engine.url)
        options = [kwargs.pop("options", ""), f"-c statement_timeout={STATEMENT_TIMEOUT_MS}"]
        kwargs.setdefault("connect_timeout", CONNECT_TIMEOUT_SECONDS)
        self._connect_args: tuple[list[Any], dict[str, Any]] = (
            list(args),
            {**kwargs, "autocommit": True, "options": " ".join(filter(None, options))},
        )
        compiled = user_by_token().compile(dialect=dialect)
        self._sql = str(compiled)
        # Each column as the ORM would read it (the role's enum, the UTC timestamp's zone).
        mapper = inspect_model(User)
        self._fields: list[tuple[str, Callable[[Any], Any] | None]] = []
        for column in compiled.statement.selected_columns:
            attribute = mapper.get_property_by_column(column)
            self._fields.append((attribute.key, column.type.result_processor(dialect, None)))
        self._size = connections
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle: asyncio.LifoQueue[psycopg.AsyncConnection[Any] | None] | None = None

    async def user(self, token_hash: str) -> User | None:
        idle = self._connections()
        connection = await idle.get()
        try:
            reused = connection is not None and not connection.closed
            try:
                connection, row = await self._read(connection, token_hash)
            except psycopg.OperationalError:
                connection = None
                if not reused:
                    raise
                # Dropped by the server while it waited here: once more, on a new connection.
                connection, row = await self._read(None, token_hash)
        finally:
            idle.put_nowait(connection)
        return None if row is None else self._detached_user(row)

    async def _read(
        self, connection: psycopg.AsyncConnection[Any] | None, token_hash: str
    ) -> tuple[psycopg.AsyncConnection[Any] | None, tuple[Any, ...] | None]:
        if connection is None or connection.closed:
            args, kwargs = self._connect_args
            connection = await psycopg.AsyncConnection.connect(*args, **kwargs)
        try:
            cursor = await connection.execute(self._sql, {"token_hash": token_hash})
            return connection, await cursor.fetchone()
        except BaseException:
            await _close(connection)
            raise

    def _detached_user(self, row: tuple[Any, ...]) -> User:
        user = User(
            **{
                key: value if process is None else process(value)
                for (key, process), value in zip(self._fields, row, strict=True)
            }
        )
        make_transient_to_detached(user)  # loaded and clean, as a closed session leaves it
        return user

    def _connections(self) -> "asyncio.LifoQueue[psycopg.AsyncConnection[Any] | None]":
        """This loop's connections. An app served by one loop after another (a test client per
        test) starts afresh on each: an asyncio connection belongs to the loop that made it."""
        loop = asyncio.get_running_loop()
        if self._idle is None or self._loop is not loop:
            self._loop = loop
            self._idle = asyncio.LifoQueue()
            for _ in range(self._size):
                self._idle.put_nowait(None)  # a place: connected when first taken
        return self._idle

    async def close(self) -> None:
        """Close this loop's idle connections (the app's shutdown)."""
        idle, self._idle = self._idle, None
        while idle is not None and not idle.empty():
            connection = idle.get_nowait()
            if connection is not None:
                await _close(connection)


async def _close(connection: psycopg.AsyncConnection[Any]) -> None:
    try:
        await connection.close()
    except Exception:  # noqa: BLE001 - a connection already broken needs no goodbye
        log.debug("closing a token reader's connection failed", exc_info=True)


def token_reader(factory: sessionmaker[Session]) -> TokenReader | None:
    """A reader for sessions bound to a PostgreSQL engine; None otherwise (see the module)."""
    bind = factory.kw.get("bind")
    if isinstance(bind, Engine) and bind.dialect.name == "postgresql":
        return TokenReader(bind)
    return None
