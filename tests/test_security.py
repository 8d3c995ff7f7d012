"""What a participant must never reach: the answer key, other teams' work, private scores early,
the audit log, other teams' quotas; and nobody acts for a team they are not on."""

import json
from datetime import UTC, datetime, timedelta

from tests.helpers import API, KEY, PERFECT, PUBLIC_HALF, ready_competition, submit

FUTURE = (datetime.now(UTC) + timedelta(days=7)).isoformat()


def _everything_a_participant_can_read(client, caller, submission_id):
    paths = [
        f"{API}/competitions",
        f"{API}/competitions/churn",
        f"{API}/competitions/churn/leaderboard",
        f"{API}/competitions/churn/submissions",
        f"{API}/competitions/churn/quota",
        f"{API}/submissions/{submission_id}",
        f"{API}/competitions/churn/sample-submission",
    ]
    return {path: client.get(path, headers=caller.headers) for path in paths}


def test_no_participant_response_contains_the_answer_key(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE)
    submission_id = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    key_labels = ",".join(line.split(",")[1] for line in KEY.decode().splitlines()[1:])
    for path, response in _everything_a_participant_can_read(client, alice, submission_id).items():
        assert response.status_code == 200, path
        body = response.text
        assert "answer-keys" not in body and ".upload" not in body, path
        assert "Usage" not in body and key_labels not in body.replace("\n", ","), path
    assert (
        client.get(
            f"{API}/competitions/churn/answer-key/versions", headers=alice.headers
        ).status_code
        == 403
    )


def test_participants_cannot_see_other_teams_submissions_or_files(client, host, alice, bob):
    ready_competition(client, host.headers)
    theirs = submit(client, alice.headers, PERFECT).json()["id"]
    assert client.get(f"{API}/submissions/{theirs}", headers=bob.headers).status_code == 404
    assert client.get(f"{API}/submissions/{theirs}/file", headers=bob.headers).status_code == 404
    # Host-only, and another team's: answered as a missing one, so ids cannot be walked.
    assert client.get(f"{API}/submissions/{theirs}/scores", headers=bob.headers).status_code == 404
    assert client.get(f"{API}/competitions/churn/submissions", headers=bob.headers).json() == []
    own = client.get(f"{API}/submissions/{theirs}/file", headers=alice.headers)
    assert own.status_code == 200 and own.content == PERFECT


def test_private_scores_stay_hidden_from_participants_before_the_deadline(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE)
    submission_id = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    for path, response in _everything_a_participant_can_read(client, alice, submission_id).items():
        if response.headers["content-type"].startswith("application/json"):
            assert "private_score" not in json.dumps(response.json()), path
    private = client.get(
        f"{API}/competitions/churn/leaderboard?board=private", headers=alice.headers
    )
    assert private.status_code == 403


def test_participants_cannot_read_the_audit_log(client, host, alice):
    ready_competition(client, host.headers)
    assert client.get(f"{API}/competitions/churn/audit", headers=alice.headers).status_code == 403


def test_the_quota_endpoint_shows_only_the_callers_own_team(client, host, alice, bob):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)
    submit(client, alice.headers, PERFECT)
    assert (
        client.get(f"{API}/competitions/churn/quota", headers=bob.headers).json()["used_today"] == 0
    )
    # There is no way to name another team: unknown parameters are ignored, not obeyed.
    other = client.get(f"{API}/competitions/churn/quota?team=alice", headers=bob.headers).json()
    assert other["used_today"] == 0


def test_participants_cannot_select_another_teams_submission(client, host, alice, bob):
    ready_competition(client, host.headers, deadline=FUTURE)
    theirs = submit(client, alice.headers, PERFECT).json()["id"]
    assert client.post(f"{API}/submissions/{theirs}/select", headers=bob.headers).status_code == 404
    assert (
        client.delete(f"{API}/submissions/{theirs}/select", headers=bob.headers).status_code == 404
    )


def test_organisers_cannot_select_for_a_team(client, host, alice):
    ready_competition(client, host.headers, deadline=FUTURE)
    theirs = submit(client, alice.headers, PERFECT).json()["id"]
    assert (
        client.post(f"{API}/submissions/{theirs}/select", headers=host.headers).status_code == 403
    )


def test_a_submission_always_counts_for_the_callers_own_team(client, host, alice, bob):
    ready_competition(client, host.headers)
    response = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("s.csv", PERFECT, "text/csv")},
        data={"team": "alice", "team_id": "1"},
        headers=bob.headers,
    )
    assert response.status_code == 202
    view = client.get(f"{API}/submissions/{response.json()['id']}", headers=host.headers).json()
    assert view["team"] == "bob"
    assert client.get(f"{API}/competitions/churn/submissions", headers=alice.headers).json() == []


def test_tokens_are_stored_hashed(client, host, session_factory):
    from sqlalchemy import select

    from app.models import ApiToken

    with session_factory() as session:
        stored = session.scalars(select(ApiToken.token_hash)).all()
    assert host.token not in stored and all(len(h) == 64 for h in stored)
