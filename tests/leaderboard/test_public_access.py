"""Who may read a board without a token: the public board is anyone's in every form (JSON, CSV,
page) under the participants' rules; the private board opens to everyone at the deadline and
to hosts before it. A token still adds the caller's own row, and a wrong one is still a 401."""

from datetime import UTC, datetime, timedelta

import pytest

from app.honest.engine.ladder import on_grid
from tests.helpers import (
    API,
    PUBLIC_HALF,
    close_now,
    create_competition,
    csv_bytes,
    ready_competition,
    submit,
    upload_key,
)
from tests.honest.board.test_api import KEY as LADDER_KEY
from tests.honest.board.test_api import _predictions

FUTURE = (datetime.now(UTC) + timedelta(days=7)).isoformat()


def _rounded_competition(client, host, alice, bob, **fields):
    create_competition(
        client, host.headers, "reg", metric={"name": "rmse"}, score_decimals=3, **fields
    )
    key = csv_bytes(
        ["id", "y", "Usage"], ["a", 0.0, "Public"], ["b", 0.0, "Public"], ["c", 0.0, "Private"]
    )
    assert upload_key(client, host.headers, "reg", key).status_code == 201
    sub = csv_bytes(["id", "y"], ["a", 1], ["b", 0], ["c", 1])  # public rmse sqrt(1/2)
    submit(client, alice.headers, sub, slug="reg")
    other = csv_bytes(["id", "y"], ["a", 1], ["b", 1], ["c", 0])  # public rmse 1
    submit(client, bob.headers, other, slug="reg")


def test_the_public_board_needs_no_token_and_shows_what_participants_see(client, host, alice, bob):
    _rounded_competition(client, host, alice, bob)
    anyone = client.get(f"{API}/competitions/reg/leaderboard?board=public")
    assert anyone.status_code == 200, anyone.text
    board = anyone.json()
    assert [(r["team"], r["score"]) for r in board["rows"]] == [
        ("alice", round(0.5**0.5, 3)),
        ("bob", 1.0),
    ]
    assert board["score_decimals"] == 3 and board["own_row"] is None
    # With a token: the same rows, and the caller's own one.
    theirs = client.get(f"{API}/competitions/reg/leaderboard", headers=bob.headers).json()
    assert theirs["rows"] == board["rows"] and theirs["own_row"]["team"] == "bob"
    # The host's token still gives full precision.
    hosts = client.get(f"{API}/competitions/reg/leaderboard", headers=host.headers).json()
    assert hosts["rows"][0]["score"] == 0.5**0.5


def test_the_public_csv_needs_no_token_and_is_rounded(client, host, alice, bob):
    _rounded_competition(client, host, alice, bob)
    anyone = client.get(f"{API}/competitions/reg/leaderboard.csv?board=public")
    assert anyone.status_code == 200, anyone.text
    lines = anyone.text.splitlines()
    assert lines[0] == "rank,team,score,entries,last_submission_at,baseline"
    assert [line.split(",")[:3] for line in lines[1:]] == [
        ["1", "alice", repr(round(0.5**0.5, 3))],
        ["2", "bob", "1.0"],
    ]
    # The same bytes a participant gets (the rendered board is shared, never the host's).
    mine = client.get(f"{API}/competitions/reg/leaderboard.csv", headers=alice.headers)
    assert mine.content == anyone.content
    hosts = client.get(f"{API}/competitions/reg/leaderboard.csv", headers=host.headers)
    assert repr(0.5**0.5) in hosts.text


@pytest.mark.parametrize("path", ["leaderboard?board=private", "leaderboard.csv?board=private"])
def test_the_private_board_without_a_token_is_refused_before_the_deadline(
    client, host, alice, path
):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, alice.headers, PUBLIC_HALF)
    anyone = client.get(f"{API}/competitions/churn/{path}")
    assert anyone.status_code == 401
    assert anyone.json()["code"] == "unauthorized"
    assert "after the deadline" in anyone.json()["detail"]
    assert client.get(f"{API}/competitions/churn/{path}", headers=alice.headers).status_code == 403
    assert client.get(f"{API}/competitions/churn/{path}", headers=host.headers).status_code == 200


def test_the_private_board_opens_to_everyone_at_the_deadline_as_on_the_page(
    client, host, alice, session_factory
):
    ready_competition(client, host.headers, deadline=FUTURE, score_decimals=2)
    submit(client, alice.headers, PUBLIC_HALF)
    close_now(session_factory)
    board = client.get(f"{API}/competitions/churn/leaderboard?board=private")
    assert board.status_code == 200, board.text
    assert [(r["team"], r["score"]) for r in board.json()["rows"]] == [("alice", 1.0)]
    csv = client.get(f"{API}/competitions/churn/leaderboard.csv?board=private")
    assert csv.status_code == 200 and "alice" in csv.text
    assert "Private leaderboard" in client.get("/c/churn/leaderboard?board=private").text


@pytest.mark.parametrize("path", ["leaderboard", "leaderboard.csv"])
def test_a_wrong_token_is_still_401_not_an_anonymous_read(client, host, alice, path):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PUBLIC_HALF)
    for headers in (
        {"Authorization": "Bearer pdm_not-a-real-token"},
        {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
    ):
        response = client.get(f"{API}/competitions/churn/{path}", headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert response.json()["code"] == "unauthorized"


def test_an_unknown_competition_is_404_without_a_token(client):
    response = client.get(f"{API}/competitions/nothing-here/leaderboard")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_ladder_board_shows_anyone_only_released_values(client, host, alice, bob):
    create_competition(
        client,
        host.headers,
        "lad",
        metric={"name": "accuracy"},
        public_board_mode="ladder",
        ladder_step=0.25,
    )
    assert upload_key(client, host.headers, "lad", LADDER_KEY).status_code == 201
    for caller, right in ((alice, 12), (alice, 18), (bob, 15)):
        assert submit(client, caller.headers, _predictions(right), slug="lad").status_code == 202
    expected = [("alice", 1.0), ("bob", on_grid(0.75, 0.25))]  # exact: 0.9 and 0.75
    board = client.get(f"{API}/competitions/lad/leaderboard").json()
    assert [(r["team"], r["score"]) for r in board["rows"]] == expected
    assert all(r["interval"] is None and r["band"] is None for r in board["rows"])
    lines = client.get(f"{API}/competitions/lad/leaderboard.csv").text.splitlines()[1:]
    assert [(line.split(",")[1], float(line.split(",")[2])) for line in lines] == expected


def test_hidden_submissions_and_banned_teams_stay_off_the_anonymous_board(client, host, alice, bob):
    ready_competition(client, host.headers)
    theirs = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    submit(client, bob.headers, PUBLIC_HALF)
    hidden = client.post(
        f"{API}/submissions/{theirs}/hide", json={"reason": "leak"}, headers=host.headers
    )
    assert hidden.status_code == 200, hidden.text
    banned = client.post(
        f"{API}/competitions/churn/bans", json={"team": "bob"}, headers=host.headers
    )
    assert banned.status_code == 201, banned.text
    assert client.get(f"{API}/competitions/churn/leaderboard").json()["rows"] == []
    assert client.get(f"{API}/competitions/churn/leaderboard.csv").text.splitlines()[1:] == []
