"""How often strangers may make the server do work that costs (an account, a mail): counted per
client address and per recipient in the shared limits (Redis, the database, or memory), as the
failed sign-ins are (app.auth.throttle)."""

import hashlib
import math
from dataclasses import dataclass

from app.config import Settings
from app.errors import RateLimited
from app.shared.counters import Counters, MemoryCounters
from app.shared.state import SharedState

HOUR = 3600.0


def _key(value: str) -> str:
    # Addresses are never kept in a counter's key, even hashed-free stores like Redis.
    return hashlib.sha256(value.encode()).hexdigest()[:32]


@dataclass
class AccountLimits:
    by_address: Counters  # sign-ups, reset and verification requests from one client address
    by_recipient: Counters  # mails to one address (and sign-in attempts by e-mail)
    per_address: int
    per_recipient: int

    @classmethod
    def make(cls, settings: Settings, shared: SharedState) -> "AccountLimits":
        def counters(kind: str) -> Counters:
            memory = MemoryCounters(window_seconds=HOUR, max_keys=settings.auth_failure_keys)
            return shared.counters(kind, window_seconds=HOUR, memory=memory)

        return cls(
            by_address=counters("account-address"),
            by_recipient=counters("account-recipient"),
            per_address=settings.signups_per_address_hour,
            per_recipient=settings.mails_per_recipient_hour,
        )

    def hit_address(self, address: str) -> None:
        """Count one request from ``address``; 429 once it is over its hour's allowance."""
        count, left = self.by_address.hit(_key(address))
        if count > self.per_address:
            wait = max(1, math.ceil(left))
            raise RateLimited(
                f"too many account requests from your address; try again in {wait} s",
                retry_after=wait,
            )

    def may_mail(self, recipient: str) -> bool:
        """Count one mail to ``recipient``; False once over (the caller answers as if it sent:
        a flood cannot fill someone's mailbox, and the answer still tells nothing)."""
        count, _left = self.by_recipient.hit(_key(recipient))
        return count <= self.per_recipient
