"""What every storage backend offers, and the streaming reader both use to hash and count bytes.

Keys are relative paths made by the server ("submissions/3/7/<sha256>.upload"), never taken from
a request; the local backend keeps them under the data directory, the S3 backend in its bucket
under the same names, so the bucket mirrors the data directory's layout.
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from app.errors import PayloadTooLarge

CHUNK = 1 << 20


@dataclass(frozen=True)
class Blob:
    key: str
    size: int
    sha256: str


class Backend(Protocol):
    def write(self, source: BinaryIO, key: str, *, max_bytes: int) -> Blob:
        """Stream ``source`` to ``key``, hashing on the way; all of it or nothing."""

    def staging_dir(self, prefix: str) -> Path:
        """The local directory where a content-addressed file for ``prefix`` is written before it
        is published (for the local backend, its final directory)."""

    def publish(self, path: Path, key: str) -> None:
        """Make the finished local file ``path`` the object ``key`` (a no-op where it is already)."""

    def open(self, key: str) -> BinaryIO:
        """The object's bytes as a stream (NotFound when missing)."""

    def download(self, key: str, target: Path) -> None:
        """Copy the object into the local file ``target``."""

    def delete(self, key: str) -> None:
        """Remove the object; a missing one is fine."""

    def list(self, prefix: str) -> list[tuple[str, float]]:
        """The keys under ``prefix/`` with their last-modified times (epoch seconds)."""

    def ref(self, key: str) -> str:
        """The reference kept in the database for ``key``."""

    def check(self) -> None:
        """Raise when the store cannot be used now."""


class HashingReader:
    """Reads ``source`` in chunks, hashing and counting, and refuses it past ``max_bytes``."""

    def __init__(self, source: BinaryIO, *, max_bytes: int, limit: str = "limit") -> None:
        self.source = source
        self.max_bytes = max_bytes
        self.limit = limit
        self.digest = hashlib.sha256()
        self.size = 0

    def read(self, n: int = CHUNK) -> bytes:
        chunk = self.source.read(n)
        self.size += len(chunk)
        if self.size > self.max_bytes:
            raise PayloadTooLarge(
                f"the file is larger than the {self.max_bytes:,}-byte {self.limit}"
            )
        self.digest.update(chunk)
        return chunk

    @property
    def sha256(self) -> str:
        return self.digest.hexdigest()
