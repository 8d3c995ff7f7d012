"""Scoring several queued uploads together (``score_submissions``, the embedded scorer's batch):
the same outcome as scoring them one by one, in fewer statements, and one submission's trouble
stays its own (issue 23). On both databases."""

import threading
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select, update

from app.config import Settings
from app.db import unit_of_work
from app.jobs import queue as queues
from app.jobs import score as jobs
from app.jobs.score import score_submission, score_submissions
from app.models import (
    BoardBands,
    Score,
    ScoreStats,
    Standing,
    Submission,
    SubmissionStatus,
)
from tests.helpers import (
    PERFECT,
    create_competition,
    csv_bytes,
    ready_competition,
    set_competition,
    statements_during,
    submit,
    upload_key,
)
from tests.jobs.test_score_statements import TODAY

# A key of 40 rows, half of them public: big enough for the paired standard errors to differ.
ROWS = 40
KEY = csv_bytes(
    ["id", "target", "Usage"],
    *[[f"r{i}", (i * 7 // 3) % 2, "Public" if i % 2 else "Private"] for i in range(ROWS)],
)


def _guess(seed: int) -> bytes:
    values = np.random.default_rng(seed).random(ROWS)
    return csv_bytes(["id", "target"], *[[f"r{i}", round(v, 4)] for i, v in enumerate(values)])


# Who uploads what, in this order, to each competition: teams with one, two and three entries,
# some beating their best and some not, so that each team's Ladder and standing move in turn.
UPLOADS = [
    ("alice", _guess(1)),
    ("bob", _guess(2)),
    ("alice", _guess(3)),
    ("carol", _guess(4)),
    ("bob", _guess(5)),
    ("alice", _guess(6)),
    ("host", _guess(8)),  # a baseline: the Ladders after it start from its score
    ("dave", _guess(7)),
    ("carol", _guess(4)),  # the same file again
    ("bob", _guess(9)),
]
# The same without the baseline: all of it one batch.
ENTRIES = [upload for upload in UPLOADS if upload[0] != "host"]


def _ready(client, headers, slug: str) -> None:  # type: ignore[no-untyped-def]
    create_competition(client, headers, slug)
    assert upload_key(client, headers, slug, content=KEY).status_code == 201


@pytest.fixture
def entries(unscored, queue, host, teams) -> list[int]:  # type: ignore[no-untyped-def]
    """ENTRIES uploaded to a ready competition, waiting to be scored: their ids."""
    _ready(unscored, host.headers, "churn")
    return _upload(unscored, queue, teams, "churn", ENTRIES)


@pytest.fixture(autouse=True)
def one_write(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A batch written once, however slow the machine scores it (the half-second's own test
    sets its own)."""
    monkeypatch.setattr(jobs, "WRITE_EVERY_SECONDS", 3600.0)


@pytest.fixture
def teams(make_user, host) -> dict[str, Any]:
    return {"host": host} | {name: make_user(name) for name in ("alice", "bob", "carol", "dave")}


def _upload(client, queue, teams, slug: str, uploads=UPLOADS) -> list[int]:  # type: ignore[no-untyped-def]
    before = len(queue.queued)
    for name, body in uploads:
        answer = submit(client, teams[name].headers, body, slug=slug, baseline=name == "host")
        assert answer.status_code == 202, answer.text
    return queue.queued[before:]


def _state(session_factory, ids: list[int]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """What the boards and the statistics hold of these submissions, by their upload's place
    (the ids of two competitions differ; their places do not)."""
    place = {submission_id: n for n, submission_id in enumerate(ids)}
    with session_factory() as session:
        submissions = session.scalars(select(Submission).where(Submission.id.in_(ids))).all()
        scores = session.scalars(select(Score).where(Score.submission_id.in_(ids))).all()
        stats = {
            s.score_id: s
            for s in session.scalars(
                select(ScoreStats).where(ScoreStats.score_id.in_([s.id for s in scores]))
            )
        }
        standings = session.scalars(select(Standing).where(Standing.submission_id.in_(ids))).all()
        key_ids = {s.answer_key_id for s in scores}
        bands = session.scalars(select(BoardBands).where(BoardBands.answer_key_id.in_(key_ids)))
        return {
            "submissions": sorted(
                (place[s.id], s.status.value, s.refunded, s.error) for s in submissions
            ),
            "scores": sorted(
                (
                    place[s.submission_id],
                    s.public_score,
                    s.private_score,
                    stats[s.id].public_interval,
                    stats[s.id].private_interval,
                    stats[s.id].ladder_threshold,
                    stats[s.id].note,
                )
                for s in scores
            ),
            "standings": sorted((s.board, place[s.submission_id], s.score) for s in standings),
            "bands": sorted(
                (b.board, sorted((place[int(k)], v) for k, v in b.bands.items())) for b in bands
            ),
        }


@pytest.mark.parametrize("mode", ["exact", "ladder_free"])
def test_a_batch_scores_exactly_as_one_by_one(
    unscored, queue, session_factory, settings, host, teams, mode
):
    for slug in ("alone", "together"):
        _ready(unscored, host.headers, slug)
        set_competition(session_factory, slug, public_board_mode=mode)
    settings = settings.model_copy(update={"bands_every_seconds": 0.0})  # bands after each
    alone = _upload(unscored, queue, teams, "alone")
    together = _upload(unscored, queue, teams, "together")
    for submission_id in alone:
        score_submission(session_factory, submission_id, settings)
    score_submissions(session_factory, together, settings)
    expected = _state(session_factory, alone)
    assert _state(session_factory, together) == expected
    # And it was worth comparing: everything scored, with stats; the boards hold entries.
    assert {status for _, status, _, _ in expected["submissions"]} == {"scored"}
    assert len(expected["scores"]) == len(UPLOADS)
    assert all(row[3] for row in expected["scores"])  # intervals
    assert {board for board, _, _ in expected["standings"]} == {"public", "private"}
    if mode == "ladder_free":
        assert len({row[5] for row in expected["scores"]}) > 2  # thresholds that differ


def test_each_score_of_a_batch_replays_its_own_teams_history_only(
    entries, session_factory, settings, monkeypatch
):
    # A batch of many teams costs each score its own team's history (and the baselines, the
    # Ladders' start), not every history the batch read: a job's cost stays flat as the board
    # grows.
    from app.jobs import honest

    replay_rows = honest.replay_rows
    seen: list[tuple[set[int], set[int]]] = []

    def recorded(rows, *, team_ids, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((set(team_ids), {row.team_id for row in rows if not row.baseline}))
        return replay_rows(rows, team_ids=team_ids, **kwargs)

    monkeypatch.setattr(honest, "replay_rows", recorded)
    score_submissions(session_factory, entries, settings)
    assert len(seen) == len(entries)
    assert all(replayed <= asked for asked, replayed in seen), seen
    # The batch is of several teams, so one read held others' rows: the test could tell.
    assert len(set().union(*(asked for asked, _ in seen))) > 1


# Statements a batch of ENTRIES costs (a ratchet, as the single job's in test_score_statements):
# per upload its settle's UPDATE (SQLite: and its score's INSERT); once for all, the claim, the
# scores' INSERT, the standings, the teams' Ladder histories, the stats' INSERT and the bands;
# issue 40: one more, the batch's events (one INSERT for its outcomes' submission.scored rows);
# and the record's entries (issue 43): the chain's head read, the entries in one INSERT (and on
# PostgreSQL the head moved), whatever the batch's size (34 and 27 before both).
BATCH_TODAY = {"sqlite": 34 + 1 + 2, "postgresql": 27 + 1 + 3}


def test_a_batch_shares_its_statements_out(entries, connection, session_factory, settings):
    ids = entries
    statements = statements_during(
        connection, lambda: score_submissions(session_factory, ids, settings)
    )
    dialect = connection.dialect.name
    assert len(statements) <= BATCH_TODAY[dialect], "\n".join(s[:200] for s in statements)
    assert len(statements) < len(ENTRIES) * TODAY[dialect] * 0.6
    # The claim, the scores and the standings once for the batch, whatever its size.
    assert sum("attempts=(submissions.attempts +" in s for s in statements) == 1
    if dialect == "postgresql":  # SQLite returns the ids of several rows in no given order
        assert sum(s.startswith("INSERT INTO scores") for s in statements) == 1
    assert sum(s.startswith("DELETE FROM standings") for s in statements) == 1
    with session_factory() as session:
        scored = session.scalars(select(Submission.status).where(Submission.id.in_(ids))).all()
        assert set(scored) == {SubmissionStatus.scored}


@pytest.mark.parametrize("every, writes", [(60.0, [9]), (0.0, [1] * 9)])
def test_a_batch_writes_what_it_scored_at_least_every_half_second(
    entries, session_factory, settings, monkeypatch, every, writes
):
    # A batch of large files must not hold the first one's score back until the last is
    # scored: past WRITE_EVERY_SECONDS, what is scored so far is written before going on.
    ids = entries
    settle_all = jobs._settle_all
    sizes: list[int] = []

    def counted(factory, scored, settings):  # type: ignore[no-untyped-def]
        sizes.append(len(scored))
        return settle_all(factory, scored, settings)

    monkeypatch.setattr(jobs, "_settle_all", counted)
    monkeypatch.setattr(jobs, "WRITE_EVERY_SECONDS", every)
    score_submissions(session_factory, ids, settings)
    assert [size for size in sizes if size] == writes
    with session_factory() as session:
        statuses = session.scalars(select(Submission.status).where(Submission.id.in_(ids)))
        assert set(statuses) == {SubmissionStatus.scored}


@pytest.mark.parametrize("trouble", ["its lease taken over", "its scoring crashed"])
def test_one_submissions_trouble_in_a_batch_stays_its_own(
    entries, session_factory, settings, monkeypatch, trouble
):
    ids = entries
    unlucky = ids[2]
    score_one = jobs._score_one

    def troubled(factory, claim, settings):  # type: ignore[no-untyped-def]
        if claim.lease.submission_id != unlucky:
            return score_one(factory, claim, settings)
        if trouble == "its scoring crashed":
            raise RuntimeError("the scorer went wrong")
        found = score_one(factory, claim, settings)
        with unit_of_work(factory) as session:  # another scorer's claim, after a lapse
            session.execute(
                update(Submission)
                .where(Submission.id == unlucky)
                .values(attempts=Submission.attempts + 1)
            )
        return found

    monkeypatch.setattr(jobs, "_score_one", troubled)
    score_submissions(session_factory, ids, settings)
    with session_factory() as session:
        statuses = dict(session.execute(select(Submission.id, Submission.status)).all())
        # Nothing of it written: the new holder's to write, or its lease lapses and the sweep
        # delivers it again. The others are written all the same.
        assert statuses[unlucky] == SubmissionStatus.scoring
        assert {statuses[i] for i in ids if i != unlucky} == {SubmissionStatus.scored}
        scored = set(session.scalars(select(Score.submission_id)))
        assert unlucky not in scored and scored >= set(ids) - {unlucky}


def test_a_batch_that_cannot_be_written_together_is_written_one_by_one(
    entries, session_factory, settings, monkeypatch
):
    ids = entries
    recompute = jobs.recompute_teams
    calls: list[set[int]] = []

    def fails_once(session, competition, team_ids):  # type: ignore[no-untyped-def]
        calls.append(set(team_ids))
        if len(calls) == 1:
            raise RuntimeError("the batch's standings went wrong")
        recompute(session, competition, team_ids)

    monkeypatch.setattr(jobs, "recompute_teams", fails_once)
    score_submissions(session_factory, ids, settings)
    assert len(calls[0]) == 4 and len(calls) == 1 + len(ids)  # all four teams, then each alone
    with session_factory() as session:
        statuses = session.scalars(select(Submission.status).where(Submission.id.in_(ids)))
        assert set(statuses) == {SubmissionStatus.scored}
        assert session.scalar(select(Standing.id).where(Standing.submission_id.in_(ids)))
        with_stats = session.scalars(
            select(ScoreStats.id).join(Score).where(Score.submission_id.in_(ids))
        ).all()
        assert len(with_stats) == len(ids)


def test_what_a_batch_does_not_take_is_scored_alone_or_left(
    unscored, queue, session_factory, settings, host, alice, bob
):
    ready_competition(unscored, host.headers)
    for caller in (alice, bob, alice):
        assert submit(unscored, caller.headers, PERFECT).status_code == 202
    done, waiting, last_try = queue.queued
    score_submission(session_factory, done, settings)
    with session_factory() as session:  # its last attempt: the general claim gives up on it
        session.execute(
            update(Submission)
            .where(Submission.id == last_try)
            .values(attempts=settings.scoring_max_attempts)
        )
        session.commit()
    score_submissions(session_factory, [done, 999_999, waiting, last_try, waiting], settings)
    with session_factory() as session:
        statuses = dict(session.execute(select(Submission.id, Submission.status)).all())
        assert statuses[done] == statuses[waiting] == SubmissionStatus.scored
        assert statuses[last_try] == SubmissionStatus.failed
        counts = session.scalars(select(Score.submission_id)).all()
        assert sorted(counts) == sorted([done, waiting])  # the finished one not scored again


def test_the_scoring_thread_takes_what_waits_in_its_queue_as_batches(monkeypatch):
    batches: list[list[int]] = []
    alone: list[tuple[int, int | None]] = []
    monkeypatch.setattr(queues, "score_submissions", lambda _f, ids, _s: batches.append(ids))
    monkeypatch.setattr(queues, "run_job", lambda _f, sid, key, _s: alone.append((sid, key)))
    lane = queues.ThreadQueue(None, Settings(scoring_batch=3, code_concurrency=1))  # type: ignore[arg-type]
    for submission_id in (1, 2, 3, 4, 5):
        lane.enqueue(submission_id)
    lane.enqueue(6, 60)  # a rescore: alone, as before
    lane.enqueue(7)
    lane.start()
    lane.join()
    lane.enqueue(8)  # nothing else waiting: alone
    lane.join()
    lane.stop()
    assert batches == [[1, 2, 3], [4, 5]]
    # The third batch was [(6, 60), 7]: the rescore alone, then the one upload with it.
    assert alone == [(6, 60), (7, None), (8, None)]
    assert not any(t.name == "podium-scorer" for t in threading.enumerate())
