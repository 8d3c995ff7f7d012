"""Fault tests against the machine's real PostgreSQL and a Redis of the test's own: Celery workers
(`podium worker` processes) score every submission exactly once, whatever dies.

Leases, grace periods and sweeps are made short through the settings; the sweep runs here, in
the test, where beat would run it in a deployment.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.auth.service import create_user
from app.config import Settings
from app.db import make_engine, make_session_factory, unit_of_work
from app.jobs.sweep import sweep
from app.main import create_app
from app.models import Role, Score, Submission, SubmissionStatus
from tests.asgi_client import TestClient
from tests.conftest import _throwaway_postgres
from tests.databases import migrated
from tests.helpers import API, PERFECT, ParkedQueue, predictions, ready_competition
from tests.live_server import HTTP, RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]

STUCK_METRIC = b"""
import time


def score(solution, submission, row_id_column_name):
    # The key's own check at upload is quick; a participant's file never finishes: the attempt
    # the test kills cannot have scored it, however slow the machine.
    if len(submission.columns) and submission.iloc[0, 1] != solution.iloc[0, 1]:
        time.sleep(3600)
    return 1.0
"""
# Put in place once the first attempt is dead, so that only a second attempt can score.
QUICK_METRIC = b"""
def score(solution, submission, row_id_column_name):
    return 1.0
"""

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None and os.environ.get("CI") != "true",
    reason="the fault tests run their own redis-server",
)


@dataclass
class Stack:
    settings: Settings
    env: dict[str, str]
    factory: sessionmaker[Session]
    redis: RedisServer
    tmp_path: Path
    workers: list[subprocess.Popen[bytes]]

    def start_worker(self, *options: str) -> subprocess.Popen[bytes]:
        log = open(self.tmp_path / f"worker-{len(self.workers)}.log", "wb")  # noqa: SIM115
        worker = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker", "--loglevel", "WARNING", *options],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.workers.append(worker)
        return worker

    def counts(self) -> dict[str, int]:
        with self.factory() as session:
            rows = session.execute(
                select(Submission.status, func.count()).group_by(Submission.status)
            )
            return {str(getattr(s, "value", s)): n for s, n in rows}

    def score_rows(self) -> dict[int, int]:
        with self.factory() as session:
            rows = session.execute(
                select(Score.submission_id, func.count()).group_by(Score.submission_id)
            )
            return dict(rows.all())

    def wait_until_settled(
        self, total: int, enqueue, timeout: float = 240, enqueue_code=None
    ) -> None:  # type: ignore[no-untyped-def]
        """Sweep as beat would, until every submission is scored or failed (code runs go to
        ``enqueue_code`` when given, their own queue)."""
        deadline = time.monotonic() + timeout
        while True:
            counts = self.counts()
            if counts.get("scored", 0) + counts.get("failed", 0) == total:
                return
            assert time.monotonic() < deadline, f"not settled: {counts}"
            sweep(self.factory, enqueue, settings=self.settings, enqueue_code=enqueue_code)
            time.sleep(0.5)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    redis = RedisServer(tmp_path)
    redis.start()
    for database_url in _throwaway_postgres(migrated=True):
        values = {
            "env": "test",
            "database_url": database_url,
            "data_dir": str(tmp_path / "data"),
            "secret_key": "f" * 40,
            "scoring_backend": "celery",
            "celery_broker_url": redis.url,
            "scoring_lease_seconds": "2",
            "sweep_grace_seconds": "2",
            "sweep_interval_seconds": "1",
        }
        env = {**os.environ, **{f"PODIUM_{k.upper()}": v for k, v in values.items()}}
        settings = Settings(**values)  # type: ignore[arg-type]
        factory = make_session_factory(make_engine(database_url))
        result = Stack(settings, env, factory, redis, tmp_path, [])
        try:
            yield result
        finally:
            for worker in result.workers:
                if worker.poll() is None:
                    worker.kill()
                worker.wait()
            redis.stop()
            factory.kw["bind"].dispose()


def _callers(stack: Stack, names: list[str]) -> dict[str, dict[str, str]]:
    callers = {}
    with unit_of_work(stack.factory) as session:
        for name in names:
            role = Role.organiser if name == "host" else Role.participant
            token = create_user(session, name=name, role=role, secret_key="f" * 40)[1]
            callers[name] = {"Authorization": f"Bearer {token}"}
    return callers


def _upload(client: TestClient, headers: dict[str, str], content: bytes) -> int:
    response = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("sub.csv", content, "text/csv")},
        headers=headers,
    )
    assert response.status_code == 202, response.text
    return response.json()["id"]


def _assert_each_scored_once(stack: Stack, ids: list[int]) -> None:
    rows = stack.score_rows()
    assert {i: rows.get(i, 0) for i in ids} == {i: 1 for i in ids}
    counts = stack.counts()
    assert counts.get("queued", 0) == 0 and counts.get("scoring", 0) == 0, counts


def test_two_workers_score_200_submissions_from_20_teams_exactly_once(stack):
    names = ["host"] + [f"p{i:02d}" for i in range(20)]
    callers = _callers(stack, names)
    stack.start_worker()
    stack.start_worker()
    app = create_app(stack.settings)
    with TestClient(app) as client:
        ready_competition(client, callers["host"], daily_submission_limit=10)
        ids = []
        for round_ in range(10):
            for name in names[1:]:
                ids.append(
                    _upload(
                        client,
                        callers[name],
                        predictions(a=0.9, b=0.1 * (round_ % 5), c=0.8, d=0.2, e=0.7, f=0.3),
                    )
                )
        stack.wait_until_settled(len(ids), app.state.scoring_queue.enqueue, timeout=600)
    assert stack.counts() == {"scored": 200}
    _assert_each_scored_once(stack, ids)


def _stuck_competition(client: TestClient, host: dict[str, str]) -> None:
    ready_competition(client, host, metric={"name": "custom"})
    _put_metric(client, host, STUCK_METRIC)


def _put_metric(client: TestClient, host: dict[str, str], source: bytes) -> None:
    response = client.put(
        f"{API}/competitions/churn/custom-metric",
        files={"file": ("metric.py", source, "text/x-python")},
        data={"direction": "maximize"},
        headers=host,
    )
    assert response.status_code == 200, response.text


def _wait_for_status(stack: Stack, submission_id: int, status: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with stack.factory() as session:
            if session.get(Submission, submission_id).status == status:
                return
        assert time.monotonic() < deadline, f"submission {submission_id} never {status}"
        time.sleep(0.05)


def test_a_worker_killed_mid_scoring_is_replaced_and_the_submission_scored_once(stack):
    callers = _callers(stack, ["host", "alice"])
    app = create_app(stack.settings)
    with TestClient(app) as client:
        _stuck_competition(client, callers["host"])
        submission_id = _upload(client, callers["alice"], PERFECT)
        first = stack.start_worker()
        _wait_for_status(stack, submission_id, SubmissionStatus.scoring)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        _put_metric(client, callers["host"], QUICK_METRIC)
        stack.start_worker()
        stack.wait_until_settled(1, app.state.scoring_queue.enqueue)
    _assert_each_scored_once(stack, [submission_id])
    with stack.factory() as session:
        submission = session.get(Submission, submission_id)
        assert submission.status == SubmissionStatus.scored and submission.attempts == 2


def test_uploads_succeed_while_redis_is_down_and_the_sweep_delivers_them(stack):
    callers = _callers(stack, ["host", "alice"])
    app = create_app(stack.settings)
    with TestClient(app) as client:
        ready_competition(client, callers["host"])
        stack.redis.stop()
        ids = [_upload(client, callers["alice"], PERFECT) for _ in range(3)]
        assert stack.counts() == {"queued": 3}
        stack.redis.start()  # an empty Redis: whatever was published before is gone too
        stack.start_worker()
        stack.wait_until_settled(3, app.state.scoring_queue.enqueue)
    assert stack.counts() == {"scored": 3}
    _assert_each_scored_once(stack, ids)


def _serve(tmp_path: Path, env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    log = open(tmp_path / f"server-{port}.log", "ab")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
        + ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    import httpx

    deadline = time.monotonic() + 60
    while True:
        try:
            if HTTP.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        assert server.poll() is None, (tmp_path / f"server-{port}.log").read_text()
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)


def test_a_server_killed_mid_scoring_scores_the_submission_once_after_a_restart(tmp_path):
    import httpx

    database_url = f"sqlite:///{tmp_path}/podium.db"
    migrated(database_url)
    values = {
        "env": "test",
        "database_url": database_url,
        "data_dir": str(tmp_path / "data"),
        "secret_key": "f" * 40,
        "scoring_backend": "thread",
        "scoring_lease_seconds": "2",
        "sweep_grace_seconds": "2",
        "sweep_interval_seconds": "1",
    }
    env = {**os.environ, **{f"PODIUM_{k.upper()}": v for k, v in values.items()}}
    factory = make_session_factory(make_engine(database_url))
    stack = Stack(Settings(**values), env, factory, None, tmp_path, [])  # type: ignore[arg-type]
    callers = _callers(stack, ["host", "alice"])
    port = free_port()
    server = _serve(tmp_path, env, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            _stuck_competition(client, callers["host"])  # type: ignore[arg-type]
            submission_id = _upload(client, callers["alice"], PERFECT)  # type: ignore[arg-type]
            _wait_for_status(stack, submission_id, SubmissionStatus.scoring)
            os.kill(server.pid, signal.SIGKILL)
            server.wait()
        # The quick metric goes in while no server runs (an app of this process, whose queue
        # runs nothing): the restarted server's first sweep may hand the submission out at once.
        with TestClient(create_app(stack.settings, scoring_queue=ParkedQueue())) as parked:
            _put_metric(parked, callers["host"], QUICK_METRIC)
        server = _serve(tmp_path, env, port)
        deadline = time.monotonic() + 120
        while stack.counts() != {"scored": 1}:
            assert time.monotonic() < deadline, stack.counts()
            time.sleep(0.2)
    finally:
        server.kill()
        server.wait()
        factory.kw["bind"].dispose()
    _assert_each_scored_once(stack, [submission_id])
    with (
        stack.factory() as session
    ):  # scored by the attempt after the kill, the only one that could
        assert session.get(Submission, submission_id).attempts == 2
