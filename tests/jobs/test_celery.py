"""The Celery backend against a real Redis broker and an in-process worker."""

import time

from celery.contrib.testing.worker import start_worker

from app.config import Settings
from app.jobs.queue import CeleryQueue
from app.main import create_app
from tests.asgi_client import TestClient
from tests.databases import migrated
from tests.helpers import API, PERFECT, ready_competition, submit
from tests.jobs.test_jobs import _headers


def test_celery_workers_score_submissions_from_redis(tmp_path, redis_url):
    settings = Settings(
        env="test",
        database_url=f"sqlite:///{tmp_path}/celery.db",
        data_dir=tmp_path / "data",
        secret_key="k" * 32,
        scoring_backend="celery",
        celery_broker_url=redis_url,
    )
    migrated(settings.database_url)
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
