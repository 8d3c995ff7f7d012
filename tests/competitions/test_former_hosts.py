"""Once a host, never a competitor: a co-host read the private board and every team's files, so
removing them ends their powers but never lets them join, merge into a team or make ranked
submissions in that competition. Elsewhere they compete as anyone does."""

from tests.helpers import API, PERFECT, ready_competition, submit

HOSTS = f"{API}/competitions/churn/hosts"


def _removed_cohost(client, host, name: str = "carl") -> None:  # type: ignore[no-untyped-def]
    assert client.post(HOSTS, json={"user": name}, headers=host.headers).status_code == 201
    assert client.delete(f"{HOSTS}/{name}", headers=host.headers).status_code == 204


def _former_host(response) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["code"] == "former_host" and "host" in body["detail"]


def test_a_removed_cohost_cannot_join_or_submit_ranked_entries(client, make_user):
    host = make_user("host", organiser=True)
    carl = make_user("carl")
    ready_competition(client, host.headers)
    _removed_cohost(client, host)

    _former_host(client.post(f"{API}/competitions/churn/join", headers=carl.headers))
    _former_host(submit(client, carl.headers, PERFECT))
    # Nor an unranked baseline: that is for the hosts of today.
    baseline = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("s.csv", PERFECT, "text/csv")},
        data={"baseline": "true"},
        headers=carl.headers,
    )
    assert baseline.status_code == 403
    assert client.get(f"{API}/competitions/churn/team", headers=carl.headers).status_code == 404
    rows = client.get(f"{API}/competitions/churn/leaderboard", headers=host.headers).json()["rows"]
    assert rows == []


def test_a_removed_cohost_cannot_accept_an_invitation_sent_before(client, make_user):
    host = make_user("host", organiser=True)
    bea = make_user("bea")
    carl = make_user("carl")
    ready_competition(client, host.headers)
    assert client.post(f"{API}/competitions/churn/join", headers=bea.headers).status_code == 201
    invitation = client.post(
        f"{API}/competitions/churn/team/invitations", json={"user": "carl"}, headers=bea.headers
    )
    assert invitation.status_code == 201, invitation.text
    _removed_cohost(client, host)

    _former_host(client.post(f"{API}/invitations/{invitation.json()['id']}/accept", **_h(carl)))
    team = client.get(f"{API}/competitions/churn/team", headers=bea.headers).json()
    assert team["members"] == ["bea"]
    # And no new invitation reaches them.
    again = client.post(
        f"{API}/competitions/churn/team/invitations", json={"user": "carl"}, headers=bea.headers
    )
    assert again.status_code == 409 and "hosted" in again.json()["detail"]


def test_a_removed_cohost_who_had_a_one_person_team_cannot_use_it(client, make_user):
    # Joining without submitting does not stop someone becoming a co-host; the team stays.
    host = make_user("host", organiser=True)
    carl = make_user("carl")
    ready_competition(client, host.headers)
    assert client.post(f"{API}/competitions/churn/join", headers=carl.headers).status_code == 201
    _removed_cohost(client, host)
    _former_host(submit(client, carl.headers, PERFECT))
    _former_host(client.post(f"{API}/competitions/churn/join", headers=carl.headers))


def test_no_one_merges_into_the_team_a_removed_cohost_kept(client, make_user):
    host = make_user("host", organiser=True)
    carl = make_user("carl")
    dan = make_user("dan")
    ready_competition(client, host.headers)
    assert client.post(f"{API}/competitions/churn/join", headers=carl.headers).status_code == 201
    invitation = client.post(
        f"{API}/competitions/churn/team/invitations", json={"user": "dan"}, headers=carl.headers
    )
    assert invitation.status_code == 201, invitation.text
    _removed_cohost(client, host)
    _former_host(client.post(f"{API}/invitations/{invitation.json()['id']}/accept", **_h(dan)))
    team = client.get(f"{API}/competitions/churn/team", headers=carl.headers)
    assert team.status_code == 200 and team.json()["members"] == ["carl"]


def test_a_removed_cohost_competes_elsewhere(client, make_user):
    host = make_user("host", organiser=True)
    carl = make_user("carl")
    ready_competition(client, host.headers)
    ready_competition(client, host.headers, slug="other")
    _removed_cohost(client, host)
    assert client.post(f"{API}/competitions/other/join", headers=carl.headers).status_code == 201
    assert submit(client, carl.headers, PERFECT, slug="other").status_code == 202


def test_the_kaggle_client_refuses_a_removed_cohost_too(client, make_user):
    from tests.kaggle.test_api import basic, call, start_upload

    host = make_user("host", organiser=True)
    carl = make_user("carl")
    ready_competition(client, host.headers)
    _removed_cohost(client, host)
    started = start_upload(client, carl)
    assert client.put(started["createUrl"], content=PERFECT).status_code == 200
    body = {"competitionName": "churn", "blobFileTokens": started["token"]}
    made = call(client, "CreateSubmission", body, basic("carl", carl.token))
    assert made.status_code == 403 and "former host" in made.json()["message"], made.text
    rows = client.get(f"{API}/competitions/churn/leaderboard", headers=host.headers).json()["rows"]
    assert rows == []


def test_someone_who_competes_still_cannot_become_a_cohost(client, make_user):
    host = make_user("host", organiser=True)
    bea = make_user("bea")
    ready_competition(client, host.headers)
    assert submit(client, bea.headers, PERFECT).status_code == 202
    refused = client.post(HOSTS, json={"user": "bea"}, headers=host.headers)
    assert refused.status_code == 409 and "competes" in refused.json()["detail"]


def _h(caller):  # type: ignore[no-untyped-def]
    return {"headers": caller.headers}
