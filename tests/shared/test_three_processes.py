"""Three API processes (uvicorn, each on a loopback port of its own) on one PostgreSQL database and
a Redis of the test's own: the limits that span requests hold across processes, a new score is
on every process's board at once, and a Redis stopped mid-test costs no request a 500 while
``/readyz`` says why (issue 23).

Client addresses are given with ``X-Forwarded-For``, which each server believes from loopback
(``--proxy-headers``), as it would from a reverse proxy.
"""

import itertools
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from app.auth.service import create_user
from app.db import make_engine, make_session_factory, unit_of_work
from app.models import Role, Submission, SubmissionStatus, User
from tests.conftest import _throwaway_postgres, skip_or_fail
from tests.helpers import API, KEY, PERFECT
from tests.live_server import HTTP, RedisServer, free_port, wait_until_healthy

SECRET = "three-processes-test-secret-0123456789"
PER_MINUTE = 5
PER_ADDRESS = 60
SLUG = "churn"


@dataclass
class Cluster:
    urls: list[str]
    database_url: str
    redis: RedisServer
    host: str  # the host's token
    logs: list[Path]
    _names: Iterator[int]

    def user(self) -> tuple[str, str]:
        """A new participant's name and token (each test its own team, so no rate is shared)."""
        name = f"user{next(self._names)}"
        engine = make_engine(self.database_url)
        with unit_of_work(make_session_factory(engine)) as session:
            _user, token = create_user(session, name=name, role=Role.participant, secret_key=SECRET)
        engine.dispose()
        return name, token


def _bearer(token: str, address: str = "192.0.2.1") -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "X-Forwarded-For": address}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("redis-server") is None:
        skip_or_fail("the three-process tests run their own redis-server")
    root = tmp_path_factory.mktemp("three")
    redis = RedisServer(root)
    redis.start()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for database_url in _throwaway_postgres(migrated=True):
            engine = make_engine(database_url)
            with unit_of_work(make_session_factory(engine)) as session:
                _host, host = create_user(
                    session, name="host", role=Role.organiser, secret_key=SECRET
                )
            engine.dispose()
            env = {
                **os.environ,
                "PODIUM_ENV": "test",
                "PODIUM_DATABASE_URL": database_url,
                "PODIUM_REDIS_URL": redis.url,
                "PODIUM_DATA_DIR": str(root / "data"),
                "PODIUM_SECRET_KEY": SECRET,
                "PODIUM_SCORING_BACKEND": "thread",
                "PODIUM_UPLOADS_PER_MINUTE": str(PER_MINUTE),
                # The address ceiling brought down from 200, so the flood is short.
                "PODIUM_AUTH_FAILURES_PER_ADDRESS": str(PER_ADDRESS),
            }
            urls, logs = [], []
            for index in range(3):
                port = free_port()
                log = root / f"api{index}.log"
                with log.open("wb") as out:
                    processes.append(
                        subprocess.Popen(
                            [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory"]
                            + ["--host", "127.0.0.1", "--port", str(port), "--proxy-headers"]
                            + ["--forwarded-allow-ips", "127.0.0.1"],
                            env=env,
                            stdout=out,
                            stderr=subprocess.STDOUT,
                        )
                    )
                urls.append(f"http://127.0.0.1:{port}")
                logs.append(log)
            for process, url, log in zip(processes, urls, logs, strict=True):
                wait_until_healthy(process, url, log)
            api = httpx.Client(base_url=f"{urls[0]}{API}", headers=_bearer(host), timeout=30)
            body = {
                "slug": SLUG,
                "title": "Churn",
                "metric": {"name": "roc_auc"},
                "daily_submission_limit": 1000,
            }
            assert api.post("/competitions", json=body).status_code == 201
            key = api.put(f"/competitions/{SLUG}/answer-key", files={"file": ("key.csv", KEY)})
            assert key.status_code == 201, key.text
            api.close()
            yield Cluster(urls, database_url, redis, host, logs, itertools.count())
            _assert_every_job_scored_at_its_first_attempt(database_url)
            for process in processes:
                process.terminate()
                process.wait(timeout=30)
            processes.clear()
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
        redis.stop()
    for log in logs:
        # No request failed, and no scoring job: two processes scoring one team's submissions
        # at once take turns on its standings rows (app.db.lock_standings) instead of both
        # inserting them, which failed one job on the unique constraint.
        text = log.read_text()
        assert "Exception in ASGI application" not in text and " 500 " not in text, text[-3000:]
        assert "Traceback" not in text, text[-3000:]


def _assert_every_job_scored_at_its_first_attempt(database_url: str) -> None:
    """Every submission the tests made is scored, each by the first job that took it: a job that
    failed would have left its submission to be handed out again (attempts 2) or failed."""
    engine = make_engine(database_url)
    try:
        for _ in range(600):  # the last uploads' scoring threads; 60 s at most
            with engine.connect() as connection:
                rows = connection.execute(
                    select(Submission.id, Submission.status, Submission.attempts)
                ).all()
            if all(
                status in (SubmissionStatus.scored, SubmissionStatus.failed)
                for _i, status, _a in rows
            ):
                break
            time.sleep(0.1)
        assert rows and {(status, attempts) for _i, status, attempts in rows} == {
            (SubmissionStatus.scored, 1)
        }, rows
    finally:
        engine.dispose()


def _submit(url: str, token: str) -> httpx.Response:
    return HTTP.post(
        f"{url}{API}/competitions/{SLUG}/submissions",
        files={"file": ("sub.csv", PERFECT, "text/csv")},
        headers=_bearer(token),
        timeout=60,
    )


def test_a_teams_upload_rate_holds_exactly_across_processes(cluster):
    name, token = cluster.user()
    targets = [cluster.urls[i % 3] for i in range(3 * PER_MINUTE)]
    with ThreadPoolExecutor(len(targets)) as pool:
        statuses = list(pool.map(lambda url: _submit(url, token).status_code, targets))
    assert sorted(statuses) == [202] * PER_MINUTE + [429] * (2 * PER_MINUTE), statuses
    engine = make_engine(cluster.database_url)
    with engine.connect() as connection:
        kept = connection.scalar(
            select(func.count(Submission.id))
            .join(User, User.id == Submission.user_id)
            .where(User.name == name)
        )
    engine.dispose()
    assert kept == PER_MINUTE


def test_failed_sign_ins_are_counted_across_processes(cluster):
    wrong = _bearer("pdm_not-a-real-token", "198.51.100.20")
    statuses = [
        HTTP.get(f"{cluster.urls[i % 3]}{API}/me", headers=wrong).status_code for i in range(20)
    ]
    assert statuses == [401] * 20  # 7, 7 and 6 per process: none alone is at the limit of 20
    for url in cluster.urls:
        refused = HTTP.get(f"{url}{API}/me", headers=wrong)
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1


def test_a_right_token_from_a_flooded_address_is_answered_200(cluster):
    flooded = "198.51.100.30"
    _name, token = cluster.user()
    clients = [httpx.Client(base_url=url) for url in cluster.urls]
    statuses = [
        clients[i % 3].get(f"{API}/me", headers=_bearer(f"pdm_guess{i}", flooded)).status_code
        for i in range(PER_ADDRESS + 6)
    ]
    assert statuses[:PER_ADDRESS] == [401] * PER_ADDRESS and set(statuses[PER_ADDRESS:]) == {429}
    for client in clients:
        assert client.get(f"{API}/me", headers=_bearer(token, flooded)).status_code == 200
        client.close()


def test_a_new_score_is_on_every_processs_board_and_csv_at_once(cluster):
    me, token = cluster.user()
    board, csv = (
        f"{API}/competitions/{SLUG}/leaderboard",
        f"{API}/competitions/{SLUG}/leaderboard.csv",
    )
    for url in cluster.urls:  # every process renders and keeps the CSV without this team
        assert me not in HTTP.get(f"{url}{csv}").text
    accepted = _submit(cluster.urls[1], token)
    assert accepted.status_code == 202, accepted.text
    _wait_until_scored(cluster, accepted.json()["id"])
    # The board revision is read on every request, so the first read after the score's commit,
    # on any process, already shows it: stronger than the contract's one second, with no clock.
    for url in cluster.urls:
        rows = HTTP.get(f"{url}{board}").json()["rows"]
        assert me in [row["team"] for row in rows]
        assert me in HTTP.get(f"{url}{csv}").text


def _wait_until_scored(cluster: Cluster, submission_id: int) -> None:
    engine = make_engine(cluster.database_url)
    try:
        for _ in range(600):  # the scoring thread of the process that took it; 60 s at most
            with engine.connect() as connection:
                status = connection.scalar(
                    select(Submission.status).where(Submission.id == submission_id)
                )
            if status == SubmissionStatus.scored:
                return
            assert status != SubmissionStatus.failed
            time.sleep(0.1)
        raise AssertionError(f"submission {submission_id} was not scored")
    finally:
        engine.dispose()


def test_redis_stopped_mid_test_answers_no_500_and_readyz_says_why(cluster):
    _name, token = cluster.user()
    assert _submit(cluster.urls[0], token).status_code == 202
    cluster.redis.stop()
    try:
        for url in cluster.urls:
            ready = HTTP.get(f"{url}/readyz")
            assert ready.status_code == 200
            body = ready.json()
            assert body["status"] == "degraded"
            assert body["checks"]["shared_state"].startswith("unreachable")
            assert "counted per process" in body["detail"]
        wrong = _bearer("pdm_while-redis-is-down", "198.51.100.40")
        statuses = [
            HTTP.get(f"{url}{API}/me", headers=wrong).status_code for url in cluster.urls * 8
        ]
        assert set(statuses) == {401}  # each process counts on its own: 8 each, under 20
        for url in cluster.urls:
            assert HTTP.get(f"{url}{API}/me", headers=_bearer(token)).status_code == 200
        # The upload rate falls back to the database's count, exact across processes.
        uploads = [_submit(url, token).status_code for url in cluster.urls * 2]
        assert uploads == [202] * (PER_MINUTE - 1) + [429] * 2
    finally:
        cluster.redis.start()
    for url in cluster.urls:  # back to shared limits once Redis answers again
        assert HTTP.get(f"{url}/readyz").json()["status"] == "ready"
