"""Code runs in the queue: ``running`` while the code runs, ``scoring`` while its output is scored;
one run per team at a time (a second one waits queued, is never failed nor lost); runs have their
own lane (threads in the server, Celery's queue ``code``).

The jail itself is tested in tests/coderun/; here ``run_code`` is replaced by a stand-in that
writes the predictions and lets the test act while "the code runs" (read the status through the
API, start other jobs, sweep), so that each interleaving is made on purpose, never by timing.
"""

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from app.coderun.outcome import CodeRunOutcome, Provenance, RunLog
from app.config import Settings
from app.db import make_engine, make_session_factory
from app.jobs import code_run
from app.jobs import score as score_module
from app.jobs.celery_app import make_celery
from app.jobs.lease import now
from app.jobs.names import CODE_QUEUE, CODE_TASK, DEFAULT_QUEUE, SCORE_TASK
from app.jobs.queue import CeleryQueue, EagerQueue, ThreadQueue
from app.jobs.score import score_submission
from app.jobs.sweep import sweep
from app.jobs.turns import next_in_line
from app.kaggle.service import _STATUS as KAGGLE_STATUS
from app.main import create_app
from app.models import Score, Submission, SubmissionStatus
from tests.asgi_client import TestClient
from tests.databases import migrated
from tests.helpers import API, ParkedQueue, csv_bytes
from tests.jobs.test_jobs import _headers

KEY = csv_bytes(["id", "y", "Usage"], ["a", 1.0, "Public"], ["b", 2.0, "Private"])
PREDICTIONS = "id,y\na,1.5\nb,2.0\n"


def _code_competition(client: TestClient, host: dict[str, str], slug: str = "code") -> None:
    body = {
        "slug": slug,
        "title": slug.title(),
        "metric": {"name": "rmse"},
        "phases": [{"name": "main", "submission_kind": "code"}],
    }
    assert client.post(f"{API}/competitions", json=body, headers=host).status_code == 201
    key = client.put(
        f"{API}/competitions/{slug}/answer-key",
        files={"file": ("key.csv", KEY, "text/csv")},
        headers=host,
    )
    assert key.status_code in (200, 201), key.text


def _submit_code(client: TestClient, caller: dict[str, str], slug: str = "code") -> int:
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": ("main.py", b"print('hello')\n", "text/x-python")},
        headers=caller,
    )
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _status(factory: Any, submission_id: int) -> SubmissionStatus:
    with factory() as session:
        return session.get(Submission, submission_id).status


def _scores(factory: Any, submission_id: int) -> int:
    with factory() as session:
        return int(
            session.scalar(
                select(func.count()).select_from(Score).where(Score.submission_id == submission_id)
            )
        )


class FakeRuns:
    """Stands in for the jail: each run writes PREDICTIONS, calling ``during(n)`` first (n: the
    how-manieth run) so that a test acts while that run is in progress."""

    def __init__(self, during: Callable[[int], None] = lambda _n: None) -> None:
        self.during = during
        self.started: list[str] = []
        self.ended: list[str] = []

    def __call__(self, **arguments: Any) -> CodeRunOutcome:
        name = arguments["output_dir"].name
        self.started.append(name)
        self.during(len(self.started))
        output = Path(arguments["output_dir"]) / "submission.csv"
        output.write_text(PREDICTIONS)
        self.ended.append(name)
        return CodeRunOutcome(
            output=output,
            failure=None,
            message="the run wrote submission.csv",
            log=RunLog(b"ran\n", b"", 4),
            provenance=Provenance("a" * 64, "b" * 64, "c" * 64),
            limits=arguments["limits"],
            seconds=0.0,
        )


@pytest.fixture
def parked(settings, session_factory) -> Iterator[TestClient]:
    """The API with a queue that never runs jobs: the test runs each job itself."""
    with TestClient(
        create_app(settings, session_factory=session_factory, scoring_queue=ParkedQueue())
    ) as client:
        yield client


def test_a_code_run_is_running_then_scoring_then_scored(
    parked, settings, session_factory, host, alice, monkeypatch
):
    _code_competition(parked, host.headers)
    submission_id = _submit_code(parked, alice.headers)
    seen: dict[str, Any] = {}

    def during_run(_n: int) -> None:
        # What an API reader sees while the code runs: committed, not only in the job's session.
        view = parked.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
        seen["run"] = (view["status"], view["queue_position"])

    evaluate_here = score_module.evaluate_here

    def scoring(*args: Any, **kwargs: Any) -> Any:
        seen["scoring"] = _status(session_factory, submission_id)
        return evaluate_here(*args, **kwargs)

    monkeypatch.setattr(code_run, "run_code", FakeRuns(during_run))
    monkeypatch.setattr(score_module, "evaluate_here", scoring)
    score_submission(session_factory, submission_id, settings)
    assert seen == {"run": ("running", None), "scoring": SubmissionStatus.scoring}
    view = parked.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["public_score"] == 0.5


def test_the_kaggle_client_sees_every_unfinished_status_as_pending():
    # The official client knows PENDING, COMPLETE and ERROR only.
    assert {status: KAGGLE_STATUS[status] for status in SubmissionStatus} == {
        SubmissionStatus.queued: "PENDING",
        SubmissionStatus.running: "PENDING",
        SubmissionStatus.scoring: "PENDING",
        SubmissionStatus.scored: "COMPLETE",
        SubmissionStatus.failed: "ERROR",
    }


def test_a_teams_second_run_waits_queued_while_another_team_runs(
    parked, settings, session_factory, host, alice, bob, monkeypatch
):
    _code_competition(parked, host.headers)
    first, second = _submit_code(parked, alice.headers), _submit_code(parked, alice.headers)
    other = _submit_code(parked, bob.headers)
    during: dict[str, Any] = {}
    lanes: dict[str, list[int]] = {"code": [], "plain": []}

    def while_first_runs(n: int) -> None:
        if n != 1:
            return
        # Two more workers take the other jobs while alice's first run is in progress.
        score_submission(session_factory, second, settings)
        during["second"] = _status(session_factory, second)
        score_submission(session_factory, other, settings)
        during["other"] = _status(session_factory, other)
        # The sweep hands the waiting one out again (to the code lane), and fails nothing.
        report = sweep(
            session_factory,
            lanes["plain"].append,
            settings=settings,
            grace_seconds=0,
            enqueue_code=lanes["code"].append,
        )
        during["swept"] = (report.requeued, report.expired, report.failed)
        during["next"] = next_in_line(session_factory, second)  # not final: hands nothing over

    monkeypatch.setattr(code_run, "run_code", FakeRuns(while_first_runs))
    score_submission(session_factory, first, settings)
    assert during == {
        "second": SubmissionStatus.queued,
        "other": SubmissionStatus.scored,
        "swept": (1, 0, 0),
        "next": None,
    }
    assert lanes == {"code": [second], "plain": []}
    with session_factory() as session:
        waiting = session.get(Submission, second)
        assert waiting.attempts == 0 and waiting.error is None  # deferred, not a failed attempt
    # Alice's first run is over: her second is next in line, and runs.
    assert _status(session_factory, first) == SubmissionStatus.scored
    assert next_in_line(session_factory, first) == second
    score_submission(session_factory, second, settings)
    assert [_status(session_factory, i) for i in (first, second, other)] == [
        SubmissionStatus.scored
    ] * 3
    assert [_scores(session_factory, i) for i in (first, second, other)] == [1, 1, 1]


def test_the_eager_queue_runs_a_waiting_run_once_its_teams_run_ends(
    parked, settings, session_factory, host, alice, monkeypatch
):
    _code_competition(parked, host.headers)
    first, second = _submit_code(parked, alice.headers), _submit_code(parked, alice.headers)
    queue = EagerQueue(session_factory, settings)
    during: list[SubmissionStatus] = []

    def while_first_runs(n: int) -> None:
        if n == 1:
            queue.enqueue(second, code=True)  # its team is busy: it returns, still queued
            during.append(_status(session_factory, second))

    runs = FakeRuns(while_first_runs)
    monkeypatch.setattr(code_run, "run_code", runs)
    queue.enqueue(first, code=True)
    assert during == [SubmissionStatus.queued]
    # The second ran after the first had ended (not inside it): handed over when it settled.
    assert len(set(runs.started)) == 2 and runs.started == runs.ended
    assert [_status(session_factory, i) for i in (first, second)] == [SubmissionStatus.scored] * 2


def test_a_run_lost_with_its_worker_is_run_again_and_scored_once(
    parked, settings, session_factory, host, alice, monkeypatch
):
    _code_competition(parked, host.headers)
    lost, waiting = _submit_code(parked, alice.headers), _submit_code(parked, alice.headers)

    def worker_dies(n: int) -> None:
        if n == 1:
            raise SystemExit("the worker died mid-run")  # nothing is settled

    monkeypatch.setattr(code_run, "run_code", FakeRuns(worker_dies))
    with pytest.raises(SystemExit):
        score_submission(session_factory, lost, settings)
    assert _status(session_factory, lost) == SubmissionStatus.running
    # While its lease holds, the team's turn is taken; once it lapses, the turn is free again
    # and the sweep puts the lost run back in the queue.
    score_submission(session_factory, waiting, settings)
    assert _status(session_factory, waiting) == SubmissionStatus.queued
    with session_factory() as session:
        session.execute(
            update(Submission).where(Submission.id == lost).values(lease_expires_at=now())
        )
        session.commit()
    code_lane: list[int] = []
    plain_lane: list[int] = []
    report = sweep(
        session_factory, plain_lane.append, settings=settings, enqueue_code=code_lane.append
    )
    assert report.expired == 1 and code_lane[0] == lost and plain_lane == []
    for submission_id in code_lane:
        score_submission(session_factory, submission_id, settings)
    score_submission(session_factory, waiting, settings)
    assert [_status(session_factory, i) for i in (lost, waiting)] == [SubmissionStatus.scored] * 2
    assert [_scores(session_factory, i) for i in (lost, waiting)] == [1, 1]


def test_code_runs_are_sent_to_celerys_code_queue(tmp_path):
    settings = Settings(
        env="test",
        database_url="sqlite://",
        data_dir=tmp_path,
        secret_key="k" * 32,
        celery_broker_url="memory://",
    )
    celery = make_celery(settings)
    # Celery's own router says where each task goes.
    assert celery.amqp.router.route({}, CODE_TASK)["queue"].name == CODE_QUEUE
    assert celery.amqp.router.route({}, SCORE_TASK)["queue"].name == DEFAULT_QUEUE
    # And the queue hands each kind of job to its task.
    queue = CeleryQueue(settings)
    sent: list[tuple[str, str]] = []

    def published(name: str, args: list[Any], **options: Any) -> None:
        route = queue.celery.amqp.router.route(options, name, args)
        sent.append((name, route["queue"].name))

    queue.celery.send_task = published  # type: ignore[method-assign]
    queue.enqueue(1, code=True)
    queue.enqueue(2)
    assert sent == [(CODE_TASK, CODE_QUEUE), (SCORE_TASK, DEFAULT_QUEUE)]


def test_the_thread_backend_runs_code_concurrency_runs_at_once_beside_file_scoring(
    tmp_path, monkeypatch
):
    settings = Settings(
        env="test",
        database_url=f"sqlite:///{tmp_path}/lanes.db",
        data_dir=tmp_path / "data",
        secret_key="k" * 32,
        scoring_backend="thread",
        code_concurrency=2,
    )
    migrated(settings.database_url)
    host = _headers(settings, "host", True)
    teams = [_headers(settings, name) for name in ("alice", "bob")]
    both_running = threading.Barrier(3)  # two runs and the test
    release = threading.Event()

    def two_at_once(_n: int) -> None:
        # Passes only when both runs are in progress together: with one code thread, the
        # second run would never start and the barrier would break at its timeout.
        both_running.wait(timeout=60)
        assert release.wait(timeout=60)

    monkeypatch.setattr(code_run, "run_code", FakeRuns(two_at_once))
    with TestClient(create_app(settings)) as client:
        queue = client.app.state.scoring_queue
        assert isinstance(queue, ThreadQueue)
        _code_competition(client, host)
        runs = [_submit_code(client, caller) for caller in teams]
        both_running.wait(timeout=60)
        # While both runs hold the code lane, an uploaded file is scored in its own lane.
        _plain_competition(client, host)
        plain = client.post(
            f"{API}/competitions/plain/submissions",
            files={"file": ("sub.csv", PREDICTIONS.encode(), "text/csv")},
            headers=teams[0],
        ).json()["id"]
        factory = make_session_factory(make_engine(settings.database_url))
        _wait_for(factory, plain, SubmissionStatus.scored)
        assert [_status(factory, i) for i in runs] == [SubmissionStatus.running] * 2
        release.set()
        queue.join()
        assert [_status(factory, i) for i in runs] == [SubmissionStatus.scored] * 2


def _plain_competition(client: TestClient, host: dict[str, str]) -> None:
    body = {"slug": "plain", "title": "Plain", "metric": {"name": "rmse"}}
    assert client.post(f"{API}/competitions", json=body, headers=host).status_code == 201
    key = client.put(
        f"{API}/competitions/plain/answer-key",
        files={"file": ("key.csv", KEY, "text/csv")},
        headers=host,
    )
    assert key.status_code in (200, 201), key.text


def _wait_for(factory: Any, submission_id: int, status: SubmissionStatus) -> None:
    """Wait for the scoring thread to reach ``status`` (the event itself; the deadline only
    ends a test that would otherwise hang)."""
    deadline = time.monotonic() + 60
    while _status(factory, submission_id) != status:
        assert time.monotonic() < deadline, f"submission {submission_id} never became {status}"
        time.sleep(0.05)


def test_through_redis_a_code_run_waits_in_the_code_list_and_a_file_in_celerys(tmp_path, redis_url):
    import redis

    settings = Settings(
        env="test",
        database_url="sqlite://",
        data_dir=tmp_path,
        secret_key="k" * 32,
        celery_broker_url=redis_url,
    )
    queue = CeleryQueue(settings)
    queue.enqueue(1, code=True)
    queue.enqueue(2)
    queue.enqueue(3, code=True)
    broker = redis.Redis.from_url(redis_url)
    # Celery's Redis transport keeps each queue as a list of that name.
    assert (broker.llen(CODE_QUEUE), broker.llen(DEFAULT_QUEUE)) == (2, 1)
