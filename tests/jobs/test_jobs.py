"""Scoring that loses nothing: jobs are idempotent and a restarted server picks up its queue."""

import io
import sqlite3
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select, update

from app.config import Settings
from app.db import make_engine, make_session_factory, unit_of_work
from app.jobs.queue import ThreadQueue
from app.jobs.score import rescore_submission, score_submission
from app.jobs.sweep import sweep
from app.main import create_app
from app.models import Score, Submission, SubmissionStatus
from app.scoring.core import score_columns_file
from tests.asgi_client import TestClient
from tests.databases import migrated
from tests.helpers import API, PERFECT, PUBLIC_HALF, ParkedQueue, ready_competition, submit


def _file_settings(tmp_path) -> Settings:  # type: ignore[no-untyped-def]
    settings = Settings(
        env="test",
        database_url=f"sqlite:///{tmp_path}/jobs.db",
        data_dir=tmp_path / "data",
        secret_key="k" * 32,
        scoring_backend="thread",
    )
    migrated(settings.database_url)
    return settings


def _headers(settings: Settings, name: str, organiser: bool = False) -> dict[str, str]:
    from app.auth.service import create_user
    from app.models import Role

    factory = make_session_factory(make_engine(settings.database_url))
    with unit_of_work(factory) as session:
        _u, token = create_user(
            session,
            name=name,
            role=Role.organiser if organiser else Role.participant,
            secret_key=settings.secret_key,
        )
    return {"Authorization": f"Bearer {token}"}


def test_queued_submissions_are_scored_after_a_restart(tmp_path):
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    parked = ParkedQueue()
    with TestClient(create_app(settings, scoring_queue=parked)) as client:
        ready_competition(client, host)
        submission_id = submit(client, alice, PERFECT).json()["id"]
        assert (
            client.get(f"{API}/submissions/{submission_id}", headers=alice).json()["status"]
            == "queued"
        )
    assert parked.ids == [submission_id]

    # A new server process with a real scoring thread finds the queued row and scores it.
    with TestClient(create_app(settings)) as client:
        queue = client.app.state.scoring_queue
        assert isinstance(queue, ThreadQueue)
        queue.join()
        view = client.get(f"{API}/submissions/{submission_id}", headers=alice).json()
        assert view["status"] == "scored" and view["public_score"] == 1.0


def test_lapsed_leases_are_requeued_but_live_ones_are_not(tmp_path):
    # Leases replace the fixed staleness age: what counts is whether the holder still renews.
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        ready_competition(client, host)
        stale = submit(client, alice, PERFECT).json()["id"]
        fresh = submit(client, alice, PERFECT).json()["id"]
    factory = make_session_factory(make_engine(settings.database_url))
    now = datetime.now(UTC)
    with unit_of_work(factory) as session:
        session.execute(
            update(Submission)
            .where(Submission.id == stale)
            .values(status=SubmissionStatus.scoring, lease_expires_at=now - timedelta(seconds=1))
        )
        session.execute(
            update(Submission)
            .where(Submission.id == fresh)
            .values(status=SubmissionStatus.scoring, lease_expires_at=now + timedelta(minutes=1))
        )
    enqueued: list[int] = []
    report = sweep(factory, enqueued.append, settings=settings)
    assert enqueued == [stale] and report.expired == 1


def test_scoring_twice_writes_one_score_row(tmp_path):
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        ready_competition(client, host)
        submission_id = submit(client, alice, PERFECT).json()["id"]
    factory = make_session_factory(make_engine(settings.database_url))
    score_submission(factory, submission_id)
    # A retried job (say a redelivered Celery task) after a crash that left it 'scoring'.
    with unit_of_work(factory) as session:
        session.execute(
            update(Submission)
            .where(Submission.id == submission_id)
            .values(status=SubmissionStatus.scoring)
        )
    score_submission(factory, submission_id)
    with unit_of_work(factory) as session:
        count = session.scalar(
            select(func.count(Score.id)).where(Score.submission_id == submission_id)
        )
        status = session.get(Submission, submission_id).status
    assert count == 1 and status == SubmissionStatus.scored


def test_a_crashing_scorer_fails_one_submission_with_a_generic_participant_message(
    tmp_path, monkeypatch
):
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        ready_competition(client, host)
        submission_id = submit(client, alice, PERFECT).json()["id"]

    def explode(*_args, **_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("app.jobs.score.score_columns_file", explode)
    factory = make_session_factory(make_engine(settings.database_url))
    score_submission(factory, submission_id)
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        mine = client.get(f"{API}/submissions/{submission_id}", headers=alice).json()
        theirs = client.get(f"{API}/submissions/{submission_id}", headers=host).json()
    assert mine["status"] == "failed"
    assert "disk on fire" not in mine["error"] and "our side" in mine["error"]
    assert "disk on fire" in theirs["host_error"]


def test_thread_queue_scores_uploads_in_the_background(tmp_path):
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings)) as client:
        ready_competition(client, host)
        ids = [submit(client, alice, io.BytesIO(PERFECT).read()).json()["id"] for _ in range(3)]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            statuses = {
                client.get(f"{API}/submissions/{i}", headers=alice).json()["status"] for i in ids
            }
            if statuses == {"scored"}:
                break
            time.sleep(0.05)
        assert statuses == {"scored"}


def _write_lock_is_free(database_url: str) -> bool:
    """Whether another connection can take SQLite's write lock right now, without waiting."""
    connection = sqlite3.connect(database_url.removeprefix("sqlite:///"), timeout=0)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        connection.close()


def test_no_transaction_is_open_while_a_submission_is_scored_or_rescored(tmp_path, monkeypatch):
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        ready_competition(client, host)
        submission_id = submit(client, alice, PERFECT).json()["id"]
    seen: list[bool] = []
    real = score_columns_file

    def observing(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(_write_lock_is_free(settings.database_url))
        return real(*args, **kwargs)

    monkeypatch.setattr("app.jobs.score.score_columns_file", observing)
    factory = make_session_factory(make_engine(settings.database_url))
    score_submission(factory, submission_id, settings)
    with unit_of_work(factory) as session:
        key_id = session.scalar(select(Score.answer_key_id))
        session.execute(delete(Score))
    rescore_submission(factory, submission_id, key_id, settings)
    assert seen == [True, True]
    with unit_of_work(factory) as session:
        assert session.scalar(select(func.count(Score.id))) == 1


def test_a_submission_above_the_size_setting_is_scored_in_a_child_with_the_same_result(
    tmp_path, monkeypatch
):
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        ready_competition(client, host)
        here = submit(client, alice, PUBLIC_HALF).json()["id"]
        there = submit(client, alice, PUBLIC_HALF + b"\n").json()["id"]
    factory = make_session_factory(make_engine(settings.database_url))
    score_submission(factory, here, settings)
    # In the child this process's scorer is never called: it would fail the submission.
    monkeypatch.setattr("app.jobs.score.score_columns_file", _explode)
    score_submission(factory, there, settings.model_copy(update={"scoring_in_child_bytes": 0}))
    with unit_of_work(factory) as session:
        rows = {s.submission_id: s for s in session.scalars(select(Score))}
        statuses = {i: session.get(Submission, i).status for i in (here, there)}
    assert statuses == {here: SubmissionStatus.scored, there: SubmissionStatus.scored}
    assert (rows[there].public_score, rows[there].private_score) == (0.5, 1.0)
    assert (rows[here].public_score, rows[here].private_score) == (0.5, 1.0)
    assert rows[there].details == rows[here].details


def _explode(*_args, **_kwargs):  # type: ignore[no-untyped-def]
    raise RuntimeError("scored in the server process")
