"""A benchmark's board and its versioned test set: publishing a new key version rescores every
scored submission as jobs (charged nothing, recorded), each row names the version it was scored
on, and the board may show every submission. Runs on SQLite and PostgreSQL (``client``)."""

import csv
import io
import json

import pytest
from sqlalchemy import select

from app.jobs.score import rescore_submission
from app.main import create_app
from app.models import AnswerKey, Score
from tests.asgi_client import TestClient
from tests.helpers import (
    API,
    KEY_ROWS,
    PERFECT,
    PUBLIC_HALF,
    ParkedQueue,
    csv_bytes,
    ready_competition,
    statements_during,
    submit,
    upload_key,
)

# v2 flips two public labels: PERFECT's public AUC drops below 1.0, PUBLIC_HALF's stays 0.5.
V2_ROWS = [r[:] for r in KEY_ROWS]
V2_ROWS[0][1], V2_ROWS[1][1] = 0, 1
V2 = csv_bytes(["id", "target", "Usage"], *V2_ROWS)
# A v3 with a row no earlier submission predicts: it can score none of them.
V3 = csv_bytes(["id", "target", "Usage"], *KEY_ROWS, ["g", 1, "Public"])
SLUG = "bench"


def _benchmark(client, host, **fields):
    ready_competition(client, host.headers, SLUG, benchmark=True, **fields)


def _board(client, caller, board="public"):
    response = client.get(
        f"{API}/competitions/{SLUG}/leaderboard?board={board}", headers=caller.headers
    )
    assert response.status_code == 200, response.text
    return response.json()


def _csv(client, caller, board="public"):
    response = client.get(
        f"{API}/competitions/{SLUG}/leaderboard.csv?board={board}", headers=caller.headers
    )
    assert response.status_code == 200, response.text
    return list(csv.DictReader(io.StringIO(response.text)))


def _versions(client, host, submission_id):
    found = client.get(f"{API}/submissions/{submission_id}/scores", headers=host.headers).json()
    return {v["version"]: v for v in found}


def _publish(client, host):
    response = client.post(f"{API}/competitions/{SLUG}/rescore/publish", headers=host.headers)
    assert response.status_code == 200, response.text
    return response.json()


def _ledger_kinds(client, host):
    lines = client.get(f"{API}/competitions/{SLUG}/ledger", headers=host.headers).text
    return [json.loads(line).get("kind") for line in lines.splitlines() if line.strip()]


def test_publishing_a_new_key_version_rescores_every_scored_submission(client, host, alice, bob):
    _benchmark(client, host)
    alice_id = submit(client, alice.headers, PERFECT, SLUG).json()["id"]
    bob_id = submit(client, bob.headers, PUBLIC_HALF, SLUG).json()["id"]
    quota = client.get(f"{API}/competitions/{SLUG}/quota", headers=alice.headers).json()
    assert upload_key(client, host.headers, SLUG, V2).json()["version"] == 2

    # No rescore first: a benchmark publishes at once and rescores afterwards, as jobs.
    assert _publish(client, host)["version"] == 2

    for submission_id in (alice_id, bob_id):
        versions = _versions(client, host, submission_id)
        assert sorted(versions) == [1, 2] and versions[2]["public_score"] is not None
    assert _versions(client, host, alice_id)[2]["public_score"] < 1.0
    board = _board(client, host)
    assert board["benchmark"] is True and board["answer_key_version"] == 2
    assert {r["team"]: r["key_version"] for r in board["rows"]} == {"alice": 2, "bob": 2}
    assert {r["team"]: r["score"] for r in board["rows"]}["alice"] == pytest.approx(
        _versions(client, host, alice_id)[2]["public_score"]
    )
    # Charged nothing: the same quota as before, and no new submission.
    assert client.get(f"{API}/competitions/{SLUG}/quota", headers=alice.headers).json() == quota
    mine = client.get(f"{API}/competitions/{SLUG}/submissions", headers=alice.headers).json()
    assert len(mine["items"] if isinstance(mine, dict) else mine) == 1
    # Each rescoring is a fact of the record, through its one append helper.
    assert _ledger_kinds(client, host).count("rescored") == 2


def test_a_mixed_board_then_asking_again_finishes_the_rescoring_once(
    client, host, alice, bob, make_user
):
    _benchmark(client, host)
    submit(client, alice.headers, PERFECT, SLUG)
    submit(client, bob.headers, PUBLIC_HALF, SLUG)
    upload_key(client, host.headers, SLUG, V2)
    running = client.app.state.scoring_queue
    parked = ParkedQueue()
    client.app.state.scoring_queue = parked
    _publish(client, host)  # the rescoring jobs are lost with their server
    client.app.state.scoring_queue = running

    carol = make_user("carol")
    submit(client, carol.headers, PERFECT, SLUG)  # scored on the published version at once
    rows = {r["team"]: r["key_version"] for r in _board(client, host)["rows"]}
    assert rows == {"alice": 1, "bob": 1, "carol": 2}
    assert {r["team"]: r["key_version"] for r in _csv(client, host)} == {
        "alice": "1",
        "bob": "1",
        "carol": "2",
    }

    again = client.post(f"{API}/competitions/{SLUG}/rescore", headers=host.headers)
    assert again.status_code == 202 and again.json() == {"version": 2, "queued": 2}
    assert {r["key_version"] for r in _board(client, host)["rows"]} == {2}
    # Safe to run twice: nothing is left to queue, and no second score row is written.
    twice = client.post(f"{API}/competitions/{SLUG}/rescore", headers=host.headers)
    assert twice.json() == {"version": 2, "queued": 0}
    assert _ledger_kinds(client, host).count("rescored") == 2


def test_a_version_that_cannot_score_a_submission_leaves_its_older_row(client, host, alice):
    _benchmark(client, host)
    alice_id = submit(client, alice.headers, PERFECT, SLUG).json()["id"]
    upload_key(client, host.headers, SLUG, V3)
    _publish(client, host)
    versions = _versions(client, host, alice_id)
    assert sorted(versions) == [1, 2] and versions[2]["public_score"] is None
    (row,) = _board(client, host)["rows"]
    assert row["team"] == "alice" and row["key_version"] == 1 and row["score"] == 1.0
    # Its status stays, and its team sees the score its row shows: scored on the test set it had.
    shown = client.get(f"{API}/submissions/{alice_id}", headers=alice.headers).json()
    assert shown["status"] == "scored" and shown["public_score"] == 1.0
    listed = client.get(f"{API}/competitions/{SLUG}/submissions", headers=alice.headers).json()
    items = listed["items"] if isinstance(listed, dict) else listed
    assert [i["public_score"] for i in items] == [1.0]


def test_a_board_of_every_submission_names_each_team_and_submission(client, host, alice, bob):
    _benchmark(client, host, board_every_submission=True)
    first = submit(client, alice.headers, PUBLIC_HALF, SLUG).json()["id"]
    second = submit(client, alice.headers, PERFECT, SLUG).json()["id"]
    third = submit(client, bob.headers, PUBLIC_HALF, SLUG).json()["id"]
    board = _board(client, bob)
    assert board["every_submission"] is True and board["total"] == 3
    assert [(r["rank"], r["team"], r["submission"]) for r in board["rows"]] == [
        (1, "alice", second),
        (2, "alice", first),
        (3, "bob", third),
    ]
    assert all(r["key_version"] == 1 and r["submitted_at"] for r in board["rows"])
    assert board["own_row"]["submission"] == third
    rows = _csv(client, bob)
    assert [(r["rank"], r["team"], r["submission"], r["key_version"]) for r in rows] == [
        ("1", "alice", str(second), "1"),
        ("2", "alice", str(first), "1"),
        ("3", "bob", str(third), "1"),
    ]
    page = client.get(f"{API}/competitions/{SLUG}/leaderboard?limit=1&offset=1").json()
    assert [r["submission"] for r in page["rows"]] == [first] and page["total"] == 3


def test_without_every_submission_a_benchmark_shows_each_teams_best(client, host, alice, bob):
    _benchmark(client, host)
    submit(client, alice.headers, PERFECT, SLUG)
    submit(client, alice.headers, PUBLIC_HALF, SLUG)
    submit(client, bob.headers, PUBLIC_HALF, SLUG)
    board = _board(client, alice)
    assert [(r["team"], r["entries"]) for r in board["rows"]] == [("alice", 2), ("bob", 1)]
    assert board["rows"][0]["score"] == 1.0 and board["rows"][0]["submission"] is None
    assert "submission" not in _csv(client, alice)[0]
    # With counts: last, each team's latest stands (a benchmark has no final selections).
    changed = client.patch(
        f"{API}/competitions/{SLUG}/phases/main", json={"counts": "last"}, headers=host.headers
    )
    assert changed.status_code == 200, changed.text
    assert {r["team"]: r["score"] for r in _board(client, alice)["rows"]} == {
        "alice": 0.5,
        "bob": 0.5,
    }


def test_a_competition_publishes_as_before_and_its_rows_carry_the_board_version(
    client, host, alice
):
    ready_competition(client, host.headers, SLUG)
    submit(client, alice.headers, PERFECT, SLUG)
    upload_key(client, host.headers, SLUG, V2)
    early = client.post(f"{API}/competitions/{SLUG}/rescore/publish", headers=host.headers)
    assert early.status_code == 409 and "not yet scored" in early.json()["detail"]
    board = _board(client, host)
    assert board["benchmark"] is False and board["rows"][0]["key_version"] == 1
    assert "key_version" not in _csv(client, host)[0]


def test_a_benchmark_page_costs_the_same_statements_whatever_the_submissions(
    client, host, make_user, connection
):
    _benchmark(client, host, board_every_submission=True)
    callers = [make_user(f"u{i}") for i in range(6)]

    def read(limit: int) -> int:
        return len(
            statements_during(connection, lambda: _board_page(client, callers[0], limit=limit))
        )

    submit(client, callers[0].headers, PERFECT, SLUG)
    small = read(100)
    for caller in callers[1:]:
        submit(client, caller.headers, PERFECT, SLUG)
        submit(client, caller.headers, PUBLIC_HALF, SLUG)
    upload_key(client, host.headers, SLUG, V2)
    _publish(client, host)
    assert _board_page(client, callers[0], limit=100)["total"] == 11
    assert read(100) == small
    assert read(3) == small


def _board_page(client, caller, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    response = client.get(f"{API}/competitions/{SLUG}/leaderboard?{query}", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_rescoring_job_run_twice_writes_one_row_and_one_fact(
    client, host, alice, bob, session_factory, settings
):
    _benchmark(client, host)
    ids = [
        submit(client, alice.headers, PERFECT, SLUG).json()["id"],
        submit(client, bob.headers, PUBLIC_HALF, SLUG).json()["id"],
    ]
    upload_key(client, host.headers, SLUG, V2)
    running, parked = client.app.state.scoring_queue, ParkedQueue()
    client.app.state.scoring_queue = parked
    _publish(client, host)
    client.app.state.scoring_queue = running
    assert sorted(parked.ids) == sorted(ids)
    with session_factory() as session:
        key_id = session.scalar(select(AnswerKey.id).where(AnswerKey.version == 2))
    for _ in range(2):  # a retried task, a job handed out twice
        for submission_id in parked.ids:
            rescore_submission(session_factory, submission_id, key_id, settings)
    with session_factory() as session:
        rows = session.scalars(select(Score).where(Score.answer_key_id == key_id)).all()
    assert sorted(r.submission_id for r in rows) == sorted(ids)
    assert _ledger_kinds(client, host).count("rescored") == 2
    assert {r["key_version"] for r in _board(client, host)["rows"]} == {2}


def test_a_server_that_starts_queues_the_rescores_the_last_one_lost(
    client, host, alice, bob, settings, session_factory
):
    _benchmark(client, host)
    submit(client, alice.headers, PERFECT, SLUG)
    submit(client, bob.headers, PUBLIC_HALF, SLUG)
    upload_key(client, host.headers, SLUG, V2)
    running, parked = client.app.state.scoring_queue, ParkedQueue()
    client.app.state.scoring_queue = parked
    _publish(client, host)  # its in-memory jobs die with the process
    client.app.state.scoring_queue = running
    assert {r["key_version"] for r in _board(client, host)["rows"]} == {1}
    with TestClient(create_app(settings, session_factory=session_factory)) as restarted:
        assert {r["key_version"] for r in _board(restarted, host)["rows"]} == {2}
    assert _ledger_kinds(client, host).count("rescored") == 2
