"""Failed sign-in attempts, counted so that guessing stops and the innocent are never locked out.

Every way in counts: bearer tokens on the API and at the upload guard, the kaggle client's Basic
credentials, and the web sign-in form (password or token). Failures are counted in a window
(``window_seconds`` from the first failure) under three kinds of key:

- per (client address, credential tried): the token (hashed, never kept) or the user name of a
  password. One person's mistyped token, retried, stops there and touches nobody else's.
- per client address, with a much higher ceiling: a spray of ever-different guesses from one
  address stops too.
- per account, for passwords only: guessing one account's password from many addresses stops.

A token is checked whatever the address or account counters say, and a right one is let in: a
classroom behind one NAT address keeps working while one of them mistypes, and a user whose
password is under attack keeps their tokens. Only a wrong token is answered 429 once its address
is over the ceiling. (Tokens are 256-bit random strings: answering 429 rather than checking a
guess protects nothing there, while refusing a right one would lock out everyone behind the
address.) A password is refused before it is checked while any of its three counts is over,
since a password can be guessed.

The counts live behind :class:`Counters` (``hit`` / ``count``), so a store shared by several
processes can take the place of the in-process one; the in-process tables are bounded
(``max_keys`` per kind, the least recently failing key forgotten first), so a flood of addresses
or guesses costs a fixed amount of memory.
"""

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol, TypeVar

from starlette.types import Scope

from app.errors import RateLimited, Unauthorized

T = TypeVar("T")

MAX_KEYS = 10_000


class Counters(Protocol):
    """Failures per key in a fixed window from the key's first failure."""

    def hit(self, key: str) -> int:
        """Count one failure under ``key``; the failures in its window so far."""
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

    def hit(self, key: str) -> int:
        now = self._clock()
        with self._lock:
            started, count = self._failures.pop(key, (now, 0))
            if now - started >= self.window_seconds:
                started, count = now, 0
            self._failures[key] = (started, count + 1)
            while len(self._failures) > self.max_keys:
                self._failures.popitem(last=False)
        return count + 1

    def count(self, key: str) -> tuple[int, float]:
        now = self._clock()
        with self._lock:
            entry = self._failures.get(key)
        if entry is None:
            return 0, 0.0
        started, count = entry
        left = started + self.window_seconds - now
        return (count, left) if left > 0 else (0, 0.0)


def _digest(credential: str) -> str:
    # The table never holds a token, not even one that failed.
    return hashlib.sha256(credential.encode()).hexdigest()[:32]


class FailedAuthLimiter:
    """The three counts of failed sign-ins, and the rule that reads them (module docstring)."""

    def __init__(
        self,
        *,
        max_failures: int,
        window_seconds: float,
        max_per_address: int | None = None,
        max_per_account: int | None = None,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
        counters: Callable[[str], Counters] | None = None,
    ) -> None:
        """``max_failures`` per (address, credential); ``max_per_address`` (default 10 times as
        many) per address; ``max_per_account`` (default 2.5 times as many) per account's
        password. ``counters(kind)`` makes the store of one kind of key (default: in memory)."""
        if max_failures < 1 or window_seconds <= 0 or max_keys < 1:
            raise ValueError("max_failures, window_seconds and max_keys must be positive")
        self.max_failures = max_failures
        self.max_per_address = max_per_address or 10 * max_failures
        self.max_per_account = max_per_account or math.ceil(2.5 * max_failures)
        self.window_seconds = window_seconds
        if counters is None:

            def counters(_kind: str) -> Counters:
                return MemoryCounters(window_seconds=window_seconds, max_keys=max_keys, clock=clock)

        # One table per kind: a spray of keys of one kind cannot push out the others' counts.
        self._credentials = counters("credential")
        self._addresses = counters("address")
        self._accounts = counters("account")

    def __len__(self) -> int:
        """Keys remembered in the in-process tables (0 for a shared store)."""
        tables = (self._credentials, self._addresses, self._accounts)
        return sum(len(t) for t in tables if isinstance(t, MemoryCounters))

    def attempt_token(self, address: str, token: str, authenticate: Callable[[], T]) -> T:
        """``authenticate()`` a token tried from ``address``; a failure (401) is counted.

        Refused unchecked only when this very token has failed too often from here; a right
        token gets in whatever else failed from its address.
        """
        credential = f"{address} {_digest(token)}"
        self._refuse_over(self._credentials, credential, self.max_failures, "from your address")
        try:
            return authenticate()
        except Unauthorized:
            self._credentials.hit(credential)
            if self._addresses.hit(address) > self.max_per_address:
                # A spray: wrong guesses from here are refused, right tokens still get in.
                self._refuse_over(self._addresses, address, 1, "from your address")
            raise

    def attempt_password(self, address: str, name: str, authenticate: Callable[[], T]) -> T:
        """``authenticate()`` a password for user ``name`` from ``address``, unless one of its
        counts is over (then 429 before the password is checked); a failure is counted."""
        account = name.strip().lower()
        credential = f"{address} password {_digest(account)}"
        self._refuse_over(self._credentials, credential, self.max_failures, "from your address")
        self._refuse_over(self._addresses, address, self.max_per_address, "from your address")
        self._refuse_over(self._accounts, account, self.max_per_account, "for this account")
        try:
            return authenticate()
        except Unauthorized:
            self._credentials.hit(credential)
            self._addresses.hit(address)
            self._accounts.hit(account)
            raise

    def _refuse_over(self, table: Counters, key: str, ceiling: int, where: str) -> None:
        count, left = table.count(key)
        if count >= ceiling and left > 0:
            wait = max(1, math.ceil(left))
            raise RateLimited(
                f"too many failed sign-in attempts {where}; try again in {wait} s",
                retry_after=wait,
            )


def client_address(scope: Scope) -> str:
    """The peer's address as the ASGI server reports it (behind a reverse proxy, run uvicorn
    with ``--proxy-headers --forwarded-allow-ips`` so that this is the real client's)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
