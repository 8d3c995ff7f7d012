"""The Celery backend against a real Redis broker and an in-process worker."""

import os
import time

import pytest
from celery.contrib.testing.worker import start_worker
from fastapi.testclient import TestClient

from app.config import Settings
from app.jobs.queue import CeleryQueue
from app.main import create_app
from app.migrate import upgrade
from tests.helpers import API, PERFECT, ready_competition, submit
from tests.jobs.test_jobs import _headers

REDIS_ENV = "PODIUM_TEST_REDIS_URL"


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get(REDIS_ENV)
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{REDIS_ENV} must be set when CI=true")
        pytest.skip(f"the Celery tests need {REDIS_ENV}, e.g. redis://127.0.0.1:6379/15")
    import redis

    redis.Redis.from_url(url).flushdb()
    return url


def test_celery_workers_score_submissions_from_redis(tmp_path, redis_url):
    settings = Settings(
        env="test",
        database_url=f"sqlite:///{tmp_path}/celery.db",
        data_dir=tmp_path / "data",
        secret_key="k" * 32,
        scoring_backend="celery",
        celery_broker_url=redis_url,
    )
    upgrade(settings.database_url)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    app = create_app(settings)
    queue = app.state.scoring_queue
    assert isinstance(queue, CeleryQueue)
    with TestClient(app) as client:
        ready_competition(client, host)
        submission_id = submit(client, alice, PERFECT).json()["id"]
        with start_worker(queue.celery, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                view = client.get(f"{API}/submissions/{submission_id}", headers=alice).json()
                if view["status"] == "scored":
                    break
                time.sleep(0.1)
        assert view["status"] == "scored" and view["public_score"] == 1.0
