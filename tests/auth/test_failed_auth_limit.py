"""Failed sign-ins are limited per client address: 429 with Retry-After once an address has
failed too often, on every way in, while other addresses are not affected."""

import base64

import pytest
from fastapi.testclient import TestClient

from app.auth.throttle import FailedAuthLimiter
from app.errors import RateLimited, Unauthorized
from tests.helpers import API, create_competition

ATTACKER = ("203.0.113.7", 40000)
NEIGHBOUR = ("198.51.100.9", 40001)
WRONG = {"Authorization": "Bearer pdm_not-a-real-token"}


@pytest.fixture
def from_address(client):  # type: ignore[no-untyped-def]
    """A client of the same running app that connects from another address."""

    def make(address: tuple[str, int]) -> TestClient:
        return TestClient(client.app, client=address)

    return make


def _assert_rate_limited(response, limit_seconds: float) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 429, response.text
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= limit_seconds
    body = response.json()
    assert body["code"] == "rate_limited" and body["retry_after"] == retry_after
    assert "too many failed sign-in attempts" in body["detail"]


def test_500_wrong_tokens_are_answered_429_after_the_limit_and_others_still_get_in(
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
    # Even a right token is refused from there: the attacker cannot test guesses any more.
    assert attacker.get(f"{API}/me", headers=alice.headers).status_code == 429
    # Another address is not affected.
    me = neighbour.get(f"{API}/me", headers=alice.headers)
    assert me.status_code == 200 and me.json()["name"] == "alice"


def test_the_upload_guard_counts_and_refuses_before_the_body(client, settings, from_address, host):
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


def _fail(limiter: FailedAuthLimiter, address: str) -> None:
    with pytest.raises(Unauthorized):
        limiter.attempt(address, _wrong)


def _wrong() -> None:
    raise Unauthorized("unknown or revoked token")


def test_the_window_ends_and_retry_after_says_when():
    clock = Clock()
    limiter = FailedAuthLimiter(max_failures=3, window_seconds=60, clock=clock)
    for _ in range(3):
        _fail(limiter, "a")
    clock.now += 20
    with pytest.raises(RateLimited) as refused:
        limiter.attempt("a", lambda: "ok")
    assert refused.value.headers == {"Retry-After": "40"}
    clock.now += 40
    assert limiter.attempt("a", lambda: "ok") == "ok"


def test_successes_do_not_count():
    limiter = FailedAuthLimiter(max_failures=2, window_seconds=60, clock=Clock())
    for _ in range(100):
        assert limiter.attempt("a", lambda: "ok") == "ok"
    assert len(limiter) == 0


def test_the_table_stays_bounded_under_a_flood_of_addresses():
    limiter = FailedAuthLimiter(
        max_failures=2, window_seconds=60, max_addresses=1000, clock=Clock()
    )
    for i in range(50_000):
        _fail(limiter, f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}")
    assert len(limiter) == 1000
    # The most recent failures are the ones kept.
    _fail(limiter, "10.0.195.79")
    with pytest.raises(RateLimited):
        limiter.check("10.0.195.79")
