"""Whole boards as rendered for download, kept per process and bounded in memory.

An entry is filed under what decides its bytes (competition, answer-key version, board, and the
viewer's class: a host's full precision or the participants' rounding) and tagged with the
competition's board revision (:class:`app.models.BoardRevision`) read before the rows were. Every transaction that writes a
standing bumps that revision (:mod:`app.leaderboard.standings`), so a reader that finds its own
revision on an entry gets bytes at least as new as the standings it would have read. Nothing in
an entry is particular to one user: the caller's own row and the Ladder's view are never cached.
"""

import threading
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class BoardView:
    competition_id: int
    key_id: int
    board: str
    host: bool
    score_decimals: int | None


class RenderedBoards:
    """A least-recently-used map of rendered boards, at most ``max_entries`` and ``max_bytes``."""

    def __init__(self, *, max_entries: int = 64, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._entries: OrderedDict[BoardView, tuple[int, bytes]] = OrderedDict()
        self._bytes = 0
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._lock = threading.Lock()

    def get(self, view: BoardView, revision: int) -> bytes | None:
        with self._lock:
            found = self._entries.get(view)
            if found is None or found[0] != revision:
                return None
            self._entries.move_to_end(view)
            return found[1]

    def put(self, view: BoardView, revision: int, body: bytes) -> None:
        if len(body) > self._max_bytes:
            return
        with self._lock:
            old = self._entries.get(view)
            if old is not None:
                if old[0] > revision:
                    return  # a slower reader of an older revision: keep the newer bytes
                self._bytes -= len(old[1])
            self._entries[view] = (revision, body)
            self._entries.move_to_end(view)
            self._bytes += len(body)
            while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= len(dropped)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return self._bytes
