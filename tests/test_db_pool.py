"""The server pool of :mod:`app.db` on PostgreSQL: connections are pinged only after they have
been idle (a busy one is not pinged at every checkout), and a server that dropped an idle
connection is never seen by its next user."""

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from app import db
from app.db import make_engine


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
