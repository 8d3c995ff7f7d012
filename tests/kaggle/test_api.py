"""The kaggle client's endpoints at the HTTP level: auth, error shapes, signed links."""

import base64
import os

from sqlalchemy import select

from app.models import Submission
from tests.helpers import API, PERFECT, create_competition, ready_competition

SERVICE = f"{API}/competitions.CompetitionApiService"


def basic(name: str, token: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{token}".encode()).decode()}


def call(client, method, body, headers):  # type: ignore[no-untyped-def]
    return client.post(f"{SERVICE}/{method}", json=body, headers=headers, follow_redirects=False)


def start_upload(client, who, slug="churn", size=len(PERFECT)):  # type: ignore[no-untyped-def]
    body = {"competitionName": slug, "contentLength": size, "fileName": "p.csv"}
    response = call(client, "StartSubmissionUpload", body, basic(who.name, who.token))
    assert response.status_code == 200, response.text
    return response.json()


def test_bad_credentials_are_401_in_the_clients_shape(client, alice):
    for headers in (
        {},
        basic("alice", "pdm_wrong"),
        basic("bob", alice.token),  # a real key under another name
        {"Authorization": "Basic !!!not-base64"},
        {"Authorization": "Basic " + base64.b64encode(b"no-colon").decode()},
    ):
        response = call(client, "ListCompetitions", {}, headers)
        assert response.status_code == 401, headers
        assert response.json()["code"] == 401 and response.json()["message"]


def test_unknown_methods_and_malformed_bodies_are_named(client, alice):
    response = call(client, "DeleteEverything", {}, basic("alice", alice.token))
    assert response.status_code == 404
    assert "DeleteEverything" in response.json()["message"]
    bad = client.post(
        f"{SERVICE}/ListDataFiles", content=b"{not json", headers=basic("alice", alice.token)
    )
    assert bad.status_code == 400 and bad.json()["code"] == 400
    missing = call(client, "ListDataFiles", {}, basic("alice", alice.token))
    assert missing.status_code == 400 and "competitionName" in missing.json()["message"]


def test_a_bearer_token_works_too(client, alice, host):
    create_competition(client, host.headers)
    response = call(client, "ListCompetitions", {"search": "chu"}, alice.headers)
    assert [c["ref"] for c in response.json()["competitions"]] == ["churn"]


def test_pages_come_with_a_next_token(client, alice, host):
    for i in range(5):
        create_competition(client, host.headers, f"comp-{i}")
    first = call(client, "ListCompetitions", {"pageSize": 2}, alice.headers).json()
    assert len(first["competitions"]) == 2 and first["nextPageToken"] == "2"
    rest = call(
        client, "ListCompetitions", {"pageSize": 10, "pageToken": "2"}, alice.headers
    ).json()
    assert len(rest["competitions"]) == 3
    assert rest.get("nextPageToken", "") == ""  # the last page: no token (absent or empty)
    refs = [c["ref"] for c in first["competitions"] + rest["competitions"]]
    assert sorted(refs) == [f"comp-{i}" for i in range(5)]


def test_download_links_are_signed_and_tamper_proof(client, alice, host):
    create_competition(client, host.headers)
    client.put(
        f"{API}/competitions/churn/files/train.csv", content=b"id,x\n1,2\n", headers=host.headers
    )
    response = call(
        client,
        "DownloadDataFile",
        {"competitionName": "churn", "fileName": "train.csv"},
        alice.headers,
    )
    assert response.status_code == 302
    link = response.headers["location"]
    assert link.endswith("/train.csv")
    assert client.get(link).content == b"id,x\n1,2\n"  # no credentials needed: the link is the key
    token = link.split("/")[-2]
    forged = link.replace(token, token[:-2] + ("AA" if not token.endswith("AA") else "BB"))
    assert client.get(forged).status_code == 404


def test_an_upload_token_is_one_users_and_is_used_once(client, alice, bob, host, session_factory):
    ready_competition(client, host.headers)
    started = start_upload(client, alice)
    put = client.put(started["createUrl"], content=PERFECT)
    assert put.status_code == 200
    body = {
        "competitionName": "churn",
        "blobFileTokens": started["token"],
        "submissionDescription": "d",
    }
    stolen = call(client, "CreateSubmission", body, basic("bob", bob.token))
    assert stolen.status_code == 404
    made = call(client, "CreateSubmission", body, basic("alice", alice.token))
    assert made.status_code == 200, made.text
    assert made.json()["message"] == "Successfully submitted to Churn"
    again = call(client, "CreateSubmission", body, basic("alice", alice.token))
    assert again.status_code == 404
    with session_factory() as session:
        assert len(session.scalars(select(Submission)).all()) == 1


def test_an_oversized_upload_is_refused_before_any_byte(client, alice, host, settings):
    ready_competition(client, host.headers)
    body = {"competitionName": "churn", "contentLength": settings.max_upload_bytes + 1}
    response = call(client, "StartSubmissionUpload", body, alice.headers)
    assert response.status_code == 413 and response.json()["code"] == 413


def test_data_is_closed_before_the_start_for_the_client_too(client, alice, host):
    create_competition(
        client, host.headers, start="2999-01-01T00:00:00Z", deadline="2999-02-01T00:00:00Z"
    )
    response = call(client, "ListDataFiles", {"competitionName": "churn"}, alice.headers)
    assert response.status_code == 403
    assert "opens" in response.json()["message"]


def test_submission_limits_follow_the_quota(client, alice, host):
    ready_competition(client, host.headers, daily_submission_limit=2, total_submission_limit=3)
    before = call(client, "GetSubmissionLimits", {"competitionName": "churn"}, alice.headers).json()
    assert before == {"numToday": 0, "numTotal": 0, "numAllowedNow": 2, "limitedByTotal": False}


def test_uploads_never_submitted_cannot_pile_up(client, alice, host, settings):
    ready_competition(client, host.headers)
    for _ in range(3):
        started = start_upload(client, alice)
        assert client.put(started["createUrl"], content=PERFECT).status_code == 200
    body = {"competitionName": "churn", "contentLength": len(PERFECT)}
    refused = call(client, "StartSubmissionUpload", body, alice.headers)
    assert refused.status_code == 429 and "never submitted" in refused.json()["message"]
    staged = settings.data_dir / "blobs" / "kaggle-uploads"
    (old,) = [p for p in staged.rglob("*") if p.is_file()][:1]
    os.utime(old, (0, 0))  # one of them has expired: it is cleared to make room
    assert call(client, "StartSubmissionUpload", body, alice.headers).status_code == 200
    assert not old.exists()
