"""The sign-in form counts failed passwords and tokens per client address, like the API."""

from fastapi.testclient import TestClient

from tests.web.conftest import PASSWORD, WebClient


def _browser_at(client: TestClient, address: str) -> WebClient:
    return WebClient(TestClient(client.app, base_url="http://testserver", client=(address, 5000)))


def test_the_sign_in_form_answers_429_after_too_many_failures(client, settings, person):
    person("ada")
    attacker = _browser_at(client, "203.0.113.50")
    limit = settings.auth_failures_per_window
    statuses = []
    for i in range(limit + 5):
        if i % 2:
            response = attacker.post("/signin", page="/signin", data={"token": "pdm_guess"})
        else:
            response = attacker.sign_in("ada", f"guess {i}")
        statuses.append(response.status_code)
    assert statuses[:limit] == [401] * limit
    assert set(statuses[limit:]) == {429}

    refused = attacker.sign_in("ada", PASSWORD)  # the right password too, from there
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert "too many failed sign-in attempts" in refused.text
    assert "podium_session" not in refused.cookies

    neighbour = _browser_at(client, "198.51.100.60")
    assert neighbour.sign_in("ada", PASSWORD).status_code == 303
