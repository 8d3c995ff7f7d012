"""A client that sends its headers and then its body slowly (or never) holds nothing shared: while
fifty such connections wait on every route that reads a body, the database, the board and the
pages answer everyone else, and a body that does not arrive in time is answered 408 (issue 23).

Against a real uvicorn server, with raw sockets; the timeouts are hang guards, never assertions.
"""

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.http.slow_client import answered, basic, held_request, status_line
from tests.live_server import SLUG, LiveServer, free_port, live_server

KAGGLE = "/api/v1/competitions.CompetitionApiService"
GUARD = 30.0  # seconds an answer may take before the test calls it a hang
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


# One server per module and setting (a start costs seconds of CPU): each test closes what it
# held, and the server's log is checked for tracebacks and 500s once all of them have run.
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Long enough that every held connection is still held while the others are answered.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PODIUM_BODY_TIMEOUT_SECONDS", "300")
        with live_server(tmp_path_factory.mktemp("patient"), free_port()) as live:
            yield live


def _answers_everyone_else(live: LiveServer) -> None:
    token = {"Authorization": f"Bearer {live.tokens['alice']}"}
    with httpx.Client(base_url=live.url, timeout=GUARD) as client:
        assert client.get("/api/v1/competitions", headers=token).status_code == 200
        assert (
            client.get(f"/api/v1/competitions/{SLUG}/leaderboard", headers=token).status_code == 200
        )
        assert client.get(f"/c/{SLUG}").status_code == 200
        assert client.get(f"/c/{SLUG}/leaderboard").status_code == 200
        call = client.post(
            f"{KAGGLE}/ListCompetitions",
            json={},
            headers={"Authorization": basic("alice", live.tokens["alice"])},
        )
        assert call.status_code == 200, call.text


def test_fifty_anonymous_kaggle_calls_waiting_on_their_bodies_hold_nothing(server):
    held = [
        held_request(server.url, "POST", f"{KAGGLE}/{method}")
        for method in ("ListCompetitions", "GetLeaderboard") * 25
    ]
    try:
        _answers_everyone_else(server)
        assert not any(answered(conn) for conn in held), "the server gave up on a held body early"
    finally:
        for conn in held:
            conn.close()


def _web_session(live: LiveServer, client: httpx.Client) -> str:
    """Sign alice in through the form; returns the CSRF token of her submissions page."""
    page = client.get("/signin")
    form = {"csrf_token": CSRF.findall(page.text)[0], "token": live.tokens["alice"]}
    assert client.post("/signin", data=form).status_code == 303
    return CSRF.findall(client.get(f"/c/{SLUG}/submissions").text)[0]


def test_held_bodies_on_every_route_that_reads_one_leave_the_server_answering(server):
    alice, host = server.tokens["alice"], server.tokens["host"]
    with httpx.Client(base_url=server.url, timeout=GUARD) as client:
        joined = client.post(
            f"/api/v1/competitions/{SLUG}/join", headers={"Authorization": f"Bearer {alice}"}
        )
        assert joined.status_code in (200, 201), joined.text
        start = client.post(
            f"{KAGGLE}/StartSubmissionUpload",
            json={"competitionName": SLUG, "contentLength": 100, "fileName": "sub.csv"},
            headers={"Authorization": basic("alice", alice)},
        )
        assert start.status_code == 200, start.text
        put_path = urlsplit(start.json()["createUrl"]).path
        csrf = _web_session(server, client)
        cookies = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
    multipart = {"Content-Type": "multipart/form-data; boundary=b"}
    bearer_alice = {"Authorization": f"Bearer {alice}"}
    routes = [
        ("POST", f"{KAGGLE}/ListCompetitions", {}),
        ("POST", f"{KAGGLE}/GetLeaderboard", {"Authorization": basic("alice", alice)}),
        ("POST", "/api/v1/competitions", {**bearer_alice, "Content-Type": "application/json"}),
        ("POST", f"/api/v1/competitions/{SLUG}/submissions", {**bearer_alice, **multipart}),
        ("PUT", f"/api/v1/competitions/{SLUG}/files/big.csv", {"Authorization": f"Bearer {host}"}),
        ("PUT", put_path, {}),
        ("POST", "/signin", {"Cookie": cookies, "X-CSRF-Token": csrf}),
        ("POST", f"/c/{SLUG}/submissions", {"Cookie": cookies, **multipart}),
        ("POST", f"/c/{SLUG}/join", {"Cookie": cookies, "X-CSRF-Token": csrf}),
        (
            "PUT",
            f"/api/v1/competitions/{SLUG}/files/chunked.csv",
            {"Authorization": f"Bearer {host}"},
        ),
    ]
    held = [
        held_request(
            server.url,
            method,
            path,
            headers=headers,
            sent=b"--b\r\n" if "multipart" in headers.get("Content-Type", "") else b"x",
            chunked=path.endswith("chunked.csv"),
        )
        for method, path, headers in routes
        for _ in range(5)
    ]
    try:
        _answers_everyone_else(server)
        waiting = [routes[i // 5][1] for i, conn in enumerate(held) if answered(conn)]
        assert waiting == [], f"answered before their bodies came: {waiting}"
    finally:
        for conn in held:
            conn.close()


@pytest.fixture(scope="module")
def impatient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PODIUM_BODY_TIMEOUT_SECONDS", "1")
        with live_server(tmp_path_factory.mktemp("impatient"), free_port()) as live:
            yield live


@pytest.mark.parametrize(
    "method,path,headers",
    [
        ("POST", f"{KAGGLE}/ListCompetitions", {}),
        ("POST", "/api/v1/competitions", {"Content-Type": "application/json"}),
    ],
)
def test_a_body_that_does_not_come_in_time_is_408(impatient, method, path, headers):
    conn = held_request(impatient.url, method, path, headers=headers)
    try:
        assert status_line(conn, GUARD).startswith("HTTP/1.1 408")
    finally:
        conn.close()


def test_an_upload_that_stops_arriving_is_408(impatient):
    headers = {
        "Authorization": f"Bearer {impatient.tokens['alice']}",
        "Content-Type": "multipart/form-data; boundary=b",
    }
    path = f"/api/v1/competitions/{SLUG}/submissions"
    conn = held_request(impatient.url, "POST", path, headers=headers, sent=b"--b\r\n")
    try:
        assert status_line(conn, GUARD).startswith("HTTP/1.1 408")
    finally:
        conn.close()
