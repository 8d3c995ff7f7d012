"""Rescoring after an answer-key fix: new score rows, a preview of rank moves, then publish."""

from tests.helpers import (
    API,
    KEY_ROWS,
    PERFECT,
    PUBLIC_HALF,
    csv_bytes,
    ready_competition,
    submit,
    upload_key,
)

# The fix flips two private labels: alice's PUBLIC_HALF goes from private 1.0 to worse.
FIXED_ROWS = [r[:] for r in KEY_ROWS]
FIXED_ROWS[3][1], FIXED_ROWS[4][1] = 1, 0
FIXED = csv_bytes(["id", "target", "Usage"], *FIXED_ROWS)


def _board(client, caller, board="private"):
    return client.get(
        f"{API}/competitions/churn/leaderboard?board={board}", headers=caller.headers
    ).json()


def test_a_new_key_version_changes_nothing_until_published(client, host, alice, bob):
    ready_competition(client, host.headers)
    alice_id = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    submit(client, bob.headers, PERFECT)
    before = _board(client, host)
    assert upload_key(client, host.headers, content=FIXED).json()["version"] == 2
    assert _board(client, host) == before
    assert (
        client.get(f"{API}/submissions/{alice_id}", headers=host.headers).json()["private_score"]
        == 1.0
    )


def test_rescore_preview_publish_moves_the_boards_and_keeps_every_version(client, host, alice, bob):
    ready_competition(client, host.headers)
    alice_id = submit(client, alice.headers, PUBLIC_HALF).json()[
        "id"
    ]  # private 1.0 -> 0.0 with the fix
    submit(client, bob.headers, PERFECT)  # same private predictions: 1.0 -> 0.0 as well
    upload_key(client, host.headers, content=FIXED)

    early = client.post(f"{API}/competitions/churn/rescore/publish", headers=host.headers)
    assert early.status_code == 409 and "not yet scored" in early.json()["detail"]

    started = client.post(f"{API}/competitions/churn/rescore", headers=host.headers)
    assert started.status_code == 202 and started.json() == {"version": 2, "queued": 2}

    preview = client.get(f"{API}/competitions/churn/rescore/preview", headers=host.headers).json()
    assert preview["from_version"] == 1 and preview["to_version"] == 2 and preview["pending"] == 0
    moves = {row["team"]: row for row in preview["private"]}
    assert set(moves) == {"alice", "bob"}
    assert moves["alice"]["old_score"] == 1.0 and moves["alice"]["new_score"] != 1.0
    assert all(
        row["old_rank"] is not None and row["new_rank"] is not None for row in preview["public"]
    )

    published = client.post(f"{API}/competitions/churn/rescore/publish", headers=host.headers)
    assert published.status_code == 200 and published.json()["version"] == 2
    board = _board(client, host)
    assert board["answer_key_version"] == 2
    assert {r["team"]: r["score"] for r in board["rows"]}["alice"] == moves["alice"]["new_score"]

    versions = client.get(f"{API}/submissions/{alice_id}/scores", headers=host.headers).json()
    assert [(v["version"], v["published"]) for v in versions] == [(1, True), (2, True)]
    assert versions[0]["private_score"] == 1.0

    actions = [
        e["action"]
        for e in client.get(f"{API}/competitions/churn/audit", headers=host.headers).json()
    ]
    assert (
        actions.count("answer_key_upload") == 2
        and "rescore" in actions
        and "rescore_publish" in actions
    )


def test_rescoring_twice_writes_no_second_score_row(client, host, alice):
    ready_competition(client, host.headers)
    alice_id = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    upload_key(client, host.headers, content=FIXED)
    client.post(f"{API}/competitions/churn/rescore", headers=host.headers)
    again = client.post(f"{API}/competitions/churn/rescore", headers=host.headers)
    assert again.json()["queued"] == 0
    assert len(client.get(f"{API}/submissions/{alice_id}/scores", headers=host.headers).json()) == 2


def test_rescore_without_a_newer_version_is_409(client, host):
    ready_competition(client, host.headers)
    response = client.post(f"{API}/competitions/churn/rescore", headers=host.headers)
    assert response.status_code == 409 and "newest" in response.json()["detail"]


def test_participants_cannot_rescore_or_preview(client, host, alice):
    ready_competition(client, host.headers)
    upload_key(client, host.headers, content=FIXED)
    assert (
        client.post(f"{API}/competitions/churn/rescore", headers=alice.headers).status_code == 403
    )
    assert (
        client.get(f"{API}/competitions/churn/rescore/preview", headers=alice.headers).status_code
        == 403
    )
    assert (
        client.post(f"{API}/competitions/churn/rescore/publish", headers=alice.headers).status_code
        == 403
    )
