"""The server pool of :mod:`app.db` on PostgreSQL: connections are pinged only after they have
been idle (a busy one is not pinged at every checkout), a server that dropped an idle connection
is never seen by its next user, and the guard's autocommit reads leave no autocommit behind on
the connections the requests' units of work take next."""

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from app import db
from app.db import make_engine, make_session_factory, read_session_factory


@pytest.fixture
def engine(postgres_url: str) -> Iterator[Engine]:
    engine = make_engine(postgres_url)
    yield engine
    engine.dispose()


class Clock:
    """app.db's clock, moved on by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(db, "monotonic", clock)
    return clock


@pytest.fixture
def pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each ping the pool sends, recorded (and still sent)."""
    sent: list[object] = []
    real = engine.dialect.do_ping

    def do_ping(dbapi_connection):  # type: ignore[no-untyped-def]
        sent.append(dbapi_connection)
        return real(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", do_ping)
    return sent


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as connection:
        return connection.scalar(text("SELECT pg_backend_pid()"))


def _terminate(postgres_url: str, pid: int) -> None:
    """End one server process, as a restart or an idle timeout on the server's side would."""
    other = make_engine(postgres_url)
    try:
        with other.connect() as connection:
            assert connection.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        other.dispose()


def test_a_connection_used_a_moment_ago_is_handed_out_without_a_ping(engine, pings, clock):
    first = _backend_pid(engine)
    for _ in range(4):
        clock.now += db.PING_AFTER_IDLE_SECONDS / 2
        assert _backend_pid(engine) == first  # the same connection back, not pinged
    assert pings == []


def test_a_connection_idle_past_the_window_is_pinged_once_a_checkout(engine, pings, clock):
    first = _backend_pid(engine)  # a new connection: not pinged
    for _ in range(3):
        clock.now += db.PING_AFTER_IDLE_SECONDS
        assert _backend_pid(engine) == first
    assert len(pings) == 3


def test_a_connection_the_server_dropped_while_idle_is_replaced_before_use(
    postgres_url, engine, pings, clock
):
    pid = _backend_pid(engine)
    _terminate(postgres_url, pid)
    clock.now += db.PING_AFTER_IDLE_SECONDS
    # The checkout pings, finds it dead and hands out a new connection: the caller sees nothing.
    assert _backend_pid(engine) != pid
    assert len(pings) == 1


def test_within_the_window_a_dropped_connection_fails_its_next_user_once(
    postgres_url, engine, pings, clock
):
    # The other side of the test above: unpinged, the dropped connection reaches its user, so
    # what the ping saves is real. The failure invalidates the pool, as a failed ping does, and
    # the next caller is served (a request would have answered 503: app.ops.unavailable).
    pid = _backend_pid(engine)
    _terminate(postgres_url, pid)
    with pytest.raises(OperationalError):
        _backend_pid(engine)
    assert _backend_pid(engine) != pid
    assert pings == []


def test_autocommit_reads_leave_no_autocommit_on_the_pool(postgres_url, engine):
    factory = make_session_factory(engine)
    reads = read_session_factory(factory)
    with reads() as session:
        assert session.connection().connection.dbapi_connection.autocommit is True
        assert session.scalar(text("SELECT 1")) == 1
    # The same pooled connection, in a unit of work: a real transaction again, which rolls back.
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE scratch (n integer)"))
    with factory() as session:
        assert session.connection().connection.dbapi_connection.autocommit is False
        session.execute(text("INSERT INTO scratch VALUES (1)"))
        session.rollback()
    with engine.connect() as connection:
        assert connection.scalar(text("SELECT count(*) FROM scratch")) == 0


def test_sqlite_sessions_are_left_as_they_are(tmp_path):
    # SQLite's BEGIN is a hook of our own (app.db), which autocommit would leave open.
    factory = make_session_factory(make_engine(f"sqlite:///{tmp_path}/pool.db"))
    assert read_session_factory(factory) is factory
