"""A real ``podium worker -Q code`` process takes code runs from Redis and runs them in the real
jail, end to end; a worker, or a server running code itself, killed in the middle of a run
leaves no process, mount or control group behind, and the run is handed out again.

The stack (PostgreSQL, a Redis of the test's own, short leases) is tests/jobs/test_faults.py's;
the sweep runs in the test, where beat would run it in a deployment."""

import os
import signal
import time
import uuid
from functools import partial
from pathlib import Path

import redis

from app.config import Settings
from app.db import make_engine, make_session_factory
from app.jobs.names import DEFAULT_QUEUE
from app.main import create_app
from app.models import Submission, SubmissionStatus
from tests.asgi_client import TestClient
from tests.custom_metrics.processes import processes_with_argument
from tests.databases import migrated
from tests.helpers import API, PERFECT, ready_competition
from tests.jobs import test_faults
from tests.jobs.test_code_turns import KEY
from tests.jobs.test_faults import Stack, _callers, _serve, _upload
from tests.live_server import free_port

PREDICTIONS = "id,y\na,1.5\nb,2.0\n"
stack = test_faults.stack  # the fixture: PostgreSQL, a Redis of its own, short leases
pytestmark = test_faults.pytestmark  # it runs its own redis-server

WRITES = f"open('submission.csv', 'w').write({PREDICTIONS!r})\n"


def _code_competition(client: TestClient, host: dict[str, str], *, wall_seconds: float) -> None:
    body = {
        "slug": "code",
        "title": "Code",
        "metric": {"name": "rmse"},
        "phases": [
            {
                "name": "main",
                "submission_kind": "code",
                "code_limits": {"wall_seconds": wall_seconds, "memory_mb": 512, "working_mb": 16},
            }
        ],
    }
    made = client.post(f"{API}/competitions", json=body, headers=host)
    assert made.status_code == 201, made.text
    key = client.put(
        f"{API}/competitions/code/answer-key",
        files={"file": ("key.csv", KEY, "text/csv")},
        headers=host,
    )
    assert key.status_code in (200, 201), key.text


def _submit_code(client: TestClient, caller: dict[str, str], source: str) -> int:
    response = client.post(
        f"{API}/competitions/code/submissions",
        files={"file": ("main.py", source.encode(), "text/x-python")},
        headers=caller,
    )
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _submission(stack: Stack, submission_id: int) -> Submission:
    with stack.factory() as session:
        return session.get(Submission, submission_id)


def test_a_code_worker_runs_code_from_redis_in_the_jail_and_leaves_file_scoring_alone(stack):
    callers = _callers(stack, ["host", "alice"])
    app = create_app(stack.settings)
    with TestClient(app) as client:
        # A file submission first, for the default queue: ahead of the code run, and not this
        # worker's to take.
        ready_competition(client, callers["host"])
        file_id = _upload(client, callers["alice"], PERFECT)
        _code_competition(client, callers["host"], wall_seconds=60)
        code_id = _submit_code(client, callers["alice"], WRITES)
        stack.start_worker("-Q", "code")
        stack.wait_until_settled(1, app.state.scoring_queue.enqueue)
        view = client.get(f"{API}/submissions/{code_id}", headers=callers["alice"]).json()
    ran = _submission(stack, code_id)
    assert ran.status == SubmissionStatus.scored and ran.attempts == 1, ran.error
    assert view["public_score"] == 0.5  # |1.5 - 1.0| on the public row: the code's own file
    assert _submission(stack, file_id).status == SubmissionStatus.queued
    assert redis.Redis.from_url(stack.redis.url).llen(DEFAULT_QUEUE) >= 1  # still waiting there


def _mounts() -> set[str]:
    return set(Path("/proc/self/mounts").read_text().splitlines())


def _groups_of(pid: int) -> list[Path]:
    """Control groups named for the runs of process ``pid`` (v2, or v1's controllers)."""
    root = Path("/sys/fs/cgroup")
    found: list[Path] = []
    for base in [root, *(p for p in root.iterdir() if p.is_dir())] if root.is_dir() else []:
        found += base.rglob(f"podium-run-{pid}-*")
    return found


def test_a_worker_killed_mid_run_leaves_nothing_and_the_run_is_handed_out_again(stack):
    callers = _callers(stack, ["host", "alice"])
    marker = f"90.{uuid.uuid4().int % 10**9}"  # seconds: the run's sleep ends by itself
    stuck = f"import subprocess\nsubprocess.run(['sleep', '{marker}'])\n" + WRITES
    mounts = _mounts()
    app = create_app(stack.settings)
    with TestClient(app) as client:
        # Short enough that the second run ends by its wall limit; the first never gets there.
        _code_competition(client, callers["host"], wall_seconds=4)
        submission_id = _submit_code(client, callers["alice"], stuck)
        first = stack.start_worker("-Q", "code")
        deadline = time.monotonic() + 120
        while not processes_with_argument(marker, settle_seconds=0):
            assert first.poll() is None and time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        assert _submission(stack, submission_id).status == SubmissionStatus.running
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        # The jail died with the worker: its processes, and the memory its working folder was.
        assert processes_with_argument(marker, settle_seconds=10) == []
        stack.start_worker("-Q", "code")
        queue = app.state.scoring_queue
        stack.wait_until_settled(1, queue.enqueue, enqueue_code=partial(queue.enqueue, code=True))
    again = _submission(stack, submission_id)
    # Handed out again and run to its end: the wall limit, on the second attempt.
    assert again.attempts == 2 and again.status == SubmissionStatus.failed
    assert again.run_failure == "timeout", again.error
    assert processes_with_argument(marker, settle_seconds=5) == []
    assert _mounts() == mounts
    assert _groups_of(first.pid) == []


def test_a_server_killed_mid_run_leaves_nothing_and_runs_it_again_after_a_restart(tmp_path):
    """The thread backend: the server runs code itself, and a restarted server hands it out."""
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
    local = Stack(Settings(**values), env, factory, None, tmp_path, [])  # type: ignore[arg-type]
    callers = _callers(local, ["host", "alice"])
    marker = f"90.{uuid.uuid4().int % 10**9}"
    stuck = f"import subprocess\nsubprocess.run(['sleep', '{marker}'])\n" + WRITES
    mounts = _mounts()
    port = free_port()
    server = _serve(tmp_path, env, port)
    killed = server.pid
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            _code_competition(client, callers["host"], wall_seconds=4)  # type: ignore[arg-type]
            submission_id = _submit_code(client, callers["alice"], stuck)  # type: ignore[arg-type]
            deadline = time.monotonic() + 120
            while not processes_with_argument(marker, settle_seconds=0):
                assert time.monotonic() < deadline, "the run never started"
                time.sleep(0.05)
            os.kill(server.pid, signal.SIGKILL)
            server.wait()
        assert processes_with_argument(marker, settle_seconds=10) == []
        server = _serve(tmp_path, env, port)
        deadline = time.monotonic() + 120
        while _submission(local, submission_id).status != SubmissionStatus.failed:
            assert time.monotonic() < deadline, _submission(local, submission_id).status
            time.sleep(0.2)
    finally:
        server.kill()
        server.wait()
        factory.kw["bind"].dispose()
    again = _submission(local, submission_id)
    assert again.attempts == 2 and again.run_failure == "timeout", again.error
    assert processes_with_argument(marker, settle_seconds=5) == []
    assert _mounts() == mounts
    assert _groups_of(killed) == []
