"""Failed sign-in attempts, counted so that guessing stops and the innocent are never locked out.

Every way in counts: bearer tokens on the API and at the upload guard, the kaggle client's Basic
credentials, and the web sign-in form (password or token). Failures are counted in a window
(``window_seconds`` from the first failure) under three kinds of key:

- per (client address, credential tried): the token (hashed, never kept) or the user name of a
  password. One person's mistyped token, retried, stops there and touches nobody else's.
- per client address, with a much higher ceiling: a spray of ever-different guesses from one
  address stops too.
- per account, for passwords only: guessing one account's password from many addresses stops.

A token is checked first, whatever the counters say, and a right one is let in: a classroom
behind one NAT address keeps working while one of them mistypes, and a user whose password is
under attack keeps their tokens. A wrong token is counted, and answered 429 instead of 401 once
its own count or its address's is over. (Tokens are 256-bit random strings: refusing a guess
before checking it protects nothing, while refusing a right one would lock out everyone behind
the address; and a right token costs no counter read at all, which matters when the counters are
in Redis or the database.) A password is refused before it is checked while any of its three
counts is over, since a password can be guessed.

The counts live behind :class:`Counters` (``hit`` / ``count``), so a store shared by several
processes (:mod:`app.shared`: Redis, or the database) takes the place of the in-process one; the
in-process tables are bounded (``max_keys`` per kind, the least recently failing key forgotten
first), so a flood of addresses or guesses costs a fixed amount of memory.
"""

import hashlib
import math
import time
from collections.abc import Callable
from typing import TypeVar

from starlette.types import Scope

from app.errors import RateLimited, Unauthorized
from app.shared.counters import MAX_KEYS, Counters, MemoryCounters

T = TypeVar("T")


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
        """``authenticate()`` a token tried from ``address``; a failure (401) is counted, and
        answered 429 once this token's failures from here, or the address's, are over.

        A right token gets in whatever failed from its address, and costs no counter read.
        """
        try:
            return authenticate()
        except Unauthorized:
            # Both counted, then judged: a spray of different guesses stops at the address's
            # ceiling, one token retried at its own.
            tried = self._credentials.hit(f"{address} {_digest(token)}")
            sprayed = self._addresses.hit(address)
            for (count, left), ceiling in (
                (tried, self.max_failures),
                (sprayed, self.max_per_address),
            ):
                if count > ceiling:
                    raise _refusal(left, "from your address") from None
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
            raise _refusal(left, where)


def _refusal(left: float, where: str) -> RateLimited:
    wait = max(1, math.ceil(left))
    return RateLimited(
        f"too many failed sign-in attempts {where}; try again in {wait} s", retry_after=wait
    )


def client_address(scope: Scope) -> str:
    """The peer's address as the ASGI server reports it (behind a reverse proxy, run uvicorn
    with ``--proxy-headers --forwarded-allow-ips`` so that this is the real client's)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
