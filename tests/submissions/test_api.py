from datetime import UTC, datetime, timedelta

from tests.helpers import (
    API,
    PERFECT,
    PUBLIC_HALF,
    create_competition,
    csv_bytes,
    predictions,
    ready_competition,
    set_competition,
    submit,
)


def _view(client, caller, submission_id):
    response = client.get(f"{API}/submissions/{submission_id}", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_submission_is_accepted_queued_then_scored(client, host, alice):
    ready_competition(client, host.headers)
    response = submit(client, alice.headers, PUBLIC_HALF, description="first try")
    assert response.status_code == 202
    body = response.json()
    assert set(body) == {"id", "status", "receipt"} and body["status"] == "queued"
    view = _view(client, alice, body["id"])
    assert view["status"] == "scored"
    assert view["public_score"] == 0.5
    assert view["error"] is None
    assert view["description"] == "first try"
    assert "created_at" in view


def test_private_score_is_hidden_from_participants_before_the_deadline(client, host, alice):
    ready_competition(
        client, host.headers, deadline=(datetime.now(UTC) + timedelta(days=1)).isoformat()
    )
    submission_id = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    view = _view(client, alice, submission_id)
    assert "private_score" not in view and "host_error" not in view
    # The metric's details are the hosts'; ``details`` holds the entry details (none asked).
    assert "metric_details" not in view and view["details"] is None
    assert view["scores"] == {"roc_auc": {"public": 0.5, "private": None}}
    listed = client.get(f"{API}/competitions/churn/submissions", headers=alice.headers).json()
    assert listed and all("private_score" not in row for row in listed)


def test_organiser_sees_private_score_and_host_fields(client, host, alice):
    ready_competition(client, host.headers)
    submission_id = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    view = _view(client, host, submission_id)
    assert view["private_score"] == 1.0
    assert view["public_score"] == 0.5
    assert view["team"] == "alice" and view["user"] == "alice"
    assert "host_error" in view


def test_private_score_is_revealed_after_the_deadline(client, host, alice, session_factory):
    ready_competition(
        client, host.headers, deadline=(datetime.now(UTC) + timedelta(days=1)).isoformat()
    )
    submission_id = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    set_competition(session_factory, deadline=datetime.now(UTC) - timedelta(seconds=1))
    assert _view(client, alice, submission_id)["private_score"] == 1.0


def test_another_teams_submission_is_404(client, host, alice, bob):
    ready_competition(client, host.headers)
    submission_id = submit(client, alice.headers, PERFECT).json()["id"]
    assert client.get(f"{API}/submissions/{submission_id}", headers=bob.headers).status_code == 404
    listed = client.get(f"{API}/competitions/churn/submissions", headers=bob.headers).json()
    assert listed == []


def test_unknown_submission_is_404(client, alice):
    assert client.get(f"{API}/submissions/999999", headers=alice.headers).status_code == 404


def test_wrong_header_is_422_naming_the_columns(client, host, alice):
    ready_competition(client, host.headers)
    response = submit(client, alice.headers, csv_bytes(["id", "prediction"], ["a", 0.5]))
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "'target'" in detail and "'prediction'" in detail
    # Issue 9: a file refused at upload stays in the team's history with its reason, quota-free.
    listed = client.get(f"{API}/competitions/churn/submissions", headers=alice.headers).json()
    assert [(s["id"], s["status"], s["error"]) for s in listed] == [
        (response.json()["submission_id"], "failed", detail)
    ]
    quota = client.get(f"{API}/competitions/churn/quota", headers=alice.headers).json()
    assert quota["used_today"] == 0


def test_a_json_upload_is_422_saying_it_is_json_and_which_header_is_expected(client, host, alice):
    ready_competition(client, host.headers)
    response = submit(client, alice.headers, b'{"id": ["a", "b"], "target": [1, 0]}\n')
    assert response.status_code == 422
    body = response.json()
    assert body["kind"] == "not_csv"
    assert body["detail"].startswith("the file looks like JSON, not CSV")
    assert "header id, target" in body["detail"]


def test_empty_upload_is_422(client, host, alice):
    ready_competition(client, host.headers)
    response = submit(client, alice.headers, b"")
    assert response.status_code == 422
    assert "empty" in response.json()["detail"]


def test_missing_ids_fail_the_submission_with_a_reason(client, host, alice):
    ready_competition(client, host.headers)
    response = submit(client, alice.headers, predictions(a=0.1, b=0.2, c=0.3, d=0.4))
    assert response.status_code == 202
    view = _view(client, alice, response.json()["id"])
    assert view["status"] == "failed"
    assert (
        "2 id" in view["error"]
        and "missing" in view["error"]
        and "'e'" in view["error"]
        and "'f'" in view["error"]
    )
    assert view["public_score"] is None


def test_non_numeric_cells_fail_the_submission_naming_the_column(client, host, alice):
    ready_competition(client, host.headers)
    content = csv_bytes(
        ["id", "target"], ["a", 0.1], ["b", "high"], ["c", 0.3], ["d", 0.4], ["e", ""], ["f", 0.2]
    )
    view = _view(client, alice, submit(client, alice.headers, content).json()["id"])
    assert view["status"] == "failed"
    assert "'target'" in view["error"]


def test_unknown_ids_fail_the_submission_naming_them(client, host, alice):
    ready_competition(client, host.headers)
    content = predictions(a=0.9, b=0.1, c=0.8, d=0.2, e=0.7, f=0.3, zz=0.5)
    view = _view(client, alice, submit(client, alice.headers, content).json()["id"])
    assert (
        view["status"] == "failed"
        and "'zz'" in view["error"]
        and "not in the answer key" in view["error"]
    )


def test_submitting_before_any_answer_key_is_409(client, host, alice):
    create_competition(client, host.headers)
    assert submit(client, alice.headers, PERFECT).status_code == 409


def test_submitting_to_unknown_competition_is_404(client, alice):
    assert submit(client, alice.headers, PERFECT, slug="ghost").status_code == 404


def test_daily_limit_refuses_with_429_and_writes_nothing(client, host, alice):
    ready_competition(client, host.headers, daily_submission_limit=2)
    assert submit(client, alice.headers, PERFECT).status_code == 202
    assert submit(client, alice.headers, PUBLIC_HALF).status_code == 202
    refused = submit(client, alice.headers, PERFECT)
    assert refused.status_code == 429
    body = refused.json()
    # As the pages write times: "resets at 2026-12-02 00:00 UTC (in 3h 5m)"; the field is ISO.
    resets_at = datetime.fromisoformat(body["resets_at"])
    assert resets_at.utcoffset() == timedelta(0) and resets_at.strftime("%H:%M:%S") == "00:00:00"
    assert timedelta(0) < resets_at - datetime.now(UTC) <= timedelta(days=1)
    assert f"resets at {resets_at:%Y-%m-%d} 00:00 UTC (in " in body["detail"]
    assert "T00:00:00" not in body["detail"]
    listed = client.get(f"{API}/competitions/churn/submissions", headers=alice.headers).json()
    assert len(listed) == 2


def test_first_submission_makes_a_one_person_team_named_after_the_user(client, host, alice):
    ready_competition(client, host.headers)
    submission_id = submit(client, alice.headers, PERFECT).json()["id"]
    assert _view(client, host, submission_id)["team"] == "alice"


def test_server_keeps_serving_after_bad_uploads(client, host, alice):
    ready_competition(client, host.headers)
    for content in (b"\x00\x01\x02", b"id,target\n", b"\xff\xfe garbage", b"id\n" + b"a\n" * 3):
        assert submit(client, alice.headers, content).status_code in (202, 422)
    assert client.get("/healthz").json() == {"status": "ok"}
