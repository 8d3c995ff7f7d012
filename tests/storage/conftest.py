"""An S3 store for these tests: PODIUM_STORAGE=s3 against moto's server on loopback."""

from collections.abc import Iterator

import httpx
import pytest

from app.config import Settings
from tests.storage.moto_store import BUCKET, PART, MotoS3, store


@pytest.fixture
def moto_s3() -> Iterator[MotoS3]:
    server = MotoS3()
    server.start()
    try:
        yield server
    finally:
        if server.server is None:
            server.start()
        # moto keeps its state per process: forget this test's buckets.
        httpx.post(f"{server.url}/moto-api/reset", timeout=10)
        server.stop()


@pytest.fixture
def settings(settings: Settings, moto_s3: MotoS3) -> Settings:
    """The suite's settings with PODIUM_STORAGE=s3 against the moto server, bucket created."""
    s3 = settings.model_copy(
        update={
            "storage": "s3",
            "s3_endpoint_url": moto_s3.url,
            "s3_bucket": BUCKET,
            "s3_access_key_id": "testing",
            "s3_secret_access_key": "testing",
            "s3_part_bytes": PART,
        }
    )
    store(s3).create_bucket(Bucket=BUCKET)
    return s3
