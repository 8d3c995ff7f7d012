"""Stored files: uploads are streamed to disk in chunks, hashed on the way, never held whole."""

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.config import Settings
from app.errors import NotFound, PayloadTooLarge, Unprocessable

CHUNK = 1 << 20


@dataclass(frozen=True)
class StoredFile:
    path: Path
    size: int
    sha256: str


def store_stream(
    source: BinaryIO, *, directory: Path, max_bytes: int, suffix: str = ".upload"
) -> StoredFile:
    """Copy ``source`` into ``directory`` under its content hash; refuse it past ``max_bytes``."""
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(dir=directory, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise PayloadTooLarge(
                        f"the file is larger than the {max_bytes:,}-byte upload limit"
                    )
                digest.update(chunk)
                out.write(chunk)
        if size == 0:
            raise Unprocessable("the uploaded file is empty", extra={"kind": "empty_file"})
        final = directory / f"{digest.hexdigest()}{suffix}"
        os.replace(tmp_name, final)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return StoredFile(path=final, size=size, sha256=digest.hexdigest())


def remove_quietly(path: Path) -> None:
    path.unlink(missing_ok=True)


def copy_file(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


# Named blobs: bytes kept under a storage key (data files, staged uploads). These few functions
# are the whole interface, so another backend (an object store) can sit behind them.


@dataclass(frozen=True)
class Blob:
    key: str
    size: int
    sha256: str


def _blob_path(settings: Settings, key: str) -> Path:
    # Keys are made by the server ("datafiles/<id>/<uuid>"), never taken from a request.
    return Path(settings.data_dir) / "blobs" / key


def save_blob(source: BinaryIO, *, key: str, settings: Settings, max_bytes: int) -> Blob:
    """Stream ``source`` to the blob ``key``, hashing on the way; refuse it past ``max_bytes``."""
    target = _blob_path(settings, key)
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise PayloadTooLarge(f"the file is larger than the {max_bytes:,}-byte limit")
                digest.update(chunk)
                out.write(chunk)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return Blob(key=key, size=size, sha256=digest.hexdigest())


def open_blob(key: str, *, settings: Settings) -> BinaryIO:
    try:
        return _blob_path(settings, key).open("rb")
    except FileNotFoundError:
        raise NotFound("the stored file is missing") from None


def delete_blob(key: str, *, settings: Settings) -> None:
    _blob_path(settings, key).unlink(missing_ok=True)


def list_blobs(prefix: str, *, settings: Settings) -> list[tuple[str, float]]:
    """The blobs under ``prefix`` ("a/b") with their last-modified times (epoch seconds)."""
    root = Path(settings.data_dir) / "blobs"
    directory = root / prefix
    if not directory.is_dir():
        return []
    return [
        (path.relative_to(root).as_posix(), path.stat().st_mtime)
        for path in directory.iterdir()
        if path.is_file() and not path.name.endswith(".part")
    ]
