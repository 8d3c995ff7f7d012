"""What a caller may not see answers exactly as what does not exist: another team's submission
and a missing one get the same status and the same body (the id aside) on every route that
names a submission, so walking the ids tells nothing about which exist."""

import pytest

from tests.helpers import API, PERFECT, ready_competition, submit

ROUTES = [
    ("GET", "/submissions/{id}"),
    ("GET", "/submissions/{id}/file"),
    ("GET", "/submissions/{id}/scores"),
    ("POST", "/submissions/{id}/select"),
    ("DELETE", "/submissions/{id}/select"),
    ("POST", "/submissions/{id}/hide"),
    ("DELETE", "/submissions/{id}/hide"),
    ("GET", "/competitions/churn/compare?a={id}&b={id}"),
]


def _answer(client, caller, method, path, submission_id):  # type: ignore[no-untyped-def]
    response = client.request(method, API + path.format(id=submission_id), headers=caller.headers)
    body = response.text.replace(str(submission_id), "{id}")
    return response.status_code, body


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_another_teams_submission_answers_as_a_missing_one(client, host, alice, bob, method, path):
    ready_competition(client, host.headers)
    response = submit(client, alice.headers, PERFECT)
    assert response.status_code == 202, response.text
    theirs = response.json()["id"]
    missing = theirs + 1000
    assert client.post(f"{API}/competitions/churn/join", headers=bob.headers).status_code == 201
    seen = _answer(client, bob, method, path, theirs)
    assert seen == _answer(client, bob, method, path, missing)
    assert seen[0] == 404, seen


def test_the_team_itself_still_hears_that_scores_are_for_hosts(client, host, alice):
    ready_competition(client, host.headers)
    mine = submit(client, alice.headers, PERFECT).json()["id"]
    response = client.get(f"{API}/submissions/{mine}/scores", headers=alice.headers)
    assert response.status_code == 403, response.text
    assert client.get(f"{API}/submissions/{mine}/scores", headers=host.headers).status_code == 200
