"""The scoring queue's threshold for the parameter-free Ladder: the exact paired standard error of
the difference with the team's best released submission (or the host's baseline) on the public
rows, s/√n for accuracy and DeLong's for AUC, and the board releases or withholds by it."""

import numpy as np
import pytest
from sqlalchemy import select

from app.honest.engine.delong import delong_paired_se
from app.models import Score, ScoreStats
from tests.helpers import API, create_competition, csv_bytes, submit, upload_key
from tests.honest.board.keys import alternating_key

N = 40  # 20 public rows, 20 private
IDS, TRUTH, KEY = alternating_key(N)


def _right_on(public_rows: set[int]) -> bytes:
    """Right on these public rows and on every private row."""
    rows = []
    for n, (i, t) in enumerate(zip(IDS, TRUTH, strict=True)):
        right = n in public_rows or n >= N // 2
        rows.append([i, t if right else ("y" if t == "x" else "x")])
    return csv_bytes(["id", "label"], *rows)


def _submit(client, caller, content: bytes, slug: str = "free", **data) -> int:
    if data:
        response = client.post(
            f"{API}/competitions/{slug}/submissions",
            files={"file": ("s.csv", content, "text/csv")},
            data=data,
            headers=caller.headers,
        )
    else:
        response = submit(client, caller.headers, content, slug=slug)
    assert response.status_code == 202, response.text
    return response.json()["id"]


def _mine(client, caller, slug: str = "free") -> dict[int, dict]:
    response = client.get(f"{API}/competitions/{slug}/submissions", headers=caller.headers)
    assert response.status_code == 200, response.text
    return {s["id"]: s for s in response.json()}


def _thresholds(session_factory, ids: list[int]) -> list[float | None]:
    with session_factory() as session:
        found = dict(
            session.execute(
                select(Score.submission_id, ScoreStats.ladder_threshold)
                .join(ScoreStats, ScoreStats.score_id == Score.id)
                .where(Score.submission_id.in_(ids))
            ).all()
        )
    return [found.get(i) for i in ids]


def _paired_se(diff: list[int]) -> float:
    """s/√n of per-row differences, written out."""
    n = len(diff)
    mean = sum(diff) / n
    return (sum((d - mean) ** 2 for d in diff) / (n - 1)) ** 0.5 / n**0.5


@pytest.mark.parametrize("intervals", [True, False])
def test_a_parameter_free_board_releases_by_the_exact_paired_standard_error(
    client, host, alice, session_factory, intervals
):
    create_competition(
        client,
        host.headers,
        "free",
        metric={"name": "accuracy"},
        public_board_mode="ladder_free",
        score_intervals=intervals,
    )
    assert upload_key(client, host.headers, "free", KEY).status_code == 201
    first = _submit(client, alice, _right_on(set(range(12))))  # 0.60
    # 0.65: row 0 turned wrong, rows 12 and 13 right; SE of the difference with the first 0.088.
    withheld = _submit(client, alice, _right_on(set(range(1, 14))))
    # 0.70: rows 12 and 13 right on top of the first's; SE 0.069 (the fixed step 1/√20 is 0.22).
    released = _submit(client, alice, _right_on(set(range(14))))
    se_withheld = _paired_se([-1, 1, 1] + [0] * 17)
    se_released = _paired_se([1, 1] + [0] * 18)
    assert 0.05 < se_withheld and 0.10 > se_released
    assert _thresholds(session_factory, [first, withheld, released]) == pytest.approx(
        [0.0, se_withheld, se_released], rel=1e-9
    )
    mine = _mine(client, alice)
    assert [mine[i]["released"] for i in (first, withheld, released)] == [True, False, True]
    assert [mine[i]["public_score"] for i in (first, withheld, released)] == [0.6, 0.6, 0.7]
    board = client.get(f"{API}/competitions/free/leaderboard", headers=alice.headers).json()
    assert [(r["team"], r["score"]) for r in board["rows"]] == [("alice", 0.7)]


def test_the_parameter_free_ladder_starts_from_the_hosts_baseline(
    client, host, alice, session_factory
):
    create_competition(
        client, host.headers, "free", metric={"name": "accuracy"}, public_board_mode="ladder_free"
    )
    assert upload_key(client, host.headers, "free", KEY).status_code == 201
    _submit(client, host, _right_on(set(range(11))), baseline="true")  # 0.55
    # 0.60 against the baseline: rows 9, 10 wrong, 11-13 right; SE 0.114 > 0.05: withheld
    # (without the baseline a first submission is always released).
    first = _submit(client, alice, _right_on(set(range(9)) | {11, 12, 13}))
    second = _submit(client, alice, _right_on(set(range(20))))  # 1.0: 9 more rows right
    assert _thresholds(session_factory, [first]) == pytest.approx(
        [_paired_se([-1, -1, 1, 1, 1] + [0] * 15)], rel=1e-9
    )
    mine = _mine(client, alice)
    assert mine[first]["public_score"] == 0.55 and not mine[first]["released"]
    assert mine[second]["public_score"] == 1.0 and mine[second]["released"]


def test_an_auc_board_uses_delongs_paired_standard_error(client, host, alice, session_factory):
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, N)
    y[:4] = [0, 1, 0, 1]  # both classes among the public rows
    usage = ["Public" if n < N // 2 else "Private" for n in range(N)]
    key = csv_bytes(
        ["id", "target", "Usage"], *[[i, t, u] for i, t, u in zip(IDS, y, usage, strict=True)]
    )
    create_competition(client, host.headers, "auc", public_board_mode="ladder_free")
    assert upload_key(client, host.headers, "auc", key).status_code == 201
    a = np.round(y + rng.normal(0, 1.0, N), 2)
    b = np.round(a + rng.normal(0, 0.5, N), 2)
    ids = [
        _submit(client, alice, csv_bytes(["id", "target"], *zip(IDS, s, strict=True)), slug="auc")
        for s in (a, b)
    ]
    public = slice(0, N // 2)
    expected = delong_paired_se(y[public], b[public], a[public])
    assert _thresholds(session_factory, ids) == pytest.approx([0.0, expected], rel=1e-9)
