"""Fixtures of the scoring jobs' tests: a server whose uploads wait to be scored by the test."""

from collections.abc import Iterator

import pytest

from app.main import create_app
from tests.asgi_client import TestClient
from tests.submissions.test_upload_statements import RememberingQueue


@pytest.fixture
def queue() -> RememberingQueue:
    """Remembers the submissions queued, in order, and scores none of them."""
    return RememberingQueue()


@pytest.fixture
def unscored(settings, session_factory, queue) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    app = create_app(settings, session_factory=session_factory, scoring_queue=queue)
    with TestClient(app) as client:
        yield client
