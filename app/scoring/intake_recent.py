"""The aligned predictions of recently read small submissions, kept in this process.

A scored upload's file is read three times within moments: to score it, to bootstrap its
intervals, and, as the team's best so far, when its next submission's Ladder threshold is worked
out. For a small file each read costs more than the metric. What is kept is what
:func:`app.scoring.intake.read_submission` returned for the same file (its path, size, mtime and
inode), the same key table object, metric and limits; a copy is handed out, so no caller can
change what another gets. Only files that were read without error are kept (a refused file is
read again each time, and refused the same way), and only small results, within a total.
"""

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import numpy as np

# Results up to this size are kept (a 100,000-row single-target key: 800 kB), up to this total
# and this many files (each holds its key table, which is no larger than a few times the entry).
MAX_ENTRY_BYTES = 1 << 20
MAX_TOTAL_BYTES = 64 << 20
MAX_ENTRIES = 4096


class RecentPredictions:
    """A least-recently-used table of predictions, bounded by their bytes; thread-safe."""

    def __init__(
        self,
        *,
        max_entry_bytes: int = MAX_ENTRY_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self.max_entry_bytes = max_entry_bytes
        self.max_total_bytes = max_total_bytes
        self.max_entries = max_entries
        # key -> (the key table it was aligned with, held so that its id is not reused; values)
        self._entries: OrderedDict[Hashable, tuple[Any, np.ndarray]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def read(
        self,
        path: Path,
        *,
        table: Any,
        variant: Hashable,
        read: Callable[[], np.ndarray],
    ) -> np.ndarray:
        """``read()``'s result for this file, key ``table`` and ``variant`` (metric, limits),
        from the table when the same file was read the same way before."""
        try:
            stat = os.stat(path)
        except OSError:
            return read()  # the reader says what is wrong with it
        key = (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino, id(table), variant)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] is table:
                self._entries.move_to_end(key)
                return found[1].copy()
        values = read()
        if values.nbytes <= self.max_entry_bytes:
            kept = values.copy()
            with self._lock:
                if key not in self._entries:
                    self._entries[key] = (table, kept)
                    self._bytes += kept.nbytes
                while self._entries and (
                    self._bytes > self.max_total_bytes or len(self._entries) > self.max_entries
                ):
                    _, (_, dropped) = self._entries.popitem(last=False)
                    self._bytes -= dropped.nbytes
        return values

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)


RECENT = RecentPredictions()
