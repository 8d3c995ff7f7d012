"""Failure counters in the database, for several API processes sharing one without Redis.

One row per (kind, key), updated by a single upsert that starts a new window when the old one
has ended, so two processes counting the same key at once both count (the row lock orders
them). Each update is a short transaction of its own on a small pool of its own: a request's
rollback does not take its failure back, and a request holding one of the main pool's
connections never waits for another from the same pool. Expired rows are swept now and then
by whichever process counts.
"""

import random
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, case, create_engine, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from app.models import SharedCounter
from app.shared.keys import bounded_key

# About one update in this many also deletes the expired rows.
SWEEP_EVERY = 256


def counter_engine(url: str) -> Engine:
    """A small pool for the counters alone (they are written on failures only)."""
    return create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=4, pool_timeout=5)


class DatabaseCounters:
    """:class:`~app.shared.counters.Counters` in the ``shared_counters`` table."""

    def __init__(
        self,
        engine: Engine,
        *,
        kind: str,
        window_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if engine.dialect.name not in ("postgresql", "sqlite"):
            raise ValueError(f"no counters for {engine.dialect.name}")
        self._engine = engine
        self._kind = kind
        self._window = window_seconds
        self._clock = clock
        self._insert: Any = (postgresql if engine.dialect.name == "postgresql" else sqlite).insert

    def hit(self, key: str) -> tuple[int, float]:
        now = self._clock()
        table = SharedCounter.__table__
        ended = table.c.expires_at <= now
        statement = (
            self._insert(table)
            .values(kind=self._kind, key=bounded_key(key), count=1, expires_at=now + self._window)
            .on_conflict_do_update(
                index_elements=[table.c.kind, table.c.key],
                set_={
                    "count": case((ended, 1), else_=table.c.count + 1),
                    "expires_at": case((ended, now + self._window), else_=table.c.expires_at),
                },
            )
            .returning(table.c.count, table.c.expires_at)
        )
        with self._engine.begin() as connection:
            count, expires_at = connection.execute(statement).one()
            if random.randrange(SWEEP_EVERY) == 0:  # noqa: S311 - spreading chores, not secrets
                connection.execute(delete(table).where(ended))
        return int(count), float(expires_at) - now

    def count(self, key: str) -> tuple[int, float]:
        now = self._clock()
        with self._engine.connect() as connection:
            found = connection.execute(
                select(SharedCounter.count, SharedCounter.expires_at).where(
                    SharedCounter.kind == self._kind,
                    SharedCounter.key == bounded_key(key),
                    SharedCounter.expires_at > now,
                )
            ).one_or_none()
        if found is None:
            return 0, 0.0
        return int(found.count), float(found.expires_at) - now
