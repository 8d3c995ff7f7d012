"""The local copies a scorer parses (pyarrow, mmap) of files kept in an object store.

Entries are named by content (``<sha256><suffix>``), so a key version fetched once is reused by
every job on this machine, and two teams' identical files share one entry. The directory is kept
under a byte budget by evicting the least recently used entries (a hit touches its entry); the
entry just fetched is never the one evicted. An entry is written to a temporary file and renamed,
so a reader never sees half of one; an unlinked entry stays readable to whoever has it open.
"""

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

_PARTIAL = ".part"


class LocalCache:
    def __init__(self, directory: Path, *, max_bytes: int) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes

    def find(self, name: str) -> Path | None:
        """The entry ``name`` when it is here (a hit: now the most recently used), else None."""
        entry = self.directory / name
        try:
            os.utime(entry)
        except FileNotFoundError:
            return None
        return entry

    def get(self, name: str, fetch: Callable[[Path], None]) -> Path:
        """The entry ``name``, fetched with ``fetch(temporary_path)`` when it is not here."""
        entry = self.directory / name
        try:
            os.utime(entry)  # a hit: now the most recently used
            return entry
        except FileNotFoundError:
            pass
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=_PARTIAL)
        os.close(fd)
        try:
            fetch(Path(tmp_name))
            os.replace(tmp_name, entry)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        self.evict(keep=entry)
        return entry

    def evict(self, *, keep: Path | None = None) -> None:
        """Remove the least recently used entries until the directory is within its budget."""
        entries = []
        total = 0
        try:
            listing = list(os.scandir(self.directory))
        except FileNotFoundError:
            return
        for item in listing:
            if item.name.endswith(_PARTIAL) or not item.is_file(follow_symlinks=False):
                continue
            try:
                stat = item.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # evicted by another process meanwhile
            total += stat.st_size
            entries.append((stat.st_mtime_ns, stat.st_size, Path(item.path)))
        entries.sort()
        for _mtime, size, path in entries:
            if total <= self.max_bytes:
                break
            if keep is not None and path == keep:
                continue
            path.unlink(missing_ok=True)
            total -= size
            log.debug("store cache: evicted %s", path.name)
