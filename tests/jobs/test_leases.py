"""Leases and the sweep: a submission is scored by the one scorer that holds it, what nobody holds
is handed out again, and what keeps failing fails for good, refunded, with the reason for the host."""

import logging
import os
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event, func, select, update

from app.db import make_engine, make_session_factory, unit_of_work
from app.jobs import score as jobs
from app.jobs.lease import put_back, renewer, renewing, try_claim
from app.jobs.sweep import sweep
from app.main import create_app
from app.models import Competition, Score, ScoreStats, Standing, Submission, SubmissionStatus
from tests.asgi_client import TestClient
from tests.helpers import API, PERFECT, ParkedQueue, ready_competition, submit
from tests.jobs.test_jobs import _file_settings, _headers

SLOW_METRIC = b"""
import time

def score(solution, submission, row_id_column_name):
    time.sleep(30)
    return 1.0
"""


@pytest.fixture
def parked(tmp_path):
    """A server whose queue never runs jobs, two queued submissions, and a session factory."""
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        ready_competition(client, host)
        ids = [submit(client, alice, PERFECT).json()["id"] for _ in range(2)]
    factory = make_session_factory(make_engine(settings.database_url))
    return settings, factory, ids, (host, alice)


def _score_rows(factory, submission_id: int) -> int:  # type: ignore[no-untyped-def]
    with factory() as session:
        return session.scalar(
            select(func.count()).select_from(Score).where(Score.submission_id == submission_id)
        )


def _submission(factory, submission_id: int) -> Submission:  # type: ignore[no-untyped-def]
    with factory() as session:
        return session.get(Submission, submission_id)


def test_only_one_claim_holds_a_submission(parked):
    _settings, factory, (first, _), _ = parked
    with unit_of_work(factory) as session:
        lease = try_claim(session, first, seconds=60)
    with unit_of_work(factory) as session:
        assert try_claim(session, first, seconds=60) is None  # held: the second claim loses
    assert lease is not None and lease.attempt == 1
    assert _submission(factory, first).status == SubmissionStatus.scoring


def test_a_claim_and_its_hand_back_write_no_standings(parked):
    # queued -> scoring -> queued moves no board: neither statement may recompute standings
    # (every scoring job's claim did, for nothing). Scoring then does, once.
    _settings, factory, (first, _), _ = parked
    statements: list[str] = []
    engine = factory.kw["bind"]

    def count(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        with unit_of_work(factory) as session:
            lease = try_claim(session, first, seconds=60)
        assert lease is not None
        assert put_back(factory, lease)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    updates = [s for s in statements if s != "BEGIN IMMEDIATE"]  # SQLite's transactions
    assert len(updates) == 2, statements  # the two updates, nothing else
    assert not any("standings" in s or "board_revisions" in s for s in statements)
    jobs.score_submission(factory, first, _settings)
    with factory() as session:
        boards = session.scalars(select(Standing.board).where(Standing.submission_id == first))
        assert sorted(boards) == ["private", "public"]


def test_a_scorer_whose_lease_was_taken_over_writes_nothing(parked):
    settings, factory, (first, _), _ = parked
    claim = jobs._claim(factory, first, settings)
    assert claim is not None
    with unit_of_work(factory) as session:  # the lease lapses and another scorer claims it
        session.execute(
            update(Submission)
            .where(Submission.id == first)
            .values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    jobs.score_submission(factory, first, settings)  # the new holder scores it
    outcome = jobs._evaluate(claim.plan, settings, submission_id=first)
    assert (
        jobs._settle(factory, claim, outcome) is jobs.Settled.lost
    )  # the first comes back too late
    assert _score_rows(factory, first) == 1
    submission = _submission(factory, first)
    assert submission.status == SubmissionStatus.scored and submission.attempts == 2


def test_a_redelivered_job_for_a_scored_submission_stops(parked):
    settings, factory, (first, _), _ = parked
    jobs.score_submission(factory, first, settings)
    jobs.score_submission(factory, first, settings)
    assert _score_rows(factory, first) == 1 and _submission(factory, first).attempts == 1


def test_the_sweep_hands_out_overdue_queued_submissions_only_after_their_grace(parked):
    settings, factory, (first, second), _ = parked
    enqueued: list[int] = []
    assert sweep(factory, enqueued.append, settings=settings).requeued == 0  # just made
    assert enqueued == []
    report = sweep(factory, enqueued.append, settings=settings, grace_seconds=0)
    assert enqueued == [first, second] and report.requeued == 2
    # Handed out: not again at the next pass, only once another grace period has gone by.
    assert sweep(factory, enqueued.append, settings=settings).requeued == 0


def test_out_of_attempts_fails_refunded_with_the_reason_for_the_host_only(parked):
    settings, factory, (first, _), (host, alice) = parked
    with unit_of_work(factory) as session:
        session.execute(
            update(Submission)
            .where(Submission.id == first)
            .values(
                status=SubmissionStatus.scoring,
                attempts=settings.scoring_max_attempts,
                lease_expires_at=datetime.now(UTC) - timedelta(seconds=1),
            )
        )
    enqueued: list[int] = []
    assert sweep(factory, enqueued.append, settings=settings).failed == 1
    assert enqueued == []
    submission = _submission(factory, first)
    assert submission.status == SubmissionStatus.failed and submission.refunded
    assert "attempt" in submission.host_error and "attempt" not in submission.error
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        seen = client.get(f"{API}/submissions/{first}", headers=alice).json()
        assert "attempt" not in str(seen)
        assert "attempt" in str(client.get(f"{API}/submissions/{first}", headers=host).json())


def test_a_job_past_its_time_limit_fails_refunded_and_the_scorer_goes_on(tmp_path):
    settings = _file_settings(tmp_path)
    host, alice = _headers(settings, "host", True), _headers(settings, "alice")
    with TestClient(create_app(settings, scoring_queue=ParkedQueue())) as client:
        ready_competition(client, host, metric={"name": "custom"})
        response = client.put(
            f"{API}/competitions/churn/custom-metric",
            files={"file": ("metric.py", SLOW_METRIC.replace(b"30", b"0"), "text/x-python")},
            data={"direction": "maximize"},
            headers=host,
        )
        assert response.status_code == 200, response.text
        slow = submit(client, alice, PERFECT).json()["id"]
    factory = make_session_factory(make_engine(settings.database_url))
    metric_path = None
    with unit_of_work(factory) as session:
        competition = session.scalar(select(Competition))
        competition.scoring_time_limit_seconds = 1
        metric_path = competition.custom_metric_path
    with open(metric_path, "wb") as fh:  # now it takes 30 s: far past the 1 s limit
        fh.write(SLOW_METRIC)
    jobs.score_submission(factory, slow, settings)  # here, in the main thread
    submission = _submission(factory, slow)
    assert submission.status == SubmissionStatus.failed and submission.refunded
    assert "time limit" in submission.host_error and "time limit" not in submission.error


def _stats_of(factory, submission_id: int):  # type: ignore[no-untyped-def]
    with factory() as session:
        return session.scalar(
            select(ScoreStats)
            .join(Score, Score.id == ScoreStats.score_id)
            .where(Score.submission_id == submission_id)
        )


def test_a_small_keys_stats_are_written_with_the_score(parked, monkeypatch):
    # Scored and its intervals, in one transaction: no second step, no moment of a score
    # without its interval.
    settings, factory, (first, _), _ = parked
    second_step: list[int] = []
    monkeypatch.setattr(jobs, "add_score_stats", lambda _f, sid, *_a: second_step.append(sid))
    jobs.score_submission(factory, first, settings)
    stats = _stats_of(factory, first)
    assert _submission(factory, first).status == SubmissionStatus.scored
    assert second_step == []
    assert stats is not None and stats.note is None
    assert stats.public_interval["low"] <= stats.public_interval["high"]
    assert stats.public_replicates and stats.ladder_threshold == 0.0  # a first: nothing to beat


def test_stats_that_fail_beside_the_score_leave_it_standing_for_the_second_step(
    parked, monkeypatch
):
    settings, factory, (first, _), _ = parked

    def broken(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("stats went wrong")

    monkeypatch.setattr(jobs, "write_new_stats", broken)
    jobs.score_submission(factory, first, settings)
    assert _submission(factory, first).status == SubmissionStatus.scored
    with factory() as session:  # the board moved with the score, not with the stats
        assert session.scalar(select(func.count()).where(Standing.submission_id == first)) == 2
    stats = _stats_of(factory, first)  # written by the second step instead
    assert stats is not None and stats.public_interval is not None


def _expires(factory, submission_id: int):  # type: ignore[no-untyped-def]
    with factory() as session:
        return session.scalar(
            select(Submission.lease_expires_at).where(Submission.id == submission_id)
        )


def _until(condition, seconds: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_held_lease_is_renewed_while_its_job_runs_and_not_after(parked):
    _settings, factory, (first, second), _ = parked
    with unit_of_work(factory) as session:
        lease = try_claim(session, first, seconds=0.6)
        control = try_claim(session, second, seconds=0.6)
    assert lease is not None and control is not None
    claimed = _expires(factory, first)
    with renewing(factory, lease):
        assert _until(lambda: _expires(factory, first) > claimed)  # renewed every 0.2 s
        assert renewer.held() >= 1
    assert renewer.held() == 0  # let go at the job's end, not at a later renewal
    # No wait on the clock: the one renewing thread renews, in each pass, every lease then due,
    # and the first lease, were it still held, would be due by the time the control lease is.
    # After one pass that renewed the control, any renewal of the first begun before the job
    # ended has landed; across the next, none may come.
    with renewing(factory, control):
        for passes in range(2):
            if passes == 1:
                ended = _expires(factory, first)
            renewed = _expires(factory, second)
            assert _until(lambda renewed=renewed: _expires(factory, second) > renewed)
    assert _expires(factory, first) == ended


def test_a_job_past_its_limit_lets_its_lease_lapse(parked):
    _settings, factory, (first, _), _ = parked
    with unit_of_work(factory) as session:
        lease = try_claim(session, first, seconds=0.6)
    assert lease is not None
    with renewing(factory, lease, until=0.1):  # stuck: past its limit before the first renewal
        assert _until(lambda: _expires(factory, first) < datetime.now(UTC))
        assert _until(lambda: renewer.held() == 0)
    # The sweep's to hand out again: it is claimable.
    with unit_of_work(factory) as session:
        assert try_claim(session, first, seconds=60) is not None


def test_a_lease_taken_over_is_no_longer_renewed(parked, caplog):
    _settings, factory, (first, _), _ = parked
    with unit_of_work(factory) as session:
        lease = try_claim(session, first, seconds=0.6)
    assert lease is not None
    # The warning whatever level an app made earlier in the run left on the root logger.
    caplog.set_level(logging.WARNING, logger="app.jobs.lease")
    with renewing(factory, lease):
        with unit_of_work(factory) as session:  # another scorer holds it now
            session.execute(update(Submission).where(Submission.id == first).values(attempts=5))
        assert _until(lambda: renewer.held() == 0)
    assert "lost the lease on submission" in caplog.text


def test_one_thread_renews_every_lease_of_the_process(parked):
    _settings, factory, ids, _ = parked
    leases = []
    for submission_id in ids:
        with unit_of_work(factory) as session:
            leases.append(try_claim(session, submission_id, seconds=0.6))
    assert all(leases)
    before = {submission_id: _expires(factory, submission_id) for submission_id in ids}
    with renewing(factory, leases[0]), renewing(factory, leases[1]):
        for submission_id in ids:
            assert _until(lambda s=submission_id: _expires(factory, s) > before[s])
        assert sum(t.name == "leases" for t in threading.enumerate()) == 1


def test_a_forked_child_renews_its_own_leases(parked):
    # A Celery worker is a fork: the parent's renewing thread does not run in it, and the lock
    # it may hold at the fork must not be the child's. The parent renews another lease only.
    _settings, factory, (first, second), _ = parked
    with unit_of_work(factory) as session:
        ours, theirs = (try_claim(session, i, seconds=0.6) for i in (first, second))
    assert ours is not None and theirs is not None
    claimed = _expires(factory, first)
    with renewing(factory, theirs):  # the parent's thread runs now
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only if its own renewal happens
            code = 1
            try:
                factory.kw["bind"].dispose(close=False)  # the parent's connections stay its own
                with renewing(factory, ours):
                    code = 0 if _until(lambda: _expires(factory, first) > claimed, 10) else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _expires(factory, first) > claimed
