"""The rules competitors live by: timeline, quotas, refunds and final selections."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from app.models import Submission
from tests.helpers import (
    API,
    PERFECT,
    PUBLIC_HALF,
    close_now,
    predictions,
    ready_competition,
    submit,
)

FUTURE = (datetime.now(UTC) + timedelta(days=7)).isoformat()


def _quota(client, caller, slug="churn"):
    response = client.get(f"{API}/competitions/{slug}/quota", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_submissions_before_start_are_refused_with_the_time(client, host, alice):
    start = datetime.now(UTC) + timedelta(days=1)
    ready_competition(
        client,
        host.headers,
        start=start.isoformat(),
        deadline=(start + timedelta(days=9)).isoformat(),
    )
    response = submit(client, alice.headers, PERFECT)
    # Before the first phase opens (issue 21): 409 phase_closed, naming the phase and its start.
    assert response.status_code == 409
    assert response.json()["code"] == "phase_closed"
    assert response.json()["next_phase"] == "main"
    assert start.isoformat()[:16] in response.json()["detail"]


def test_late_submissions_are_scored_and_shown_to_their_team_but_never_ranked(
    client, host, alice, bob, session_factory
):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, bob.headers, PUBLIC_HALF)
    close_now(session_factory)
    late = submit(client, alice.headers, PERFECT)
    assert late.status_code == 202
    view = client.get(f"{API}/submissions/{late.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["late"] is True
    assert view["public_score"] == 1.0 and view["private_score"] == 1.0
    for board in ("public", "private"):
        rows = client.get(
            f"{API}/competitions/churn/leaderboard?board={board}", headers=alice.headers
        ).json()["rows"]
        assert [r["team"] for r in rows] == ["bob"]


def test_quota_reports_daily_and_lifetime_use(client, host, alice):
    ready_competition(client, host.headers, daily_submission_limit=3, total_submission_limit=10)
    fresh = _quota(client, alice)
    assert fresh["used_today"] == 0 and fresh["remaining_today"] == 3 and fresh["daily_limit"] == 3
    assert fresh["total_limit"] == 10 and fresh["used_total"] == 0
    resets = datetime.fromisoformat(fresh["resets_at"])
    assert resets.tzinfo is not None and (resets.hour, resets.minute) == (0, 0)
    assert timedelta(0) < resets - datetime.now(UTC) <= timedelta(days=1)
    submit(client, alice.headers, PERFECT)
    # Issue 9: a file at fault never counts, wherever it is found (this one while scored).
    bad = submit(client, alice.headers, predictions(a=0.1))
    view = client.get(f"{API}/submissions/{bad.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "failed" and "missing" in view["error"]
    used = _quota(client, alice)
    assert used["used_today"] == 1 and used["remaining_today"] == 2 and used["used_total"] == 1


def test_lifetime_limit_refuses_once_reached(client, host, alice):
    ready_competition(client, host.headers, daily_submission_limit=10, total_submission_limit=2)
    assert submit(client, alice.headers, PERFECT).status_code == 202
    assert submit(client, alice.headers, PERFECT).status_code == 202
    refused = submit(client, alice.headers, PERFECT)
    assert refused.status_code == 429 and "all 2 submissions" in refused.json()["detail"]
    assert _quota(client, alice)["remaining_today"] == 0


def test_failures_on_our_side_are_refunded(client, host, alice, monkeypatch):
    ready_competition(client, host.headers, daily_submission_limit=1)

    def explode(*_args, **_kwargs):
        raise RuntimeError("worker fell over")

    monkeypatch.setattr("app.jobs.score.score_columns_file", explode)
    failed = submit(client, alice.headers, PERFECT).json()["id"]
    assert (
        client.get(f"{API}/submissions/{failed}", headers=alice.headers).json()["status"]
        == "failed"
    )
    assert _quota(client, alice)["used_today"] == 0
    monkeypatch.undo()
    assert submit(client, alice.headers, PERFECT).status_code == 202
    assert submit(client, alice.headers, PERFECT).status_code == 429


def test_a_team_selects_up_to_its_limit_and_can_unselect(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE, final_selection_limit=2)
    ids = [submit(client, alice.headers, PERFECT).json()["id"] for _ in range(3)]
    for i in ids[:2]:
        response = client.post(f"{API}/submissions/{i}/select", headers=alice.headers)
        assert response.status_code == 200 and response.json()["selected"] is True
    third = client.post(f"{API}/submissions/{ids[2]}/select", headers=alice.headers)
    assert third.status_code == 409 and "limit" in third.json()["detail"]
    assert (
        client.delete(f"{API}/submissions/{ids[0]}/select", headers=alice.headers).json()[
            "selected"
        ]
        is False
    )
    assert (
        client.post(f"{API}/submissions/{ids[2]}/select", headers=alice.headers).status_code == 200
    )


def test_selection_changes_the_private_board(client, host, alice):
    # With a limit of one, the automatic choice is the best public submission alone.
    ready_competition(client, host.headers, deadline=FUTURE, final_selection_limit=1)
    first = submit(client, alice.headers, PUBLIC_HALF).json()["id"]  # public 0.5, private 1.0
    submit(
        client, alice.headers, predictions(a=0.9, b=0.1, c=0.8, d=0.9, e=0.1, f=0.8)
    )  # public 1, private 0

    def private():
        return client.get(
            f"{API}/competitions/churn/leaderboard?board=private", headers=host.headers
        ).json()["rows"][0]["score"]  # noqa: E731

    assert private() == 0.0
    client.post(f"{API}/submissions/{first}/select", headers=alice.headers)
    assert private() == 1.0


def test_only_scored_submissions_can_be_selected(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE)
    failed = submit(client, alice.headers, predictions(a=0.1)).json()["id"]
    response = client.post(f"{API}/submissions/{failed}/select", headers=alice.headers)
    assert response.status_code == 409 and "scored" in response.json()["detail"]


def test_selections_close_at_the_deadline(client, host, alice, session_factory):
    ready_competition(client, host.headers, deadline=FUTURE)
    submission_id = submit(client, alice.headers, PERFECT).json()["id"]
    close_now(session_factory)
    assert (
        client.post(f"{API}/submissions/{submission_id}/select", headers=alice.headers).status_code
        == 403
    )


def test_late_submissions_cannot_be_selected(client, host, alice, session_factory):
    ready_competition(client, host.headers, deadline=FUTURE)
    submission_id = submit(client, alice.headers, PERFECT).json()["id"]
    with session_factory() as session:
        session.execute(update(Submission).where(Submission.id == submission_id).values(late=True))
        session.commit()
    response = client.post(f"{API}/submissions/{submission_id}/select", headers=alice.headers)
    assert response.status_code == 409 and "late" in response.json()["detail"]
