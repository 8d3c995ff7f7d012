"""Honest leaderboards through the API: the Ladder hides exact public scores from participants,
scores carry intervals and bands, and comparisons and the shake-up answer only who may ask."""

import numpy as np
import pytest

from app.honest.engine.ladder import on_grid
from tests.helpers import API, close_now, create_competition, csv_bytes, submit, upload_key
from tests.honest.board.keys import alternating_key

N = 40  # 20 public rows, 20 private
IDS, TRUTH, KEY = alternating_key(N)


def _predictions(public_right: int | set[int], private_right: int = 10) -> bytes:
    """A submission right on the first ``public_right`` public rows (or on those in the set) and
    on the first ``private_right`` private rows."""
    right_public = set(range(public_right)) if isinstance(public_right, int) else public_right
    rows = []
    for n, (i, t) in enumerate(zip(IDS, TRUTH, strict=True)):
        right = n in right_public if n < N // 2 else n - N // 2 < private_right
        rows.append([i, t if right else ("y" if t == "x" else "x")])
    return csv_bytes(["id", "label"], *rows)


def _competition(client, host, slug="lad", **fields):
    create_competition(client, host.headers, slug, metric={"name": "accuracy"}, **fields)
    assert upload_key(client, host.headers, slug, KEY).status_code == 201


def _submit(client, caller, content: bytes, slug: str = "lad") -> int:
    response = submit(client, caller.headers, content, slug=slug)
    assert response.status_code == 202, response.text
    return response.json()["id"]


def _baseline(client, host, content: bytes) -> None:
    response = submit(client, host.headers, content, slug="lad", baseline=True)
    assert response.status_code == 202, response.text


def _get(client, caller, path, status=200):
    response = client.get(f"{API}{path}", headers=caller.headers)
    assert response.status_code == status, response.text
    return response.json()


def test_settings_validate_the_board_mode_and_step(client, host):
    for bad in ({"public_board_mode": "fuzzy"}, {"ladder_step": 0}, {"ladder_step": 1.5}):
        response = client.post(
            f"{API}/competitions",
            json={"slug": "bad", "title": "Bad", "metric": {"name": "accuracy"}, **bad},
            headers=host.headers,
        )
        assert response.status_code == 422, response.text
    _competition(client, host)
    changed = client.patch(
        f"{API}/competitions/lad",
        json={"public_board_mode": "ladder_free", "ladder_step": 0.1},
        headers=host.headers,
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["public_board_mode"] == "ladder_free"
    assert changed.json()["ladder_step"] == 0.1
    cleared = client.patch(
        f"{API}/competitions/lad", json={"public_board_mode": None}, headers=host.headers
    )
    assert cleared.status_code == 422


def test_a_ladder_board_shows_participants_only_released_values(client, host, alice, bob):
    _competition(client, host, public_board_mode="ladder", ladder_step=0.25)
    ids = [_submit(client, alice, _predictions(k)) for k in (12, 14, 18)]
    _submit(client, bob, _predictions(15))
    # Exact public accuracies: 0.6, 0.7, 0.9 (alice) and 0.75 (bob). Step 0.25: alice shows
    # [0.6] = 0.5, then 0.7 does not beat 0.5 by 0.25, then 0.9 is released as [0.9] = 1.0.
    mine = {s["id"]: s for s in _get(client, alice, "/competitions/lad/submissions")}
    assert [mine[i]["public_score"] for i in ids] == [0.5, 0.5, 1.0]
    assert [mine[i]["released"] for i in ids] == [True, False, True]
    assert all(mine[i]["public_interval"] is None for i in ids)
    detail = _get(client, alice, f"/submissions/{ids[1]}")
    assert detail["public_score"] == 0.5 and detail["released"] is False
    board = _get(client, alice, "/competitions/lad/leaderboard")
    assert board["public_board_mode"] == "ladder"
    assert [(r["team"], r["score"]) for r in board["rows"]] == [
        ("alice", 1.0),
        ("bob", on_grid(0.75, 0.25)),
    ]
    assert all(r["interval"] is None and r["band"] is None for r in board["rows"])
    # The hosts see the exact scores.
    hosts = _get(client, host, "/competitions/lad/leaderboard")
    assert [(r["team"], r["score"]) for r in hosts["rows"]] == [("alice", 0.9), ("bob", 0.75)]
    assert _get(client, host, f"/submissions/{ids[1]}")["public_score"] == 0.7


def test_the_ladder_starts_from_the_hosts_baseline(client, host, alice):
    _competition(client, host, public_board_mode="ladder", ladder_step=0.25)
    _baseline(client, host, _predictions(11))
    # The baseline's 0.55 starts the Ladder at [0.55] = 0.5: 0.7 does not beat it by 0.25.
    first = _submit(client, alice, _predictions(14))
    second = _submit(client, alice, _predictions(20))
    mine = {s["id"]: s for s in _get(client, alice, "/competitions/lad/submissions")}
    assert mine[first]["public_score"] == 0.5 and not mine[first]["released"]
    assert mine[second]["public_score"] == 1.0 and mine[second]["released"]


def test_a_parameter_free_ladder_hides_exact_scores_too(client, host, alice):
    _competition(client, host, public_board_mode="ladder_free")
    # 0.6, then 0.65 from 3 rows turned right and 2 turned wrong (paired SE about 0.11),
    # then 0.95 (7 more rows right: far beyond the SE).
    churned = set(range(12)) - {0, 1} | {12, 13, 14}
    ids = [_submit(client, alice, _predictions(k)) for k in (12, churned, 19)]
    mine = {s["id"]: s for s in _get(client, alice, "/competitions/lad/submissions")}
    shown = [mine[i]["public_score"] for i in ids]
    assert shown[0] == 0.6 and mine[ids[0]]["released"]
    assert shown[1] == 0.6 and not mine[ids[1]]["released"]
    assert shown[2] == 0.95 and mine[ids[2]]["released"]
    assert _get(client, host, f"/submissions/{ids[1]}")["public_score"] == 0.65


def test_exact_boards_carry_intervals_and_bands(client, host, alice, bob):
    _competition(client, host)
    a = _submit(client, alice, _predictions(19))
    _submit(client, bob, _predictions(18))
    board = _get(client, alice, "/competitions/lad/leaderboard")
    for row in board["rows"]:
        interval = row["interval"]
        assert interval["low"] <= row["score"] <= interval["high"]
        assert interval["replicates"] == 1000 and interval["level"] == 0.95
    # 0.95 and 0.9 on 20 rows are not significantly different: one band.
    assert [r["band"] for r in board["rows"]] == [1, 1]
    view = _get(client, alice, f"/submissions/{a}")
    assert view["public_interval"]["bca_low"] <= 0.95 <= view["public_interval"]["bca_high"]
    assert "private_interval" not in view  # the private split stays hidden until the deadline


def test_turning_intervals_off_costs_nothing(client, host, alice, session_factory):
    from sqlalchemy import func, select

    from app.models import ScoreStats

    _competition(client, host, score_intervals=False)
    a = _submit(client, alice, _predictions(19))
    assert _get(client, alice, f"/submissions/{a}")["public_interval"] is None
    assert _get(client, alice, "/competitions/lad/leaderboard")["rows"][0]["interval"] is None
    with session_factory() as session:
        assert session.scalar(select(func.count(ScoreStats.id))) == 0
    _get(client, host, f"/competitions/lad/compare?a={a}&b={a}", status=409)


def test_compare_answers_hosts_on_any_pair_and_participants_on_their_own(client, host, alice, bob):
    _competition(client, host)
    a1 = _submit(client, alice, _predictions(20, 20))
    a2 = _submit(client, alice, _predictions(10, 10))
    b1 = _submit(client, bob, _predictions(15))
    mine = _get(client, alice, f"/competitions/lad/compare?a={a1}&b={a2}")
    assert [c["split"] for c in mine["comparisons"]] == ["public"]
    public = mine["comparisons"][0]
    assert public["difference"] == pytest.approx(0.5)
    assert public["low"] > 0 and public["p_value"] < 0.01
    # Someone else's submission does not exist for a participant.
    _get(client, alice, f"/competitions/lad/compare?a={a1}&b={b1}", status=404)
    _get(client, bob, f"/competitions/lad/compare?a={a1}&b={a2}", status=404)
    _get(client, alice, f"/competitions/lad/compare?a={a1}&b=999999", status=404)
    _get(client, alice, f"/competitions/lad/compare?a={a1}", status=422)
    hosts = _get(client, host, f"/competitions/lad/compare?a={b1}&b={a1}")
    assert [c["split"] for c in hosts["comparisons"]] == ["public", "private"]
    assert hosts["comparisons"][0]["difference"] == pytest.approx(-0.25)
    assert hosts["comparisons"][0]["p_value"] > 0.95


def test_compare_is_for_hosts_only_on_a_ladder_board(client, host, alice):
    _competition(client, host, public_board_mode="ladder")
    a1 = _submit(client, alice, _predictions(20))
    a2 = _submit(client, alice, _predictions(10))
    _get(client, alice, f"/competitions/lad/compare?a={a1}&b={a2}", status=403)
    _get(client, host, f"/competitions/lad/compare?a={a1}&b={a2}")


def test_the_shakeup_opens_after_the_deadline(client, host, alice, bob, session_factory):
    _competition(client, host)
    _submit(client, alice, _predictions(20, 12))
    _submit(client, bob, _predictions(14, 18))
    _get(client, alice, "/competitions/lad/shakeup", status=403)
    early = _get(client, host, "/competitions/lad/shakeup")
    assert early["teams"] == 2
    close_now(session_factory)
    report = _get(client, alice, "/competitions/lad/shakeup")
    assert report["spearman"] == pytest.approx(-1.0)  # the two teams swap places
    assert report["mean_abs_rank_change"] == pytest.approx(0.5)
    assert report["gap"] == pytest.approx(np.mean([1.0 - 0.6, 0.7 - 0.9]))
    assert report["gap_low"] <= report["gap"] <= report["gap_high"]
    # Two teams swapping places is no evidence of overfitting: random re-splits do it as often.
    assert 0.05 < report["p_value"] <= 1, report
    assert report["adaptive_overfitting"] is False
    assert {r["team"]: (r["public_rank"], r["private_rank"]) for r in report["rows"]} == {
        "alice": (1, 2),
        "bob": (2, 1),
    }
    _get(client, alice, "/competitions/nope/shakeup", status=404)


def test_the_competition_page_shows_intervals_bands_and_the_ladder(client, host, alice):
    _competition(client, host)
    _competition(client, host, slug="lad2", public_board_mode="ladder", ladder_step=0.25)
    _submit(client, alice, _predictions(19))
    _submit(client, alice, _predictions(19), slug="lad2")
    exact = client.get("/c/lad/leaderboard").text
    assert "95 % interval" in exact and "Band:" in exact and "0.95" in exact
    ladder = client.get("/c/lad2/leaderboard").text
    assert "This public board is a Ladder" in ladder
    assert "0.95" not in ladder and '<td class="num">1.00000</td>' in ladder


def test_the_competition_page_shows_the_shakeup_after_the_deadline(
    client, host, alice, bob, session_factory
):
    _competition(client, host)
    _submit(client, alice, _predictions(20, 12))
    _submit(client, bob, _predictions(14, 18))
    assert "Shake-up" not in client.get("/c/lad/leaderboard").text
    close_now(session_factory)
    page = client.get("/c/lad/leaderboard").text
    assert "Shake-up" in page and "Spearman -1.000" in page
    shakeup = page.split('class="shakeup"')[1].split("</svg>")[0]
    assert shakeup.count("<circle") == 2 and "alice: 1 → 2" in page


def test_a_late_submission_never_moves_the_ladder(client, host, alice, session_factory):
    _competition(client, host, public_board_mode="ladder", ladder_step=0.25)
    _submit(client, alice, _predictions(12))
    close_now(session_factory)
    late = _submit(client, alice, _predictions(20))
    board = _get(client, alice, "/competitions/lad/leaderboard")
    assert [(r["team"], r["score"]) for r in board["rows"]] == [("alice", 0.5)]
    view = _get(client, alice, f"/submissions/{late}")
    assert view["late"] and view["public_score"] == 1.0  # the competition is over


def test_a_failing_interval_never_fails_the_score(
    client, host, alice, session_factory, monkeypatch
):
    from sqlalchemy import select

    from app.jobs import honest as jobs
    from app.models import ScoreStats

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(jobs, "_compute", broken)
    _competition(client, host)
    a = _submit(client, alice, _predictions(19))
    view = _get(client, alice, f"/submissions/{a}")
    assert view["status"] == "scored" and view["public_score"] == 0.95
    assert view["public_interval"] is None
    with session_factory() as session:
        notes = session.scalars(select(ScoreStats.note)).all()
    assert notes == ["intervals failed: RuntimeError"]


def test_a_metric_without_intervals_says_so(client, host, alice, session_factory):
    from sqlalchemy import select

    from app.models import ScoreStats

    create_competition(client, host.headers, "rank", metric={"name": "map_at_k"})
    key = csv_bytes(["id", "items"], ["a", "x y"], ["b", "z"])
    assert upload_key(client, host.headers, "rank", key).status_code == 201
    a = _submit(client, alice, csv_bytes(["id", "items"], ["a", "x"], ["b", "z"]), slug="rank")
    assert _get(client, alice, f"/submissions/{a}")["public_interval"] is None
    with session_factory() as session:
        assert session.scalars(select(ScoreStats.note)).all() == [
            "this metric has no bootstrap interval"
        ]


def test_the_kaggle_clients_responses_show_only_the_ladder(client, host, alice):
    _competition(client, host, public_board_mode="ladder", ladder_step=0.25)
    ids = [_submit(client, alice, _predictions(k)) for k in (12, 14)]  # 0.6 then 0.7
    service = f"{API}/competitions.CompetitionApiService"
    listed = client.post(
        f"{service}/ListSubmissions", json={"competitionName": "lad"}, headers=alice.headers
    )
    assert listed.status_code == 200, listed.text
    scores = {s["ref"]: s["publicScore"] for s in listed.json()["submissions"]}
    assert float(scores[ids[0]]) == 0.5 and float(scores[ids[1]]) == 0.5
    board = client.post(
        f"{service}/GetLeaderboard", json={"competitionName": "lad"}, headers=alice.headers
    )
    assert board.status_code == 200, board.text
    assert [float(s["score"]) for s in board.json()["submissions"]] == [0.5]


def test_a_lone_team_is_in_band_one(client, host, alice):
    _competition(client, host)
    _submit(client, alice, _predictions(19))
    assert [r["band"] for r in _get(client, alice, "/competitions/lad/leaderboard")["rows"]] == [1]


def test_one_teams_replay_reads_that_team_and_the_baselines_only(
    client, host, alice, bob, session_factory
):
    # The scorer replays the uploading team's Ladder after each submission: what it reads must
    # not grow with the rest of the board, and it must give the same ladder as the whole replay.
    from sqlalchemy import select

    from app.honest.board.ladder import replay
    from app.models import AnswerKey, Competition

    _competition(client, host, public_board_mode="ladder", ladder_step=0.1)
    _baseline(client, host, _predictions(11))
    for right in (12, 15, 19):
        _submit(client, alice, _predictions(right))
        _submit(client, bob, _predictions(right - 1))
    rows_read: list[int] = []

    class Counted:
        def __init__(self, rows):  # type: ignore[no-untyped-def]
            self.rows = rows

        def all(self):  # type: ignore[no-untyped-def]
            return self.rows

    with session_factory() as session:
        competition = session.scalar(select(Competition).where(Competition.slug == "lad"))
        key = session.scalar(select(AnswerKey).where(AnswerKey.competition_id == competition.id))
        whole = replay(session, competition=competition, key=key)
        [team_a] = [t for t, ladder in whole.items() if len(ladder.shown) == 3][:1]
        real = session.execute

        def counting(statement, *args, **kwargs):  # type: ignore[no-untyped-def]
            rows = real(statement, *args, **kwargs).all()
            rows_read.append(len(rows))
            return Counted(rows)

        session.execute = counting  # type: ignore[method-assign]
        one = replay(session, competition=competition, key=key, team_ids=[team_a])
    assert list(one) == [team_a]
    assert one[team_a].shown == whole[team_a].shown  # the same ladder, from the same baseline
    assert one[team_a].released == whole[team_a].released
    assert rows_read == [4]  # its three submissions and the baseline, not the other team's
