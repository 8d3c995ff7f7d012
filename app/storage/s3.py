"""Objects in an S3-compatible store (AWS S3, MinIO, Ceph...), through boto3.

Uploads are streamed: a file larger than one part goes up as a multipart upload, one part in
memory at a time, hashed on the way, and aborted on any failure, so a refused or interrupted
upload leaves no object behind. An unreachable or failing store raises :class:`StorageUnavailable`
(answered 503 with Retry-After), a missing object :class:`NotFound`.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from app.config import Settings
from app.errors import NotFound, StorageUnavailable
from app.storage.base import CHUNK, Blob, HashingReader
from app.storage.cache import LocalCache

log = logging.getLogger(__name__)

SCHEME = "s3://"
# Errors a store gives while it is overloaded or restarting: worth coming back for.
_TRANSIENT_CODES = {"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout"}
_MISSING_CODES = {"NoSuchKey", "NotFound", "404"}
# Exceptions that mean "the store is not answering" rather than "the request was wrong".
OUTAGES: tuple[type[Exception], ...] = (BotoConnectionError, HTTPClientError)


def is_outage(exc: BaseException) -> bool:
    if isinstance(exc, OUTAGES):
        return True
    if isinstance(exc, ClientError):
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        code = str(exc.response.get("Error", {}).get("Code", ""))
        return status >= 500 or code in _TRANSIENT_CODES or code == "NoSuchBucket"
    return False


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Turn boto's errors into the service's: an outage, a missing object, or as it was."""
    try:
        yield
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in _MISSING_CODES:
            raise NotFound("the stored file is missing") from None
        if not is_outage(exc):
            raise
        log.warning("storage unavailable while trying to %s: %s", action, exc)
        raise StorageUnavailable(reason=_reason(code)) from exc
    except OUTAGES as exc:
        log.warning("storage unreachable while trying to %s: %s", action, exc)
        raise StorageUnavailable() from exc


def _reason(code: str) -> str:
    return "storage_misconfigured" if code == "NoSuchBucket" else "storage_unreachable"


def split_ref(ref: str) -> tuple[str, str]:
    """``s3://bucket/key`` as (bucket, key)."""
    bucket, _, key = ref.removeprefix(SCHEME).partition("/")
    return bucket, key


@lru_cache(maxsize=8)
def _client(
    endpoint_url: str | None,
    region: str,
    access_key: str | None,
    secret_key: str | None,
    *,
    quick: bool = False,
) -> Any:
    # Imported when a client is made: boto3 and botocore's config cost a quarter of a second
    # at every start of a server, worker or command, and most installations store locally.
    import boto3
    from botocore.config import Config

    # ``quick``: one try with short timeouts, for a readiness probe that must answer at once.
    config = Config(
        connect_timeout=2 if quick else 3,
        read_timeout=2 if quick else 30,
        retries={"max_attempts": 1 if quick else 3, "mode": "standard"},
        # Path-style addressing: what MinIO and other self-hosted stores answer to.
        s3={"addressing_style": "path" if endpoint_url else "auto"},
        # Checksums only where the API requires them: not every S3-compatible store takes the
        # newer default ones.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    # A session of its own: boto3's default session is not safe to share between threads.
    return boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=region,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        config=config,
    )


def client_for(settings: Settings, *, quick: bool = False) -> Any:
    return _client(
        settings.s3_endpoint_url,
        settings.s3_region,
        settings.s3_access_key_id,
        settings.s3_secret_access_key,
        quick=quick,
    )


class S3Backend:
    def __init__(self, settings: Settings, *, bucket: str | None = None) -> None:
        self.settings = settings
        self.client = client_for(settings)
        self.bucket = bucket or settings.s3_bucket
        self.part_bytes = settings.s3_part_bytes
        self.cache = LocalCache(
            Path(settings.data_dir) / "store-cache", max_bytes=settings.storage_cache_bytes
        )

    def write(self, source: BinaryIO, key: str, *, max_bytes: int) -> Blob:
        reader = HashingReader(source, max_bytes=max_bytes)
        parts = self._parts(reader)
        first = next(parts)
        second = next(parts, None)
        with translated("store a file"):
            if not second:
                self.client.put_object(Bucket=self.bucket, Key=key, Body=first)
            else:
                self._multipart(key, first, second, parts)
        return Blob(key=key, size=reader.size, sha256=reader.sha256)

    def _parts(self, reader: HashingReader) -> Iterator[bytes]:
        """``reader`` cut into parts of ``part_bytes`` (the last shorter; at least one part)."""
        buffer = bytearray()
        while chunk := reader.read(CHUNK):
            buffer += chunk
            if len(buffer) >= self.part_bytes:
                yield bytes(memoryview(buffer)[: self.part_bytes])
                del buffer[: self.part_bytes]
        yield bytes(buffer)

    def _multipart(self, key: str, first: bytes, second: bytes, rest: Iterator[bytes]) -> None:
        upload_id = self.client.create_multipart_upload(Bucket=self.bucket, Key=key)["UploadId"]
        done = []
        try:
            for number, body in enumerate(_chain(first, second, rest), start=1):
                if not body:
                    break  # the file ended exactly at a part boundary
                answer = self.client.upload_part(
                    Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body
                )
                done.append({"PartNumber": number, "ETag": answer["ETag"]})
            self.client.complete_multipart_upload(
                Bucket=self.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": done}
            )
        except BaseException:
            try:
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id)
            except Exception:  # noqa: BLE001 - the store may be down; its lifecycle rule cleans up
                log.warning("could not abort the multipart upload of %s", key)
            raise

    def staging_dir(self, prefix: str) -> Path:
        return self.cache.directory

    def publish(self, path: Path, key: str) -> None:
        # Content-addressed: an object already under this key holds the same bytes.
        if not self._exists(key):
            with path.open("rb") as source:
                self.write(source, key, max_bytes=path.stat().st_size)
        self.cache.evict(keep=path)

    def _exists(self, key: str) -> bool:
        try:
            with translated("look up a file"):
                self.client.head_object(Bucket=self.bucket, Key=key)
        except NotFound:
            return False
        return True

    def open(self, key: str) -> BinaryIO:
        with translated("read a file"):
            body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
        return _Body(body)  # type: ignore[return-value]

    def download(self, key: str, target: Path) -> None:
        with self.open(key) as source, target.open("wb") as out:
            while chunk := source.read(CHUNK):
                out.write(chunk)

    def delete(self, key: str) -> None:
        with translated("delete a file"):
            self.client.delete_object(Bucket=self.bucket, Key=key)

    def list(self, prefix: str) -> list[tuple[str, float]]:
        found = []
        with translated("list files"):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix.rstrip("/") + "/"
            )
            for page in pages:
                for item in page.get("Contents", []):
                    found.append((item["Key"], item["LastModified"].timestamp()))
        return found

    def ref(self, key: str) -> str:
        return f"{SCHEME}{self.bucket}/{key}"

    def check(self) -> None:
        client_for(self.settings, quick=True).head_bucket(Bucket=self.bucket)


class _Body:
    """An object's streamed body: read errors become outages, like every other call's."""

    def __init__(self, body: Any) -> None:
        self._body = body

    def read(self, n: int = -1) -> bytes:
        with translated("read a file"):
            return bytes(self._body.read(n if n >= 0 else None))

    def close(self) -> None:
        self._body.close()

    def __enter__(self) -> "_Body":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _chain(first: bytes, second: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield second
    yield from rest
