"""A host reruns any finished submission (POST /submissions/{id}/rerun): a file is scored again
to the same score, audited, with nothing more charged; what is still in the queue, or was refused
at upload, has nothing to rerun; nobody but the competition's hosts may."""

from tests.helpers import API, PERFECT, PUBLIC_HALF, ready_competition, submit


def _view(client, caller, submission_id):  # type: ignore[no-untyped-def]
    response = client.get(f"{API}/submissions/{submission_id}", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_scored_file_is_scored_again_to_the_same_score(client, host, alice):
    ready_competition(client, host.headers)
    made = submit(client, alice.headers, PUBLIC_HALF).json()["id"]
    first = _view(client, host, made)
    assert first["status"] == "scored"
    quota = client.get(f"{API}/competitions/churn/quota", headers=alice.headers).json()
    response = client.post(f"{API}/submissions/{made}/rerun", headers=host.headers)
    assert response.status_code == 200, response.text
    again = _view(client, host, made)
    for field in ("status", "public_score", "private_score", "scores", "public_interval"):
        assert again[field] == first[field], field
    versions = client.get(f"{API}/submissions/{made}/scores", headers=host.headers).json()
    assert len(versions) == 1  # the rerun's score replaced the first one
    assert client.get(f"{API}/competitions/churn/quota", headers=alice.headers).json() == quota
    board = client.get(f"{API}/competitions/churn/leaderboard", headers=alice.headers).json()
    assert [row["score"] for row in board["rows"]] == [first["public_score"]]
    audit = client.get(f"{API}/competitions/churn/audit", headers=host.headers).json()
    entries = [e for e in audit if e["action"] == "submission_rerun"]
    assert entries and entries[0]["before"]["public_score"] == first["public_score"]


def test_a_submission_refused_at_upload_has_nothing_to_rerun(client, host, alice):
    ready_competition(client, host.headers)
    refused = submit(client, alice.headers, b"id,wrong\na,1\n")
    assert refused.status_code == 422
    submission_id = refused.json()["submission_id"]
    response = client.post(f"{API}/submissions/{submission_id}/rerun", headers=host.headers)
    assert response.status_code == 409 and "was refused at upload" in response.json()["detail"]


def test_only_the_competitions_hosts_may_rerun(client, host, alice, bob, make_user):
    ready_competition(client, host.headers)
    made = submit(client, alice.headers, PERFECT).json()["id"]
    other_host = make_user("other-host", organiser=True)
    ready_competition(client, other_host.headers, slug="theirs")
    rerun = f"{API}/submissions/{made}/rerun"
    assert client.post(rerun, headers=alice.headers).status_code == 403  # its own team
    assert client.post(rerun, headers=bob.headers).status_code == 404
    assert client.post(rerun, headers=other_host.headers).status_code == 404
    assert client.post(rerun).status_code == 401
    assert _view(client, alice, made)["status"] == "scored"
