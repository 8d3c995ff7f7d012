"""The team and submission pages refuse a removed co-host as the API does: once a host of a
competition, never a competitor in it."""

import re

from tests.helpers import API, PERFECT, ready_competition

HOSTS = f"{API}/competitions/churn/hosts"


def _removed_cohost(client, host, name: str = "carl") -> None:  # type: ignore[no-untyped-def]
    assert client.post(HOSTS, json={"user": name}, headers=host.headers).status_code == 201
    assert client.delete(f"{HOSTS}/{name}", headers=host.headers).status_code == 204


def test_the_web_pages_refuse_a_removed_cohost_too(client, person, browser):
    host = person("host", organiser=True)
    bea_caller = person("bea")
    person("carl")
    ready_competition(client, host.headers)
    bea = browser("bea")
    assert bea.post("/c/churn/join", page="/c/churn/team").status_code == 303
    invited = bea.post("/c/churn/team/invitations", page="/c/churn/team", data={"invitee": "carl"})
    assert invited.status_code == 303
    _removed_cohost(client, host)

    carl = browser("carl")
    page = "/c/churn/team"
    invitation_id = re.findall(r"/c/churn/invitations/(\d+)/accept", carl.get(page).text)[0]
    for path, data, files in (
        ("/c/churn/join", None, None),
        (f"/c/churn/invitations/{invitation_id}/accept", None, None),
        ("/c/churn/submissions", None, {"file": ("s.csv", PERFECT, "text/csv")}),
    ):
        response = carl.post(path, page=page, data=data, files=files)
        assert response.status_code == 303, (path, response.text)
        flash = carl.get(page).text
        assert "you hosted" in flash and "flash error" in flash, path
    team = client.get(f"{API}/competitions/churn/team", headers=bea_caller.headers).json()
    assert team["members"] == ["bea"]
    rows = client.get(f"{API}/competitions/churn/leaderboard", headers=host.headers).json()["rows"]
    assert rows == []
