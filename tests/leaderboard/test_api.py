from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from app.models import Submission
from tests.helpers import (
    API,
    PERFECT,
    PRIVATE_WRONG,
    PUBLIC_HALF,
    close_now,
    create_competition,
    csv_bytes,
    predictions,
    ready_competition,
    submit,
    upload_key,
)

FUTURE = (datetime.now(UTC) + timedelta(days=7)).isoformat()


def _board(client, caller, board="public", slug="churn"):
    response = client.get(
        f"{API}/competitions/{slug}/leaderboard?board={board}", headers=caller.headers
    )
    assert response.status_code == 200, response.text
    return response.json()


def _select(session_factory, submission_id):
    with session_factory() as session:
        session.execute(
            update(Submission).where(Submission.id == submission_id).values(selected=True)
        )
        session.commit()


def test_public_board_ranks_each_teams_best_public_score(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PUBLIC_HALF)
    submit(client, alice.headers, PRIVATE_WRONG)  # public 1.0
    submit(client, bob.headers, PUBLIC_HALF)
    board = _board(client, alice)
    assert board["board"] == "public" and board["metric"] == "roc_auc"
    rows = board["rows"]
    assert [(r["rank"], r["team"], r["score"], r["entries"]) for r in rows] == [
        (1, "alice", 1.0, 2),
        (2, "bob", 0.5, 1),
    ]
    assert "came first" in board["tie_break"]


def test_lower_is_better_metrics_rank_ascending(client, host, alice, bob):
    create_competition(client, host.headers, "reg", metric={"name": "rmse"})
    upload_key(client, host.headers, "reg", csv_bytes(["id", "y"], ["a", 1.0], ["b", 2.0]))
    submit(client, alice.headers, csv_bytes(["id", "y"], ["a", 3.0], ["b", 2.0]), slug="reg")
    submit(client, bob.headers, csv_bytes(["id", "y"], ["a", 1.5], ["b", 2.0]), slug="reg")
    rows = _board(client, alice, slug="reg")["rows"]
    assert [r["team"] for r in rows] == ["bob", "alice"]
    assert rows[0]["score"] < rows[1]["score"]


def test_ties_go_to_the_earlier_submission(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, bob.headers, PERFECT)
    submit(client, alice.headers, PERFECT)
    assert [r["team"] for r in _board(client, alice)["rows"]] == ["bob", "alice"]
    assert [r["team"] for r in _board(client, host, "private")["rows"]] == ["bob", "alice"]


def test_a_later_equal_score_does_not_replace_the_teams_earlier_entry(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)
    submit(client, bob.headers, PERFECT)
    submit(client, alice.headers, PERFECT)  # equal, later: alice keeps her earlier, winning time
    assert [r["team"] for r in _board(client, bob)["rows"]] == ["alice", "bob"]


def test_private_board_is_403_for_participants_before_the_deadline(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE)
    response = client.get(
        f"{API}/competitions/churn/leaderboard?board=private", headers=alice.headers
    )
    assert response.status_code == 403


def test_private_board_without_a_deadline_stays_hidden_from_participants(client, host, alice):
    ready_competition(client, host.headers)
    response = client.get(
        f"{API}/competitions/churn/leaderboard?board=private", headers=alice.headers
    )
    assert response.status_code == 403


def test_organisers_always_see_the_private_board(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, alice.headers, PUBLIC_HALF)
    rows = _board(client, host, "private")["rows"]
    assert rows == [rows[0]] and rows[0]["score"] == 1.0


def test_private_board_opens_to_participants_after_the_deadline(
    client, host, alice, session_factory
):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, alice.headers, PUBLIC_HALF)
    close_now(session_factory)
    assert _board(client, alice, "private")["rows"][0]["score"] == 1.0


def test_private_board_with_none_selected_uses_the_best_public_submission_when_limit_is_one(
    client, host, alice
):
    ready_competition(client, host.headers, deadline=FUTURE, final_selection_limit=1)
    submit(client, alice.headers, PUBLIC_HALF)  # public 0.5, private 1.0
    submit(client, alice.headers, PRIVATE_WRONG)  # public 1.0, private 0.0
    rows = _board(client, host, "private")["rows"]
    assert rows[0]["score"] == 0.0  # only the best public one counts, not the best private


def test_private_board_with_none_selected_takes_best_private_among_best_public_ones(
    client, host, alice
):
    # Kaggle's rule: the team's best final_selection_limit (2) public submissions count, and the
    # best private score among them ranks.
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, alice.headers, PUBLIC_HALF)  # public 0.5, private 1.0
    submit(client, alice.headers, PRIVATE_WRONG)  # public 1.0, private 0.0
    rows = _board(client, host, "private")["rows"]
    assert rows[0]["score"] == 1.0


def test_automatic_selection_ignores_submissions_outside_the_best_public_ones(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, alice.headers, PUBLIC_HALF)  # public 0.5, private 1.0: third by public
    submit(client, alice.headers, PRIVATE_WRONG)  # public 1.0, private 0.0
    submit(client, alice.headers, predictions(a=0.9, b=0.1, c=0.8, d=0.9, e=0.7, f=0.1))
    rows = _board(client, host, "private")["rows"]  # third: public 1.0, private 0.5
    assert rows[0]["score"] == 0.5


def test_private_board_uses_best_private_among_selected(client, host, alice, session_factory):
    ready_competition(client, host.headers, deadline=FUTURE)
    first = submit(client, alice.headers, PUBLIC_HALF).json()["id"]  # private 1.0
    second = submit(client, alice.headers, PRIVATE_WRONG).json()["id"]  # private 0.0
    third = submit(
        client, alice.headers, predictions(a=0.9, b=0.1, c=0.8, d=0.2, e=0.7, f=0.9)
    ).json()["id"]
    _select(session_factory, second)
    _select(session_factory, third)
    rows = _board(client, host, "private")["rows"]
    assert rows[0]["score"] == 0.5  # best of the selected (0.0, 0.5), not the unselected 1.0
    assert first != second


def test_failed_submissions_count_as_entries_but_never_rank(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, alice.headers, predictions(a=0.1))  # fails: missing ids
    submit(client, bob.headers, PERFECT)
    rows = _board(client, alice)["rows"]
    assert [r["team"] for r in rows] == ["bob"]


def test_late_submissions_are_not_ranked(client, host, alice, bob, session_factory):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, bob.headers, PUBLIC_HALF)
    close_now(session_factory)
    submit(client, alice.headers, PERFECT)
    assert [r["team"] for r in _board(client, alice)["rows"]] == ["bob"]


def test_unknown_board_name_is_422(client, host, alice):
    ready_competition(client, host.headers)
    response = client.get(
        f"{API}/competitions/churn/leaderboard?board=secret", headers=alice.headers
    )
    assert response.status_code == 422


def test_board_before_any_key_is_empty(client, host, alice):
    create_competition(client, host.headers)
    assert _board(client, alice)["rows"] == []
