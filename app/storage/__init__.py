"""Stored files: answer keys, metric files, submissions and data files, behind one small interface.

``PODIUM_STORAGE=local`` keeps them under the data directory, ``s3`` in an S3-compatible bucket
laid out the same way (:mod:`app.storage.s3`). Uploads are streamed in chunks and hashed on the
way, never held whole. Two kinds of file:

- content-addressed files (:func:`store_stream`: keys, metric files, submissions), named by their
  SHA-256 under a prefix. The database keeps a reference: a local path, as it always has, or
  ``s3://bucket/key``; :func:`local_file` turns either into a file the scorer can parse (an S3
  object is fetched once into a bounded cache on this machine);
- named blobs (data files, staged uploads) under a key the server makes: ``save_blob`` and friends.
"""

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.config import Settings
from app.errors import NotFound, Unprocessable
from app.storage.base import CHUNK, Backend, Blob, HashingReader
from app.storage.local import LocalBackend
from app.storage.s3 import SCHEME, S3Backend, split_ref

_BLOBS = "blobs"


def backend_for(settings: Settings) -> Backend:
    if settings.storage == "s3":
        return S3Backend(settings)
    return LocalBackend(Path(settings.data_dir))


def iter_chunks(source: BinaryIO) -> Iterator[bytes]:
    """A stored file's bytes for a streamed response, closed at the end."""
    with source:
        while chunk := source.read(CHUNK):
            yield chunk


# --- content-addressed files -------------------------------------------------------------------


@dataclass(frozen=True)
class StoredFile:
    ref: str  # what the database keeps
    path: Path  # a local copy, to check or parse right away
    size: int
    sha256: str


def store_stream(
    source: BinaryIO, *, prefix: str, settings: Settings, max_bytes: int, suffix: str = ".upload"
) -> StoredFile:
    """Store ``source`` under ``prefix`` by its content hash; refuse it past ``max_bytes``.

    The file is written to local disk first (the checks and the scorer parse it from there), then
    published to the store; when the store fails, nothing refers to it and the error is raised.
    """
    backend = backend_for(settings)
    directory = backend.staging_dir(prefix)
    directory.mkdir(parents=True, exist_ok=True)
    reader = HashingReader(source, max_bytes=max_bytes, limit="upload limit")
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := reader.read(CHUNK):
                out.write(chunk)
        if reader.size == 0:
            raise Unprocessable("the uploaded file is empty", extra={"kind": "empty_file"})
        name = f"{reader.sha256}{suffix}"
        final = directory / name
        os.replace(tmp_name, final)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    key = f"{prefix}/{name}"
    backend.publish(final, key)
    return StoredFile(ref=backend.ref(key), path=final, size=reader.size, sha256=reader.sha256)


def local_file(ref: str, *, settings: Settings) -> Path:
    """A local file holding the stored file ``ref``, for parsing (fetched and cached from S3)."""
    if not ref.startswith(SCHEME):
        return Path(ref)
    bucket, key = split_ref(ref)
    backend = S3Backend(settings, bucket=bucket)
    return backend.cache.get(key.rsplit("/", 1)[-1], lambda target: backend.download(key, target))


def open_stored(ref: str, *, settings: Settings) -> BinaryIO:
    """The stored file ``ref`` as a stream, straight from where it is kept."""
    if ref.startswith(SCHEME):
        bucket, key = split_ref(ref)
        return S3Backend(settings, bucket=bucket).open(key)
    try:
        return Path(ref).open("rb")
    except FileNotFoundError:
        raise NotFound("the stored file is missing") from None


def remove_stored(ref: str, *, settings: Settings) -> None:
    """Delete the stored file ``ref`` (and this machine's cached copy); a missing one is fine."""
    if ref.startswith(SCHEME):
        bucket, key = split_ref(ref)
        backend = S3Backend(settings, bucket=bucket)
        backend.delete(key)
        (backend.cache.directory / key.rsplit("/", 1)[-1]).unlink(missing_ok=True)
    else:
        Path(ref).unlink(missing_ok=True)


def check(settings: Settings) -> None:
    """Raise when files cannot be stored now (the data directory, and the bucket if any)."""
    LocalBackend(Path(settings.data_dir)).check()  # S3's local cache lives there too
    if settings.storage == "s3":
        backend_for(settings).check()


# --- named blobs --------------------------------------------------------------------------------
# Kept under "blobs/<key>" in the data directory or the bucket. Keys are made by the server
# ("datafiles/<id>/<uuid>"), never taken from a request.


def save_blob(source: BinaryIO, *, key: str, settings: Settings, max_bytes: int) -> Blob:
    """Stream ``source`` to the blob ``key``, hashing on the way; refuse it past ``max_bytes``."""
    blob = backend_for(settings).write(source, f"{_BLOBS}/{key}", max_bytes=max_bytes)
    return Blob(key=key, size=blob.size, sha256=blob.sha256)


def open_blob(key: str, *, settings: Settings) -> BinaryIO:
    return backend_for(settings).open(f"{_BLOBS}/{key}")


def delete_blob(key: str, *, settings: Settings) -> None:
    backend_for(settings).delete(f"{_BLOBS}/{key}")


def list_blobs(prefix: str, *, settings: Settings) -> list[tuple[str, float]]:
    """The blobs under ``prefix`` ("a/b") with their last-modified times (epoch seconds)."""
    found = backend_for(settings).list(f"{_BLOBS}/{prefix}")
    return [(key.removeprefix(f"{_BLOBS}/"), modified) for key, modified in found]
