"""Stored files: uploads are streamed to disk in chunks, hashed on the way, never held whole."""

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.errors import PayloadTooLarge, Unprocessable

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
