"""Engine, sessions and the request's unit of work.

The request's session dependency is the one place that commits. Work that must only happen once a
commit is durable (handing a submission to a scorer) is registered with :func:`after_commit`.
Slow work that needs no database (parsing an uploaded key, running a metric on it) is done in
:func:`no_transaction`, so that it holds neither a transaction nor the request's database slot.
"""

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from time import monotonic
from typing import Protocol

from sqlalchemy import Engine, MetaData, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import InvalidatePoolError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker


class Base(DeclarativeBase):
    # Named constraints, so later migrations (and SQLite's batch mode) can refer to them.
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


# Requests admitted to a server database at once (see app.deps); the pool keeps as many
# connections again for the scorer and the CLI.
POOL_SIZE = 10

# A pooled connection idle longer than this is pinged before it is handed out (a restarted or
# failed-over server is found then, not by a request); a busier one proved itself alive by its
# last use. See :func:`_ping_after_idle`.
PING_AFTER_IDLE_SECONDS = 2.0


def database_concurrency(factory: sessionmaker[Session]) -> int:
    bind = factory.kw.get("bind")
    return 1 if bind is not None and bind.dialect.name == "sqlite" else POOL_SIZE


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        engine = create_engine(url, pool_size=POOL_SIZE, max_overflow=POOL_SIZE)
        _ping_after_idle(engine, PING_AFTER_IDLE_SECONDS)
        return engine

    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    # pysqlite's own transaction handling breaks SAVEPOINT and defers BEGIN; take it over so
    # SQLite transactions behave like PostgreSQL's (the recipe from SQLAlchemy's SQLite notes).
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()
        # The record's append computes its chain link in SQL (app.ledger.record).
        dbapi_connection.create_function("podium_sha256", 1, _sha256_hex, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking
        # on a lock upgrade.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _ping_after_idle(engine: Engine, seconds: float) -> None:
    """SQLAlchemy's ``pool_pre_ping``, for connections that have been idle ``seconds`` or more.

    ``pool_pre_ping`` pings at every checkout: under load that was a round trip (and a thread
    hand-off) per transaction, two of an upload's eleven. A connection checked in a moment ago
    answered its last statement then; the server restarting in that moment fails the request
    that uses it with a 503 (``app.ops.unavailable``), and SQLAlchemy then invalidates the whole
    pool, as a failed ping does. A new connection is not pinged (nor was it before).
    """

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
        record.info["idle_since"] = monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, _proxy) -> None:  # type: ignore[no-untyped-def]
        since = record.info.get("idle_since")  # none yet: a new connection (info is per connection)
        if since is None or monotonic() - since < seconds:
            return
        dialect = engine.dialect
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as error:
            if dialect.is_disconnect(error, dbapi_connection, None):
                # As a failed pre-ping: this and every older connection are replaced (the pool
                # retries the checkout on a new one).
                raise InvalidatePoolError() from error
            raise


def sqlite_path(url: str) -> Path | None:
    """The absolute path of a SQLite database file, or None for another backend (or memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).resolve()


def shown_url(url: str) -> str:
    """The database URL as a person should see it: the password masked, a SQLite path absolute."""
    parsed = make_url(url)
    path = sqlite_path(url)
    if path is not None:
        parsed = parsed.set(database=str(path))
    return parsed.render_as_string(hide_password=True)


class NoDatabase(Exception):
    """``url`` names no Podium database. ``absent``: nothing is there yet (no file, no tables),
    as opposed to a database that cannot be opened at all."""

    def __init__(self, message: str, *, absent: bool) -> None:
        super().__init__(message)
        self.message = message
        self.absent = absent


def check_database(url: str) -> None:
    """Raise :class:`NoDatabase` unless ``url`` holds a migrated Podium database.

    Creates nothing: a command that only reads or adds users must not leave an empty database
    behind when it was run from the wrong directory or with the wrong URL.
    """
    path = sqlite_path(url)
    if path is not None and not path.is_file():
        raise NoDatabase(f"no database at {path}", absent=True)
    # A plain engine: make_engine's connect hooks would write to the file (WAL mode) even when
    # it turns out to be no Podium database.
    engine = create_engine(url)
    try:
        migrated = inspect(engine).has_table("alembic_version")
    except SQLAlchemyError as exc:
        first = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        reason = first[0] if first else type(exc).__name__
        raise NoDatabase(
            f"cannot open the database {shown_url(url)}: {reason}", absent=False
        ) from None
    finally:
        engine.dispose()
    if not migrated:
        raise NoDatabase(f"the database {shown_url(url)} holds no Podium tables", absent=True)


# pg_advisory_xact_lock(key, competition id): the key names the standings lock among the app's.
_STANDINGS_LOCK = 0x5354  # "ST"


def lock_standings(session: Session, competition_id: int) -> None:
    """Take the competition's standings lock until commit (PostgreSQL; SQLite's BEGIN IMMEDIATE
    already serialises writers). Here, not in the board service, so that a domain writing
    standings indirectly (a team merge) takes it without importing that service.

    One standings writer per competition at a time: two transactions that both rewrite a team's
    rows (two scores of one team, on two processes) would otherwise both insert them, and the
    second would fail on the unique constraint. A writer holding it inserts standings rows, which
    take a key-share lock on the team and submission rows they reference; so a transaction that
    will also lock a team row strongly (a merge deletes the absorbed team) takes this lock
    *first*, and an upload's team lock is NO KEY UPDATE (it never conflicts with key-share):
    either other order deadlocks. Taking it twice in one transaction is harmless (it stacks).
    """
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        connection.execute(
            text("SELECT pg_advisory_xact_lock(:key, :competition_id)"),
            {"key": _STANDINGS_LOCK, "competition_id": competition_id},
        )


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=True)


def after_commit(session: Session, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the session's current unit of work has committed."""
    session.info.setdefault("after_commit", []).append(callback)


def run_after_commit(session: Session) -> None:
    session.info.pop(_AFTER_ROLLBACK, None)  # committed: what it made outside now stays
    for callback in session.info.pop("after_commit", []):
        callback()


_AFTER_ROLLBACK = "after_rollback"


def after_rollback(session: Session, callback: Callable[[], None]) -> None:
    """Run ``callback`` if the session's current unit of work is rolled back instead of committed
    (a commit that fails included): to undo what it made outside the database, such as stored
    files that only its rows would have referred to."""
    session.info.setdefault(_AFTER_ROLLBACK, []).append(callback)


def run_after_rollback(session: Session) -> None:
    """The unit of work was rolled back: forget its after-commit work, undo its outside work."""
    session.info.pop("after_commit", None)
    for callback in session.info.pop(_AFTER_ROLLBACK, []):
        callback()


@contextmanager
def unit_of_work(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session that commits on success and rolls back on error (CLI, workers, lifespan)."""
    session = factory()
    try:
        yield session
        session.commit()
        run_after_commit(session)
    except BaseException:
        session.rollback()
        run_after_rollback(session)
        raise
    finally:
        session.close()


# --- slow work between the reads and the writes of one unit of work ---------------------------

# session.info keys: the request's database admission, and whether the unit has written.
REQUEST_SLOT = "request_slot"
_WROTE = "wrote"


class Slot(Protocol):
    """A request's admission to the database (``app.deps``), given back while it pauses."""

    def release(self) -> None: ...

    def acquire(self) -> None: ...


@event.listens_for(Session, "after_flush")
def _remember_flushes(session: Session, _context) -> None:  # type: ignore[no-untyped-def]
    session.info[_WROTE] = True


@event.listens_for(Session, "do_orm_execute")
def _remember_statements(state) -> None:  # type: ignore[no-untyped-def]
    if state.is_insert or state.is_update or state.is_delete:
        state.session.info[_WROTE] = True


@contextmanager
def no_transaction(session: Session) -> Iterator[None]:
    """Run the block with no transaction open and the request's database slot given back.

    For a request's unit of work that has only read so far: its read transaction ends (a
    commit of nothing; what was loaded stays loaded) and other requests are admitted while the
    block runs. The block must not use the session; afterwards the caller re-reads whatever may
    have changed meanwhile. Outside a request (the CLI, the demo), the block just runs.
    """
    slot: Slot | None = session.info.get(REQUEST_SLOT)
    if slot is None:
        yield
        return
    if session.info.get(_WROTE) or session.new or session.dirty or session.deleted:
        raise RuntimeError("a unit of work cannot give up its transaction after it has written")
    session.commit()
    slot.release()
    try:
        yield
    finally:
        slot.acquire()
    if session.in_transaction():
        raise RuntimeError("the session was used while its unit of work had no transaction")
