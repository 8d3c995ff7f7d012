"""The limits that span requests, kept in Redis so that every API process counts alike.

Each update is one Lua script, which Redis runs atomically: a failure is counted and its window
read in one step (``INCR``, ``PEXPIRE`` on the first), and an upload is admitted or refused against
the team's last minute in one step (a sorted set of upload times, read and added to under Redis's
own clock). Two processes can never both see 9 and both add the 10th.

When Redis does not answer (a refused connection, or no reply within ``timeout`` seconds), the
caller's fallback answers instead and Redis is left alone for ``pause_seconds``, so a dead Redis
costs each request nothing; :attr:`RedisLink.problem` says why, for ``/readyz``.
"""

import logging
import math
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from app.shared.counters import Counters
from app.shared.keys import bounded_key

log = logging.getLogger(__name__)

T = TypeVar("T")

PREFIX = "podium:"

# KEYS[1]: the counter; ARGV[1]: its window in ms. Returns {failures, ms left in the window}.
_HIT = """
local n = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if n == 1 or left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {n, left}
"""

# KEYS[1]: the team's uploads; ARGV: window in ms, the most allowed in it, a unique member.
# Returns -1 when the upload is admitted (and counted), else the ms until the oldest leaves.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(tonumber(oldest[2]) + window - now, 1)
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return -1
"""


class RedisLink:
    """One Redis client (a thread-safe connection pool) and whether Redis answered lately."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 0.5,
        pause_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        try:
            import redis
        except ImportError:  # pragma: no cover - the scale extra is missing
            raise RuntimeError(
                "PODIUM_REDIS_URL needs the redis package: pip install 'podium[scale]'"
            ) from None
        self.url = url
        self.client = redis.Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout
        )
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._pause_seconds = pause_seconds
        self._clock = clock
        self._paused_until = 0.0
        self._lock = threading.Lock()
        self.problem: str | None = None
        self.hit_script = self.client.register_script(_HIT)
        self.take_script = self.client.register_script(_TAKE)

    def run(self, operation: Callable[[Any], T], fallback: Callable[[], T]) -> T:
        """``operation(client)``, or ``fallback()`` while Redis does not answer."""
        if self._clock() < self._paused_until:
            return fallback()
        try:
            result = operation(self.client)
        except self._errors as exc:
            self._failed(exc)
            return fallback()
        if self.problem is not None:
            with self._lock:
                if self.problem is not None:
                    log.warning("shared state: Redis answers again; limits are shared again")
                    self.problem = None
        return result

    def check(self) -> str:
        """``"ok"``, or why Redis does not answer (asked now, whatever the pause says)."""
        try:
            self.client.ping()
        except self._errors as exc:
            self._failed(exc)
            return self.problem or "unreachable"
        self.problem = None
        return "ok"

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            reason = f"unreachable: {type(exc).__name__}: {str(exc)[:200]}"
            if self.problem is None:
                log.warning(
                    "shared state: Redis %s; limits are counted per process until it answers",
                    reason,
                )
            self.problem = reason
            self._paused_until = self._clock() + self._pause_seconds


class RedisCounters:
    """:class:`~app.shared.counters.Counters` in Redis, with ``fallback`` while it is away."""

    def __init__(
        self, link: RedisLink, *, kind: str, window_seconds: float, fallback: Counters
    ) -> None:
        self._link = link
        self._prefix = f"{PREFIX}fail:{kind}:"
        self._window_ms = max(1, math.ceil(window_seconds * 1000))
        self.fallback = fallback

    def hit(self, key: str) -> tuple[int, float]:
        name = self._prefix + bounded_key(key)

        def hit(_client: Any) -> tuple[int, float]:
            count, left = self._link.hit_script(keys=[name], args=[self._window_ms])
            return int(count), int(left) / 1000

        return self._link.run(hit, lambda: self.fallback.hit(key))

    def count(self, key: str) -> tuple[int, float]:
        name = self._prefix + bounded_key(key)

        def count(client: Any) -> tuple[int, float]:
            pipe = client.pipeline(transaction=False)
            pipe.get(name)
            pipe.pttl(name)
            found, left = pipe.execute()
            # PTTL is -2 once the key is gone; 0 while it has under a millisecond left, when it
            # still counts (a hit then would add to it): only a gone key reads as none.
            if found is None or left == -2:
                return 0, 0.0
            return int(found), max(left, 0) / 1000

        return self._link.run(count, lambda: self.fallback.count(key))


class RedisUploadWindow:
    """Each team's uploads in the last ``window_seconds``, shared by every process."""

    def __init__(self, link: RedisLink, *, window_seconds: float) -> None:
        self._link = link
        self._window_ms = max(1, math.ceil(window_seconds * 1000))

    def take(
        self,
        team_id: int,
        *,
        limit: int,
        fallback: Callable[[], float | None],
        member: str | None = None,
        kind: str = "uploads",
    ) -> float | None:
        """Count one upload of the team unless ``limit`` were made in the window: None when
        admitted, else the seconds until the next one would be. ``fallback()`` answers while
        Redis is away (the database's own count). ``member`` names the upload, so that
        :meth:`give_back` can uncount it; ``kind`` is the window (``refused``: a second one)."""

        def take(_client: Any) -> float | None:
            wait = int(
                self._link.take_script(
                    keys=[f"{PREFIX}{kind}:{team_id}"],
                    args=[self._window_ms, limit, member or uuid.uuid4().hex],
                )
            )
            return None if wait < 0 else wait / 1000

        return self._link.run(take, fallback)

    def give_back(self, team_id: int, member: str) -> None:
        """Uncount an upload taken with ``member`` (one refused at intake); nothing while Redis
        is away, where the database's count tells refused uploads apart by itself."""

        def give(client: Any) -> None:
            client.zrem(f"{PREFIX}uploads:{team_id}", member)

        self._link.run(give, lambda: None)
