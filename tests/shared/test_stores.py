"""The shared stores of the limits that span requests (app.shared): the database's and Redis's
counters count every process's failures exactly, the upload window admits exactly the limit
under a race, and a Redis that does not answer leaves each process counting on its own, with
``/readyz`` saying so, and never a 500."""

import threading
import time

import pytest
import redis

from app.db import make_engine, make_session_factory
from app.main import create_app
from app.shared.counters import MemoryCounters
from app.shared.database import DatabaseCounters
from app.shared.keys import MAX_KEY
from app.shared.redis_store import RedisCounters, RedisLink, RedisUploadWindow
from app.shared.state import SharedState
from tests.asgi_client import TestClient
from tests.helpers import API, PERFECT, ready_competition, submit

# Nothing listens on port 1: connecting is refused at once.
DEAD_REDIS = "redis://127.0.0.1:1/0"
WRONG = {"Authorization": "Bearer pdm_not-a-real-token"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _race(count: int, action) -> list:  # type: ignore[no-untyped-def]
    """``action()`` from ``count`` threads released together; their results."""
    start = threading.Barrier(count)
    results: list = []
    lock = threading.Lock()

    def run() -> None:
        start.wait()
        result = action()
        with lock:
            results.append(result)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


# --- the database's counters --------------------------------------------------------------------


def test_database_counters_count_in_a_window_and_start_again_after_it(fresh_database_url):
    clock = Clock()
    engine = make_engine(fresh_database_url)
    one, two = (
        DatabaseCounters(engine, kind="credential", window_seconds=60, clock=clock)
        for _ in range(2)
    )
    assert one.count("a") == (0, 0.0)
    assert one.hit("a") == (1, 60.0)
    clock.now += 20
    assert two.hit("a") == (2, 40.0)  # another process's counter sees the same row
    assert one.count("a") == (2, 40.0)
    assert one.count("b") == (0, 0.0)
    clock.now += 40
    assert two.count("a") == (0, 0.0)
    assert two.hit("a") == (1, 60.0)  # a new window
    # Another kind is another table of keys.
    other = DatabaseCounters(engine, kind="address", window_seconds=60, clock=clock)
    assert other.count("a") == (0, 0.0)
    engine.dispose()


def test_database_counters_lose_no_failure_to_a_race(fresh_database_url):
    engine = make_engine(fresh_database_url)
    counters = DatabaseCounters(engine, kind="address", window_seconds=60)
    counts = _race(8, lambda: counters.hit("203.0.113.7")[0])
    assert sorted(counts) == list(range(1, 9))
    assert counters.count("203.0.113.7")[0] == 8
    engine.dispose()


def test_a_long_typed_name_is_kept_under_a_bounded_key(fresh_database_url):
    engine = make_engine(fresh_database_url)
    counters = DatabaseCounters(engine, kind="account", window_seconds=60)
    name = "x" * (MAX_KEY * 50)
    counters.hit(name)
    assert counters.hit(name)[0] == 2
    engine.dispose()


# --- Redis's counters and the upload window -----------------------------------------------------


def test_redis_counters_are_shared_and_end_with_their_window(redis_url):
    link, other_process = RedisLink(redis_url), RedisLink(redis_url)
    memory = MemoryCounters(window_seconds=60)
    one = RedisCounters(link, kind="credential", window_seconds=60, fallback=memory)
    two = RedisCounters(other_process, kind="credential", window_seconds=60, fallback=memory)
    assert one.count("a") == (0, 0.0)
    count, left = one.hit("a")
    assert count == 1 and 59 < left <= 60
    assert two.hit("a")[0] == 2
    assert one.count("a")[0] == 2
    assert len(memory) == 0  # Redis answered: the process's own table was not used
    short = RedisCounters(link, kind="address", window_seconds=0.05, fallback=memory)
    short.hit("b")
    # Wait for the window to pass on Redis's clock (bounded: it is 50 ms).
    for _ in range(500):
        if short.count("b") == (0, 0.0):
            break
        time.sleep(0.01)
    assert short.count("b") == (0, 0.0)
    assert short.hit("b")[0] == 1


def test_redis_counters_lose_no_failure_to_a_race(redis_url):
    counters = RedisCounters(
        RedisLink(redis_url),
        kind="address",
        window_seconds=60,
        fallback=MemoryCounters(window_seconds=60),
    )
    assert sorted(_race(16, lambda: counters.hit("a")[0])) == list(range(1, 17))


def test_the_upload_window_admits_exactly_the_limit_under_a_race(redis_url):
    window = RedisUploadWindow(RedisLink(redis_url), window_seconds=60)

    def unreachable() -> float | None:
        raise AssertionError("Redis answered: the database is not asked")

    answers = _race(12, lambda: window.take(7, limit=5, fallback=unreachable))
    assert answers.count(None) == 5
    waits = [a for a in answers if a is not None]
    assert len(waits) == 7 and all(0 < wait <= 60 for wait in waits)
    assert window.take(8, limit=5, fallback=unreachable) is None  # another team


# --- Redis away ---------------------------------------------------------------------------------


def test_while_redis_is_away_each_process_counts_in_its_own_table():
    link = RedisLink(DEAD_REDIS)
    memory = MemoryCounters(window_seconds=60)
    counters = RedisCounters(link, kind="credential", window_seconds=60, fallback=memory)
    assert counters.hit("a")[0] == 1
    assert counters.hit("a")[0] == 2 and counters.count("a")[0] == 2
    assert len(memory) == 1
    assert link.problem is not None and link.problem.startswith("unreachable: ConnectionError")
    window = RedisUploadWindow(link, window_seconds=60)
    assert window.take(1, limit=1, fallback=lambda: 42.0) == 42.0  # the database's answer


def test_redis_is_asked_again_after_its_pause(redis_url):
    clock = Clock()
    link = RedisLink(redis_url, pause_seconds=5, clock=clock)
    memory = MemoryCounters(window_seconds=60)
    counters = RedisCounters(link, kind="credential", window_seconds=60, fallback=memory)
    real = link.hit_script

    def refused(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise redis.ConnectionError("connection refused")

    link.hit_script = refused  # type: ignore[assignment]
    counters.hit("a")
    assert link.problem is not None
    link.hit_script = real  # Redis is back, but left alone during the pause
    counters.hit("a")
    assert len(memory) == 1 and memory.count("a")[0] == 2
    clock.now += 5
    assert counters.hit("a")[0] == 1  # asked again: counted in Redis
    assert link.problem is None


def test_readyz_says_degraded_and_why_while_redis_is_away(settings, session_factory, host, alice):
    away = settings.model_copy(update={"redis_url": DEAD_REDIS, "uploads_per_minute": 2})
    with TestClient(create_app(away, session_factory=session_factory)) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 200, ready.text
        body = ready.json()
        assert body["status"] == "degraded"
        assert body["checks"]["shared_state"].startswith("unreachable")
        assert body["checks"]["database"] == "ok"
        assert "shared_state: unreachable" in body["detail"]
        # Every limit still holds, from this process's own counts: no 500 anywhere.
        statuses = [client.get(f"{API}/me", headers=WRONG).status_code for _ in range(21)]
        assert statuses == [401] * 20 + [429]
        assert client.get(f"{API}/me", headers=alice.headers).status_code == 200
        ready_competition(client, host.headers)
        answers = [submit(client, alice.headers, PERFECT).status_code for _ in range(3)]
        assert answers == [202, 202, 429]


def test_readyz_reports_a_shared_state_that_answers(settings, session_factory, redis_url):
    shared = settings.model_copy(update={"redis_url": redis_url})
    with TestClient(create_app(shared, session_factory=session_factory)) as client:
        body = client.get("/readyz").json()
    assert body == {
        "status": "ready",
        "checks": {"database": "ok", "storage": "ok", "shared_state": "ok"},
    }


@pytest.mark.parametrize(
    "update, where",
    [
        ({}, "memory"),
        ({"database_url": "postgresql+psycopg://podium@db.invalid/podium"}, "database"),
        ({"redis_url": DEAD_REDIS}, "redis"),
    ],
)
def test_where_the_counters_are_kept(settings, update, where):
    state = SharedState(settings.model_copy(update=update))
    assert state.where == where
    state.close()


def test_without_redis_two_processes_on_postgresql_count_failures_in_the_database(
    settings, fresh_database_url
):
    """Two apps on one database stand for two API processes: on PostgreSQL the second sees the
    first's failures (the shared_counters table); SQLite serves one process, which counts in its
    own memory."""
    apps = []
    for _ in range(2):
        engine = make_engine(fresh_database_url)
        own = settings.model_copy(update={"database_url": fresh_database_url})
        apps.append((create_app(own, session_factory=make_session_factory(engine)), engine))
    address = ("203.0.113.50", 40000)
    with (
        TestClient(apps[0][0], client=address) as one,
        TestClient(apps[1][0], client=address) as two,
    ):
        limit = settings.auth_failures_per_window
        assert [one.get(f"{API}/me", headers=WRONG).status_code for _ in range(limit)] == [
            401
        ] * limit
        shared = fresh_database_url.startswith("postgresql")
        assert two.get(f"{API}/me", headers=WRONG).status_code == (429 if shared else 401)
        assert apps[1][0].state.shared_state.where == ("database" if shared else "memory")
    for _app, engine in apps:
        engine.dispose()


class HangingRedis:
    """A server that takes connections and shakes hands (``+OK`` to the client's set-up
    commands), then never answers a command: a Redis that hangs (stopped with SIGSTOP, a full
    network path) rather than refuses."""

    def __init__(self) -> None:
        import socket

        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.1)
        self.url = f"redis://127.0.0.1:{self.server.getsockname()[1]}/0"
        self.connections: list[socket.socket] = []
        self.commands = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
                connection.setblocking(False)
                self.connections.append(connection)
            except TimeoutError:
                pass
            for connection in self.connections:
                try:
                    received = connection.recv(65536)
                except (BlockingIOError, OSError):
                    continue
                if received.startswith(b"*") and b"CLIENT" in received.upper():
                    # The client's set-up (CLIENT SETINFO ...), one reply per command sent.
                    connection.sendall(b"+OK\r\n" * (received.count(b"\r\n*") + 1))
                elif received:
                    self.commands += 1  # a real command: never answered

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for connection in self.connections:
            connection.close()
        self.server.close()


def test_a_redis_that_hangs_costs_a_request_one_timeout_and_the_limits_fall_back(
    settings, session_factory, host, alice
):
    hanging = HangingRedis()
    answered: list[object] = []
    try:
        stuck = settings.model_copy(update={"redis_url": hanging.url, "uploads_per_minute": 2})
        app = create_app(stuck, session_factory=session_factory)

        def requests() -> None:
            with TestClient(app) as client:
                statuses = [client.get(f"{API}/me", headers=WRONG).status_code for _ in range(21)]
                me = client.get(f"{API}/me", headers=alice.headers).status_code
                ready_competition(client, host.headers)
                uploads = [submit(client, alice.headers, PERFECT).status_code for _ in range(3)]
                ready = client.get("/readyz").json()
                answered.append((statuses, me, uploads, ready))

        # In a thread, so that a client without a timeout (which would wait for ever) fails
        # here instead of hanging the suite; 60 s is far past any number of 0.5 s timeouts.
        worker = threading.Thread(target=requests, daemon=True)
        worker.start()
        worker.join(60)
        assert answered, "a request waited on the hanging Redis"
    finally:
        hanging.close()
    statuses, me, uploads, ready = answered[0]
    # Every limit holds, from this process's counts and the database's: no 500, no wait.
    assert statuses == [401] * 20 + [429] and me == 200
    assert uploads == [202, 202, 429]
    assert ready["status"] == "degraded"
    assert ready["checks"]["shared_state"].startswith("unreachable: TimeoutError")
    assert hanging.commands >= 1  # it was asked, and did not answer
