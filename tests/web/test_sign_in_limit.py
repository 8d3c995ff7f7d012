"""The sign-in form counts failed passwords per (address, account), per address and per account,
and failed tokens per (address, token), like the API: guessing stops, the innocent get in."""

from tests.asgi_client import TestClient
from tests.helpers import API
from tests.web.conftest import PASSWORD, WebClient


def _browser_at(client: TestClient, address: str) -> WebClient:
    return WebClient(TestClient(client.app, base_url="http://testserver", client=(address, 5000)))


def test_the_sign_in_form_answers_429_after_too_many_failures(client, settings, person):
    ada = person("ada")
    attacker = _browser_at(client, "203.0.113.50")
    limit = settings.auth_failures_per_window
    statuses = [attacker.sign_in("ada", f"guess {i}").status_code for i in range(limit + 5)]
    assert statuses[:limit] == [401] * limit
    assert set(statuses[limit:]) == {429}

    refused = attacker.sign_in("ada", PASSWORD)  # the right password too, from there
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert "too many failed sign-in attempts" in refused.text
    assert "podium_session" not in refused.cookies

    # The same wrong token, retried, stops the same way.
    tokens = [
        attacker.post("/signin", page="/signin", data={"token": "pdm_guess"}).status_code
        for _ in range(limit + 1)
    ]
    assert tokens == [401] * limit + [429]
    # Ada's token still signs her in from there, and her password from elsewhere.
    by_token = attacker.post("/signin", page="/signin", data={"token": ada.token})
    assert by_token.status_code == 303, by_token.text
    neighbour = _browser_at(client, "198.51.100.60")
    assert neighbour.sign_in("ada", PASSWORD).status_code == 303


def test_someone_elses_wrong_passwords_do_not_lock_a_right_password_out_of_their_address(
    client, settings, person
):
    person("ada")
    person("grace")
    office = _browser_at(client, "203.0.113.51")
    for i in range(settings.auth_failures_per_window + 3):
        assert office.sign_in("ada", f"guess {i}").status_code in (401, 429)
    assert office.sign_in("grace", PASSWORD).status_code == 303


def test_one_accounts_password_guessed_from_many_addresses_stops_while_its_tokens_work(
    client, settings, person
):
    ada = person("ada")
    ceiling = settings.auth_failures_per_account
    per_address = settings.auth_failures_per_window - 1  # never the per-address-and-name limit
    statuses = []
    for n in range(-(-(ceiling + 5) // per_address)):
        botnet = _browser_at(client, f"192.0.2.{n + 1}")
        statuses += [
            botnet.sign_in("ada", f"guess {n} {i}").status_code for i in range(per_address)
        ]
    assert statuses[:ceiling] == [401] * ceiling
    assert set(statuses[ceiling:]) == {429}
    fresh = _browser_at(client, "198.51.100.61")
    refused = fresh.sign_in("ada", PASSWORD)
    assert refused.status_code == 429 and "for this account" in refused.text
    # Her tokens keep working: on the API and on the sign-in form.
    me = TestClient(client.app, client=("198.51.100.62", 5000)).get(
        f"{API}/me", headers={"Authorization": f"Bearer {ada.token}"}
    )
    assert me.status_code == 200
    assert fresh.post("/signin", page="/signin", data={"token": ada.token}).status_code == 303
