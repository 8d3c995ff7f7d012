"""Leaderboard details: rounding for participants, hidden submissions, banned teams, baselines."""

from tests.helpers import (
    API,
    PERFECT,
    PUBLIC_HALF,
    create_competition,
    csv_bytes,
    ready_competition,
    submit,
    upload_key,
)


def _rows(client, caller, slug="churn", board="public"):
    response = client.get(
        f"{API}/competitions/{slug}/leaderboard?board={board}", headers=caller.headers
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_participants_see_rounded_scores_and_organisers_full_precision(client, host, alice):
    create_competition(client, host.headers, "reg", metric={"name": "rmse"}, score_decimals=3)
    upload_key(
        client, host.headers, "reg", csv_bytes(["id", "y"], ["a", 0.0], ["b", 0.0], ["c", 0.0])
    )
    submission_id = submit(
        client, alice.headers, csv_bytes(["id", "y"], ["a", 1], ["b", 1], ["c", 0]), slug="reg"
    ).json()["id"]
    exact = (2 / 3) ** 0.5
    assert _rows(client, host, "reg")["rows"][0]["score"] == exact
    board = _rows(client, alice, "reg")
    assert board["rows"][0]["score"] == round(exact, 3) and board["score_decimals"] == 3
    assert client.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()[
        "public_score"
    ] == round(exact, 3)
    assert (
        client.get(f"{API}/submissions/{submission_id}", headers=host.headers).json()[
            "public_score"
        ]
        == exact
    )


def test_a_hidden_submission_leaves_the_board_and_is_audited(client, host, alice, bob):
    ready_competition(client, host.headers)
    best = submit(client, alice.headers, PERFECT).json()["id"]
    submit(client, alice.headers, PUBLIC_HALF)
    submit(client, bob.headers, PUBLIC_HALF)
    hidden = client.post(
        f"{API}/submissions/{best}/hide", json={"reason": "leak"}, headers=host.headers
    )
    assert hidden.status_code == 200 and hidden.json()["hidden"] is True
    rows = _rows(client, alice)["rows"]
    assert [r["score"] for r in rows] == [0.5, 0.5]  # alice falls back to her other entry
    audit = client.get(f"{API}/competitions/churn/audit", headers=host.headers).json()
    entry = next(e for e in audit if e["action"] == "hide_submission")
    assert entry["actor"] == "host" and entry["before"] == {"hidden": False}
    assert entry["after"] == {"hidden": True, "reason": "leak"}
    client.delete(f"{API}/submissions/{best}/hide", headers=host.headers)
    assert _rows(client, alice)["rows"][0]["score"] == 1.0


def test_participants_cannot_hide_or_ban(client, host, alice):
    ready_competition(client, host.headers)
    submission_id = submit(client, alice.headers, PERFECT).json()["id"]
    assert (
        client.post(f"{API}/submissions/{submission_id}/hide", headers=alice.headers).status_code
        == 403
    )
    assert (
        client.post(
            f"{API}/competitions/churn/bans", json={"team": "alice"}, headers=alice.headers
        ).status_code
        == 403
    )


def test_a_banned_team_leaves_the_board_cannot_submit_and_is_audited(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)
    submit(client, bob.headers, PUBLIC_HALF)
    response = client.post(
        f"{API}/competitions/churn/bans",
        json={"team": "alice", "reason": "multiple accounts"},
        headers=host.headers,
    )
    assert response.status_code == 201
    assert [r["team"] for r in _rows(client, bob)["rows"]] == ["bob"]
    assert submit(client, alice.headers, PERFECT).status_code == 403
    actions = [
        e["action"]
        for e in client.get(f"{API}/competitions/churn/audit", headers=host.headers).json()
    ]
    assert "ban_team" in actions
    assert (
        client.delete(f"{API}/competitions/churn/bans/alice", headers=host.headers).status_code
        == 200
    )
    assert [r["team"] for r in _rows(client, bob)["rows"]] == ["alice", "bob"]


def test_banning_an_unknown_team_is_404(client, host):
    ready_competition(client, host.headers)
    assert (
        client.post(
            f"{API}/competitions/churn/bans", json={"team": "ghosts"}, headers=host.headers
        ).status_code
        == 404
    )


def test_baseline_entries_show_on_the_board_without_taking_a_rank(client, host, alice, bob):
    ready_competition(client, host.headers)
    baseline = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("b.csv", PERFECT, "text/csv")},
        data={"baseline": "true", "description": "organiser baseline"},
        headers=host.headers,
    )
    assert baseline.status_code == 202
    submit(client, alice.headers, PUBLIC_HALF)
    rows = _rows(client, bob)["rows"]
    assert [(r["team"], r["rank"], r["baseline"]) for r in rows] == [
        ("organiser baseline", None, True),  # labelled by its description
        ("alice", 1, False),
    ]


def test_participants_cannot_make_baseline_entries(client, host, alice):
    ready_competition(client, host.headers)
    response = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("b.csv", PERFECT, "text/csv")},
        data={"baseline": "true"},
        headers=alice.headers,
    )
    assert response.status_code == 403
