"""Rank bands are computed by the scoring queue after each score and only read by the board:
they cover the board's best ``BAND_TEAMS`` ranked rows, and the board says how many."""

import numpy as np
from sqlalchemy import select

from app.honest.board.codec import from_bytes
from app.honest.engine.compare import rank_bands
from app.jobs import honest as stats_jobs
from app.models import Score, ScoreStats
from tests.helpers import API, create_competition, csv_bytes, submit, upload_key
from tests.honest.board.keys import alternating_key

N = 60  # 30 public rows, 30 private
IDS, TRUTH, KEY = alternating_key(N)


def _right_on(count: int) -> bytes:
    rows = [
        [i, t if n % (N // 2) < count else ("y" if t == "x" else "x")]
        for n, (i, t) in enumerate(zip(IDS, TRUTH, strict=True))
    ]
    return csv_bytes(["id", "label"], *rows)


def _board(client, caller) -> dict:
    response = client.get(f"{API}/competitions/bands/leaderboard", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_bands_cover_the_best_teams_and_come_from_the_queue(
    client, host, make_user, session_factory, monkeypatch
):
    monkeypatch.setattr(stats_jobs, "BAND_TEAMS", 3)
    create_competition(client, host.headers, "bands", metric={"name": "accuracy"})
    assert upload_key(client, host.headers, "bands", KEY).status_code == 201
    callers = [make_user(name) for name in ("ann", "ben", "cat", "dan")]
    ids = []
    for caller, right in zip(callers, (30, 29, 12, 6), strict=True):
        response = submit(client, caller.headers, _right_on(right), slug="bands")
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])

    def computing_on_a_request(*args, **kwargs):
        raise AssertionError("bands are computed by the queue, not by a board request")

    monkeypatch.setattr(stats_jobs, "rank_bands", computing_on_a_request)
    board = _board(client, callers[0])
    assert board["bands_cover"] == 3
    bands = [r["band"] for r in board["rows"]]
    assert bands[3] is None  # beyond the best three
    # The stored bands are those of the best three's replicates, Holm over their pairs.
    with session_factory() as session:
        found = dict(
            session.execute(
                select(Score.submission_id, ScoreStats.public_replicates)
                .join(ScoreStats, ScoreStats.score_id == Score.id)
                .where(Score.submission_id.in_(ids[:3]))
            ).all()
        )
    expected = rank_bands(
        np.array([30, 29, 12]) / 30,
        np.stack([from_bytes(found[i]) for i in ids[:3]]),
        greater_is_better=True,
    )
    assert bands[:3] == expected.tolist()
    assert bands[:3] == [1, 1, 3]  # 1.0 and 0.97 tie; 0.4 is clearly behind both
    assert "among the best 3 ranked teams" in client.get("/c/bands/leaderboard").text


def test_a_rescored_key_version_has_its_bands_when_published(client, host, alice, bob):
    create_competition(client, host.headers, "bands", metric={"name": "accuracy"})
    assert upload_key(client, host.headers, "bands", KEY).status_code == 201
    for caller, right in ((alice, 30), (bob, 6)):
        assert submit(client, caller.headers, _right_on(right), slug="bands").status_code == 202
    assert [r["band"] for r in _board(client, alice)["rows"]] == [1, 2]
    # Version 2 flips every label: the boards swap once it is published.
    flipped = KEY.replace(b",x,", b",t,").replace(b",y,", b",x,").replace(b",t,", b",y,")
    assert upload_key(client, host.headers, "bands", flipped).status_code == 201
    assert client.post(f"{API}/competitions/bands/rescore", headers=host.headers).is_success
    published = client.post(f"{API}/competitions/bands/rescore/publish", headers=host.headers)
    assert published.status_code == 200, published.text
    board = _board(client, alice)
    assert [(r["team"], r["band"]) for r in board["rows"]] == [("bob", 1), ("alice", 2)]
    assert board["bands_cover"] == 2
