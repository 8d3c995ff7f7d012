"""Files under the data directory: written to a temporary file beside the target, then renamed,
so a reader never sees half a file."""

import os
import tempfile
from pathlib import Path
from typing import BinaryIO

from app.errors import NotFound
from app.storage.base import CHUNK, Blob, HashingReader


class LocalBackend:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key

    def write(self, source: BinaryIO, key: str, *, max_bytes: int) -> Blob:
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        reader = HashingReader(source, max_bytes=max_bytes)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := reader.read(CHUNK):
                    out.write(chunk)
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        return Blob(key=key, size=reader.size, sha256=reader.sha256)

    def staging_dir(self, prefix: str) -> Path:
        return self._path(prefix)

    def publish(self, path: Path, key: str) -> None:
        target = self._path(key)
        if path != target:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)

    def open(self, key: str) -> BinaryIO:
        try:
            return self._path(key).open("rb")
        except FileNotFoundError:
            raise NotFound("the stored file is missing") from None

    def download(self, key: str, target: Path) -> None:
        with self.open(key) as source, target.open("wb") as out:
            while chunk := source.read(CHUNK):
                out.write(chunk)

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list(self, prefix: str) -> list[tuple[str, float]]:
        directory = self._path(prefix)
        if not directory.is_dir():
            return []
        return [
            (path.relative_to(self.root).as_posix(), path.stat().st_mtime)
            for path in directory.iterdir()
            if path.is_file() and not path.name.endswith(".part")
        ]

    def ref(self, key: str) -> str:
        # A path, as the database has always kept for local files (relative when data_dir is).
        return str(self._path(key))

    def check(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if not os.access(self.root, os.W_OK):
            raise PermissionError(f"{self.root} is not writable")
        usage = os.statvfs(self.root)
        if usage.f_bavail * usage.f_frsize < 16 * 1024 * 1024:
            raise OSError(f"{self.root} has less than 16 MB free")
