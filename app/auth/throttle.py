"""Failed sign-in attempts per client address: after too many in a window, every attempt from
that address (a right token included) is answered 429 with ``Retry-After`` until the window ends.

Every way in counts: bearer tokens on the API and at the upload guard, the kaggle client's Basic
credentials, and the web sign-in form (password or token). The table lives in the process and is
bounded: at most ``max_addresses`` addresses are remembered, the least recently failing one
forgotten first, so a flood of addresses costs a fixed amount of memory. Each server process
counts on its own (README, "Threat model").
"""

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

from starlette.types import Scope

from app.errors import RateLimited, Unauthorized

T = TypeVar("T")

MAX_ADDRESSES = 10_000


class FailedAuthLimiter:
    def __init__(
        self,
        *,
        max_failures: int,
        window_seconds: float,
        max_addresses: int = MAX_ADDRESSES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_failures < 1 or window_seconds <= 0 or max_addresses < 1:
            raise ValueError("max_failures, window_seconds and max_addresses must be positive")
        self.max_failures = max_failures
        self.window_seconds = window_seconds
        self.max_addresses = max_addresses
        self._clock = clock
        # address -> (when its window started, failures in it); the least recent first.
        self._failures: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._failures)

    def check(self, address: str) -> None:
        """Raise :class:`RateLimited` while ``address`` has used up its failures."""
        now = self._clock()
        with self._lock:
            entry = self._failures.get(address)
        if entry is None:
            return
        started, count = entry
        left = started + self.window_seconds - now
        if count >= self.max_failures and left > 0:
            raise RateLimited(
                f"too many failed sign-in attempts from your address; try again in "
                f"{math.ceil(left)} s",
                retry_after=max(1, math.ceil(left)),
            )

    def failed(self, address: str) -> None:
        now = self._clock()
        with self._lock:
            started, count = self._failures.pop(address, (now, 0))
            if now - started >= self.window_seconds:
                started, count = now, 0
            self._failures[address] = (started, count + 1)
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)

    def attempt(self, address: str, authenticate: Callable[[], T]) -> T:
        """``authenticate()`` unless the address is refused; a failure (401) is counted."""
        self.check(address)
        try:
            return authenticate()
        except Unauthorized:
            self.failed(address)
            raise


def client_address(scope: Scope) -> str:
    """The peer's address as the ASGI server reports it (behind a reverse proxy, run uvicorn
    with ``--proxy-headers --forwarded-allow-ips`` so that this is the real client's)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
