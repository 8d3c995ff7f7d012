"""Where this process keeps the limits that span requests, chosen once from the settings.

- ``PODIUM_REDIS_URL`` set: Redis, with each process's own memory while Redis is away (and
  ``/readyz`` saying ``degraded``); the upload rate falls back to the database's count.
- else PostgreSQL (which may serve several processes): the sign-in counters in the database.
- else (SQLite: one process): the sign-in counters in memory, as they always were.

The upload rate without Redis is the database's count of the team's recent submissions, read
with the team locked, exact across processes (:mod:`app.submissions.quota`).
"""

import functools
import threading

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from app.config import Settings
from app.shared.counters import Counters
from app.shared.database import DatabaseCounters, counter_engine
from app.shared.redis_store import RedisCounters, RedisLink, RedisUploadWindow

# The upload rate's window (a team's uploads per minute).
UPLOAD_WINDOW_SECONDS = 60.0


@functools.cache
def redis_link(url: str) -> RedisLink:
    """One link per Redis URL per process: the sign-in counters, the upload rate and
    ``/readyz`` see the same state of Redis."""
    return RedisLink(url)


def upload_window(settings: Settings) -> RedisUploadWindow | None:
    """The shared count of each team's uploads, or None without Redis."""
    if not settings.redis_url:
        return None
    return RedisUploadWindow(redis_link(settings.redis_url), window_seconds=UPLOAD_WINDOW_SECONDS)


class SharedState:
    """This process's choice of store, and what ``/readyz`` reports of it."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.redis = redis_link(settings.redis_url) if settings.redis_url else None
        self._in_database = (
            self.redis is None
            and make_url(settings.database_url).get_backend_name() == "postgresql"
        )
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        """``redis``, ``database`` or ``memory``: where the sign-in counters are kept."""
        if self.redis is not None:
            return "redis"
        return "database" if self._in_database else "memory"

    def counters(self, kind: str, *, window_seconds: float, memory: Counters) -> Counters:
        """The store of one kind of failure key; ``memory`` is this process's own table (the
        store itself on SQLite, the fallback while Redis is away)."""
        if self.redis is not None:
            return RedisCounters(
                self.redis, kind=kind, window_seconds=window_seconds, fallback=memory
            )
        if self._in_database:
            return DatabaseCounters(self._database(), kind=kind, window_seconds=window_seconds)
        return memory

    def check(self) -> str | None:
        """None without Redis; else ``"ok"`` or why Redis does not answer."""
        return None if self.redis is None else self.redis.check()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()

    def _database(self) -> Engine:
        with self._lock:
            if self._engine is None:
                self._engine = counter_engine(self._settings.database_url)
            return self._engine
