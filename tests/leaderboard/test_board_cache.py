"""The whole-board CSV is kept rendered per process: every change that moves a board shows in the
next download, a host's full-precision bytes never reach a participant (nor the reverse), the
Ladder's board is never served exact, and the kept bytes stay within their budget."""

import csv
import io
from datetime import UTC, datetime, timedelta

from app.leaderboard.cache import BoardView, RenderedBoards
from tests.helpers import (
    API,
    PERFECT,
    PRIVATE_WRONG,
    PUBLIC_HALF,
    create_competition,
    csv_bytes,
    ready_competition,
    submit,
    upload_key,
)


def _csv(client, caller, board="public", slug="churn", status=200):
    response = client.get(
        f"{API}/competitions/{slug}/leaderboard.csv?board={board}", headers=caller.headers
    )
    assert response.status_code == status, response.text
    return [(r["rank"], r["team"], r["score"]) for r in csv.DictReader(io.StringIO(response.text))]


def _cache(client) -> RenderedBoards:
    return client.app.state.rendered_boards


def test_a_new_score_shows_in_the_next_download(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PUBLIC_HALF)
    assert _csv(client, bob) == [("1", "alice", "0.5")]
    assert _csv(client, bob) == [("1", "alice", "0.5")] and len(_cache(client)) == 1
    submit(client, bob.headers, PERFECT)
    assert _csv(client, alice) == [("1", "bob", "1.0"), ("2", "alice", "0.5")]


def test_hiding_and_banning_show_in_the_next_download(client, host, alice, bob):
    ready_competition(client, host.headers)
    best = submit(client, alice.headers, PERFECT).json()["id"]
    submit(client, alice.headers, PUBLIC_HALF)
    submit(client, bob.headers, PUBLIC_HALF)
    assert _csv(client, bob)[0] == ("1", "alice", "1.0")
    client.post(f"{API}/submissions/{best}/hide", json={"reason": "leak"}, headers=host.headers)
    assert [r[2] for r in _csv(client, bob)] == ["0.5", "0.5"]
    client.delete(f"{API}/submissions/{best}/hide", headers=host.headers)
    assert _csv(client, bob)[0] == ("1", "alice", "1.0")
    banned = client.post(
        f"{API}/competitions/churn/bans", json={"team": "alice"}, headers=host.headers
    )
    assert banned.status_code == 201, banned.text
    assert _csv(client, bob) == [("1", "bob", "0.5")]


def test_a_selection_shows_in_the_next_private_download(client, host, alice):
    ready_competition(
        client, host.headers, deadline=(datetime.now(UTC) + timedelta(days=1)).isoformat()
    )
    submit(client, alice.headers, PERFECT)
    wrong = submit(client, alice.headers, PRIVATE_WRONG).json()["id"]
    # None selected: the best private score among the two best public entries.
    assert _csv(client, host, "private") == [("1", "alice", "1.0")]
    selected = client.post(f"{API}/submissions/{wrong}/select", headers=alice.headers)
    assert selected.status_code == 200, selected.text
    assert _csv(client, host, "private") == [("1", "alice", "0.0")]


def test_a_moved_deadline_shows_in_the_next_download(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PUBLIC_HALF)
    between = datetime.now(UTC)
    submit(client, bob.headers, PERFECT)
    assert len(_csv(client, alice, "public")) == 2
    assert len(_csv(client, host, "private")) == 2
    moved = client.patch(
        f"{API}/competitions/churn", json={"deadline": between.isoformat()}, headers=host.headers
    )
    assert moved.status_code == 200, moved.text
    # bob's entry came after the new deadline: late, and off both boards.
    assert _csv(client, alice, "public") == [("1", "alice", "0.5")]
    assert [r[1] for r in _csv(client, alice, "private")] == ["alice"]  # open: past deadline
    assert [r[1] for r in _csv(client, host, "private")] == ["alice"]
    reopened = client.patch(
        f"{API}/competitions/churn",
        json={"deadline": (datetime.now(UTC) + timedelta(days=1)).isoformat()},
        headers=host.headers,
    )
    assert reopened.status_code == 200, reopened.text
    # The private board is closed to participants again, whatever was kept rendered.
    _csv(client, alice, "private", status=403)


def test_a_participant_never_gets_the_hosts_full_precision_bytes(client, host, alice, bob):
    create_competition(client, host.headers, "reg", metric={"name": "rmse"}, score_decimals=3)
    upload_key(
        client, host.headers, "reg", csv_bytes(["id", "y"], ["a", 0.0], ["b", 0.0], ["c", 0.0])
    )
    submit(client, alice.headers, csv_bytes(["id", "y"], ["a", 1], ["b", 1], ["c", 0]), slug="reg")
    exact = (2 / 3) ** 0.5
    assert _csv(client, host, slug="reg") == [("1", "alice", repr(exact))]
    assert _csv(client, bob, slug="reg") == [("1", "alice", repr(round(exact, 3)))]
    assert _csv(client, host, slug="reg") == [("1", "alice", repr(exact))]
    assert _csv(client, alice, slug="reg") == [("1", "alice", repr(round(exact, 3)))]
    changed = client.patch(
        f"{API}/competitions/reg", json={"score_decimals": 1}, headers=host.headers
    )
    assert changed.status_code == 200, changed.text
    assert _csv(client, bob, slug="reg") == [("1", "alice", repr(round(exact, 1)))]


def test_the_ladder_csv_shows_participants_only_released_values(client, host, alice, bob):
    ready_competition(client, host.headers, public_board_mode="ladder", ladder_step=0.3)
    submit(client, alice.headers, PERFECT)  # exact public AUC 1.0
    submit(client, bob.headers, PUBLIC_HALF)  # exact 0.5
    board = client.get(f"{API}/competitions/churn/leaderboard", headers=bob.headers).json()
    released = [(str(r["rank"]), r["team"], repr(r["score"])) for r in board["rows"]]
    assert _csv(client, bob) == released
    assert _csv(client, host) == [("1", "alice", "1.0"), ("2", "bob", "0.5")]
    assert _csv(client, alice) == released


def test_kept_boards_stay_within_their_budget():
    cache = RenderedBoards(max_entries=2, max_bytes=10)
    views = [BoardView(1, 1, board, False, 5) for board in ("public", "private")]
    cache.put(views[0], 1, b"aaaa")
    cache.put(views[1], 1, b"bbbb")
    cache.put(BoardView(2, 2, "public", False, 5), 1, b"cccc")
    assert len(cache) == 2 and cache.get(views[0], 1) is None  # least recently used goes
    cache.put(views[1], 2, b"dddddddd")
    assert cache.size_bytes <= 10 and cache.get(views[1], 2) == b"dddddddd"
    assert cache.get(views[1], 1) is None  # another revision is a miss
    cache.put(views[1], 1, b"old")  # a slow reader of an older revision keeps the newer bytes
    assert cache.get(views[1], 2) == b"dddddddd"
    cache.put(views[0], 3, b"x" * 11)  # larger than the whole budget: not kept
    assert cache.get(views[0], 3) is None
