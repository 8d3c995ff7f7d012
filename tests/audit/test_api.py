"""Every organiser action leaves an audit entry: who, when, what, before and after."""

from datetime import UTC, datetime, timedelta

from tests.helpers import API, create_competition, ready_competition


def _audit(client, caller):
    response = client.get(f"{API}/competitions/churn/audit", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_settings_changes_are_audited_with_before_and_after(client, host):
    create_competition(client, host.headers, daily_submission_limit=5)
    deadline = datetime.now(UTC) + timedelta(days=3)
    response = client.patch(
        f"{API}/competitions/churn",
        json={"daily_submission_limit": 3, "deadline": deadline.isoformat()},
        headers=host.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["daily_submission_limit"] == 3
    entry = _audit(client, host)[-1]
    assert entry["action"] == "settings_change" and entry["actor"] == "host"
    assert entry["before"] == {"daily_submission_limit": 5, "deadline": None}
    assert entry["after"]["daily_submission_limit"] == 3
    assert datetime.fromisoformat(entry["after"]["deadline"]) == deadline
    assert datetime.fromisoformat(entry["created_at"]) <= datetime.now(UTC)


def test_answer_key_uploads_are_audited(client, host):
    ready_competition(client, host.headers)
    entry = _audit(client, host)[-1]
    assert entry["action"] == "answer_key_upload" and entry["target"] == "version 1"
    assert entry["after"]["published"] is True and entry["after"]["rows"] == 6


def test_settings_that_break_the_timeline_are_422(client, host):
    create_competition(client, host.headers)
    past = (datetime.now(UTC) - timedelta(days=400)).isoformat()
    response = client.patch(
        f"{API}/competitions/churn", json={"deadline": past}, headers=host.headers
    )
    assert response.status_code == 422 and "deadline" in response.json()["detail"]
    cleared = client.patch(
        f"{API}/competitions/churn", json={"daily_submission_limit": None}, headers=host.headers
    )
    assert cleared.status_code == 422


def test_participants_cannot_read_the_audit_log_or_change_settings(client, host, alice):
    create_competition(client, host.headers)
    assert client.get(f"{API}/competitions/churn/audit", headers=alice.headers).status_code == 403
    response = client.patch(
        f"{API}/competitions/churn", json={"title": "Mine"}, headers=alice.headers
    )
    assert response.status_code == 403


def test_moving_the_deadline_moves_what_counts_as_late(client, host, alice, bob, session_factory):

    from tests.helpers import PERFECT, PUBLIC_HALF, close_now, submit, upload_key

    create_competition(
        client, host.headers, deadline=(datetime.now(UTC) + timedelta(days=3)).isoformat()
    )
    upload_key(client, host.headers)
    submit(client, bob.headers, PUBLIC_HALF)
    close_now(session_factory)  # the competition closes...
    submit(client, alice.headers, PERFECT)  # ...so this one is late

    def board():
        return [
            r["team"]
            for r in client.get(
                f"{API}/competitions/churn/leaderboard", headers=host.headers
            ).json()["rows"]
        ]

    assert board() == ["bob"]
    extended = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert (
        client.patch(
            f"{API}/competitions/churn", json={"deadline": extended}, headers=host.headers
        ).status_code
        == 200
    )
    assert board() == ["alice", "bob"]
