"""A daemon thread that does one pass of work every ``interval`` seconds, and at once when this
process pokes it (after a commit that wrote something for it), with a chore run less often. The
mail sender and the events thread are two of these; several processes may run each (their rows
are claimed under leases)."""

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

Waker = Callable[[], None]


class WokenLoop:
    def __init__(
        self,
        name: str,
        work: Callable[[], object],
        *,
        interval: float,
        wakers: tuple[Callable[[Waker], None], Callable[[Waker], None]] | None = None,
        chore: Callable[[], object] | None = None,
        chore_every: float = 600.0,
    ) -> None:
        """``wakers``: (register, unregister) of the registry whose commits poke this loop;
        ``chore``: clean-up run at start and then every ``chore_every`` seconds."""
        self._name, self._work, self._interval = name, work, interval
        self._wakers = wakers
        self._chore, self._chore_every = chore, chore_every
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _poke(self) -> None:
        self._wake.set()

    def start(self) -> None:
        if self._wakers is not None:
            self._wakers[0](self._poke)
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._wakers is not None:
            self._wakers[1](self._poke)
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        last_chore: float | None = None
        while not self._stop.is_set():
            self._attempt(self._work, "pass")
            now = time.monotonic()
            if self._chore is not None and (
                last_chore is None or now - last_chore >= self._chore_every
            ):
                last_chore = now
                self._attempt(self._chore, "chore")
            self._wake.wait(self._interval)
            self._wake.clear()

    def _attempt(self, step: Callable[[], object], what: str) -> None:
        try:
            step()
        except Exception:  # noqa: BLE001 - the database may be away; the next pass retries
            log.warning("%s: %s failed", self._name, what, exc_info=True)
