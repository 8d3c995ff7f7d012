"""Failed sign-ins are limited per (client address, credential tried) and, with a much higher
ceiling, per address: 429 with Retry-After for the guesses, on every way in, while a right token
is never refused because of other credentials' failures from its address."""

import base64

import pytest

from app.auth.throttle import FailedAuthLimiter
from app.errors import RateLimited, Unauthorized
from tests.asgi_client import TestClient
from tests.conftest import another_client
from tests.helpers import API, create_competition

ATTACKER = ("203.0.113.7", 40000)
NEIGHBOUR = ("198.51.100.9", 40001)
WRONG = {"Authorization": "Bearer pdm_not-a-real-token"}


@pytest.fixture
def from_address(client):  # type: ignore[no-untyped-def]
    """A client of the same running app that connects from another address."""

    def make(address: tuple[str, int]) -> TestClient:
        return another_client(client, client=address)

    return make


def _assert_rate_limited(response, limit_seconds: float) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 429, response.text
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= limit_seconds
    body = response.json()
    assert body["code"] == "rate_limited" and body["retry_after"] == retry_after
    assert "too many failed sign-in attempts" in body["detail"]


def test_500_tries_of_one_wrong_token_are_answered_429_after_the_limit_and_others_get_in(
    client, settings, from_address, alice
):
    attacker, neighbour = from_address(ATTACKER), from_address(NEIGHBOUR)
    statuses = [attacker.get(f"{API}/me", headers=WRONG).status_code for _ in range(500)]
    limit = settings.auth_failures_per_window
    assert statuses[:limit] == [401] * limit
    assert set(statuses[limit:]) == {429}
    _assert_rate_limited(
        attacker.get(f"{API}/me", headers=WRONG), settings.auth_failure_window_seconds
    )
    # A right token is not refused from there: the failures were another credential's.
    assert attacker.get(f"{API}/me", headers=alice.headers).status_code == 200
    # Another address is not affected.
    me = neighbour.get(f"{API}/me", headers=alice.headers)
    assert me.status_code == 200 and me.json()["name"] == "alice"


def test_the_upload_guard_counts_and_refuses_before_the_body(
    client, settings, from_address, host, alice
):
    create_competition(client, host.headers)
    attacker = from_address(ATTACKER)
    url = f"{API}/competitions/churn/submissions"
    statuses = []
    for _ in range(settings.auth_failures_per_window + 5):
        response = attacker.post(url, files={"file": ("s.csv", b"id,target\n")}, headers=WRONG)
        statuses.append(response.status_code)
    assert statuses.count(401) == settings.auth_failures_per_window
    assert statuses[-1] == 429
    response = attacker.post(url, files={"file": ("s.csv", b"id,target\n")}, headers=WRONG)
    _assert_rate_limited(response, settings.auth_failure_window_seconds)
    # A right token passes the guard from there (to the route: this competition has no key yet).
    right = attacker.post(url, files={"file": ("s.csv", b"id,target\n")}, headers=alice.headers)
    assert right.status_code == 409, right.text


def test_failures_on_one_path_count_on_the_others(client, settings, from_address):
    attacker = from_address(ATTACKER)
    for _ in range(settings.auth_failures_per_window):
        assert attacker.get(f"{API}/me", headers=WRONG).status_code == 401
    kaggle = attacker.post(
        f"{API}/competitions.CompetitionApiService/ListCompetitions",
        json={},
        headers=WRONG,
    )
    assert kaggle.status_code == 429
    assert int(kaggle.headers["Retry-After"]) >= 1


def test_the_kaggle_clients_basic_credentials_are_counted(client, settings, from_address, alice):
    attacker = from_address(ATTACKER)
    wrong = base64.b64encode(b"alice:pdm_guess").decode()
    url = f"{API}/competitions.CompetitionApiService/ListCompetitions"
    statuses = [
        attacker.post(url, json={}, headers={"Authorization": f"Basic {wrong}"}).status_code
        for _ in range(settings.auth_failures_per_window + 3)
    ]
    assert statuses[: settings.auth_failures_per_window] == [401] * (
        settings.auth_failures_per_window
    )
    assert statuses[-1] == 429
    right = base64.b64encode(f"alice:{alice.token}".encode()).decode()
    neighbour = from_address(NEIGHBOUR)
    ok = neighbour.post(url, json={}, headers={"Authorization": f"Basic {right}"})
    assert ok.status_code == 200, ok.text


# --- the table itself ---------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _fail(limiter: FailedAuthLimiter, address: str, token: str = "pdm_guess") -> None:
    with pytest.raises(Unauthorized):
        limiter.attempt_token(address, token, _wrong)


def _wrong() -> None:
    raise Unauthorized("unknown or revoked token")


def test_the_window_ends_and_retry_after_says_when():
    clock = Clock()
    limiter = FailedAuthLimiter(max_failures=3, window_seconds=60, clock=clock)
    for _ in range(3):
        _fail(limiter, "a")
    clock.now += 20
    with pytest.raises(RateLimited) as refused:
        limiter.attempt_token("a", "pdm_guess", _wrong)
    assert refused.value.headers == {"Retry-After": "40"}
    clock.now += 40
    _fail(limiter, "a")  # a new window: a 401 again, not a 429


def test_a_right_token_reads_no_counter():
    class Untouchable:
        def hit(self, key: str) -> tuple[int, float]:
            raise AssertionError("a right token counted")

        def count(self, key: str) -> tuple[int, float]:
            raise AssertionError("a right token read a counter")

    limiter = FailedAuthLimiter(max_failures=3, window_seconds=60, counters=lambda _: Untouchable())
    assert limiter.attempt_token("a", "pdm_right", lambda: "ok") == "ok"


def test_successes_do_not_count():
    limiter = FailedAuthLimiter(max_failures=2, window_seconds=60, clock=Clock())
    for _ in range(100):
        assert limiter.attempt_token("a", "pdm_right", lambda: "ok") == "ok"
        assert limiter.attempt_password("a", "ada", lambda: "ok") == "ok"
    assert len(limiter) == 0


def test_the_tables_stay_bounded_under_a_flood_of_addresses_and_guesses():
    limiter = FailedAuthLimiter(
        max_failures=2, window_seconds=60, max_per_address=10**6, max_keys=1000, clock=Clock()
    )
    for i in range(50_000):
        _fail(limiter, f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}", f"pdm_{i}")
        with pytest.raises(Unauthorized):
            limiter.attempt_password("10.0.0.1", f"user{i}", _wrong)
    # Three kinds of key (credential, address, account), each table at most 1000.
    assert len(limiter) == 3000
    # The most recent failures are the ones kept: the flood's last guess, tried once more.
    _fail(limiter, "10.0.195.79", "pdm_49999")
    with pytest.raises(RateLimited):
        limiter.attempt_token("10.0.195.79", "pdm_49999", _wrong)


def test_the_table_never_holds_a_token():
    limiter = FailedAuthLimiter(max_failures=2, window_seconds=60, clock=Clock())
    _fail(limiter, "a", "pdm_secret-token-value")
    tables = (limiter._credentials, limiter._addresses, limiter._accounts)
    assert not any("secret-token-value" in key for t in tables for key in t._failures)  # type: ignore[attr-defined]


class SharedCounters:
    """A store two limiters (two processes) share, as a Redis-backed one would be."""

    def __init__(self, data: dict[str, int]) -> None:
        self.data = data

    def hit(self, key: str) -> tuple[int, float]:
        self.data[key] = self.data.get(key, 0) + 1
        return self.data[key], 60.0

    def count(self, key: str) -> tuple[int, float]:
        return self.data.get(key, 0), 60.0


def test_a_shared_store_counts_the_failures_of_every_process():
    stores: dict[str, dict[str, int]] = {"credential": {}, "address": {}, "account": {}}
    one, two = (
        FailedAuthLimiter(
            max_failures=3, window_seconds=60, counters=lambda kind: SharedCounters(stores[kind])
        )
        for _ in range(2)
    )
    _fail(one, "a")
    _fail(two, "a")
    _fail(one, "a")
    with pytest.raises(RateLimited):
        two.attempt_token("a", "pdm_guess", _wrong)
    assert two.attempt_token("a", "pdm_right", lambda: "ok") == "ok"


# --- the innocent are never locked out ----------------------------------------------------------


def test_twenty_mistyped_tokens_do_not_lock_a_right_token_out_of_their_address(
    client, settings, from_address, alice, bob
):
    office = from_address(ATTACKER)  # one NAT address: the mistyper and everyone else
    limit = settings.auth_failures_per_window
    statuses = [office.get(f"{API}/me", headers=WRONG).status_code for _ in range(limit + 1)]
    assert statuses == [401] * limit + [429]
    for caller in (alice, bob):
        me = office.get(f"{API}/me", headers=caller.headers)
        assert me.status_code == 200 and me.json()["name"] == caller.name
    # On the kaggle route too.
    kaggle = office.post(
        f"{API}/competitions.CompetitionApiService/ListCompetitions",
        json={},
        headers=alice.headers,
    )
    assert kaggle.status_code == 200, kaggle.text


def test_a_spray_of_different_wrong_tokens_from_one_address_ends_in_429(
    client, settings, from_address, alice
):
    attacker, neighbour = from_address(ATTACKER), from_address(NEIGHBOUR)
    statuses = [
        attacker.get(f"{API}/me", headers={"Authorization": f"Bearer pdm_guess{i}"}).status_code
        for i in range(500)
    ]
    ceiling = settings.auth_failures_per_address
    assert ceiling < 500
    assert statuses[:ceiling] == [401] * ceiling
    assert set(statuses[ceiling:]) == {429}
    _assert_rate_limited(
        attacker.get(f"{API}/me", headers={"Authorization": "Bearer pdm_another"}),
        settings.auth_failure_window_seconds,
    )
    # A right token still gets in, from there and elsewhere.
    assert attacker.get(f"{API}/me", headers=alice.headers).status_code == 200
    assert neighbour.get(f"{API}/me", headers=alice.headers).status_code == 200
