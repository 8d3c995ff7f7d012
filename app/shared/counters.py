"""Failures counted per key in a fixed window from the key's first failure: the protocol every
store keeps (memory, :mod:`app.shared.database`, :mod:`app.shared.redis_store`) and the
in-process store, bounded in memory."""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

MAX_KEYS = 10_000


class Counters(Protocol):
    """Failures per key in a fixed window from the key's first failure."""

    def hit(self, key: str) -> tuple[int, float]:
        """Count one failure under ``key``: the failures in its window so far, and the seconds
        until the window ends."""
        ...

    def count(self, key: str) -> tuple[int, float]:
        """The failures in ``key``'s window and the seconds until the window ends."""
        ...


class MemoryCounters:
    """:class:`Counters` in this process's memory: at most ``max_keys`` keys."""

    def __init__(
        self,
        *,
        window_seconds: float,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if window_seconds <= 0 or max_keys < 1:
            raise ValueError("window_seconds and max_keys must be positive")
        self.window_seconds = window_seconds
        self.max_keys = max_keys
        self._clock = clock
        # key -> (when its window started, failures in it); the least recent first.
        self._failures: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._failures)

    def hit(self, key: str) -> tuple[int, float]:
        now = self._clock()
        with self._lock:
            started, count = self._failures.pop(key, (now, 0))
            if now - started >= self.window_seconds:
                started, count = now, 0
            self._failures[key] = (started, count + 1)
            while len(self._failures) > self.max_keys:
                self._failures.popitem(last=False)
        return count + 1, started + self.window_seconds - now

    def count(self, key: str) -> tuple[int, float]:
        now = self._clock()
        with self._lock:
            entry = self._failures.get(key)
        if entry is None:
            return 0, 0.0
        started, count = entry
        left = started + self.window_seconds - now
        return (count, left) if left > 0 else (0, 0.0)
