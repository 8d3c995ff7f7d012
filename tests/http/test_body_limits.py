"""Every body is bounded while it is read, on every route, declared or chunked, and a web form
without its CSRF cookie or a session is refused on its headers (issue 23).

Against a real uvicorn server: the client pushes its body as fast as the server takes it and
stops when the answer comes, so the bytes it got to send bound what the server read (plus the
kernel's socket buffers, SLACK). Before, the server read a refused 50 MB form whole before its
403, and a chunked kaggle upload or data file about 1 MiB past the limit before its 413.
"""

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from app.http.body_gate import FRAMING_BYTES
from tests.http.slow_client import basic, pushed_until_answered
from tests.live_server import SLUG, LiveServer, free_port, live_server

KAGGLE = "/api/v1/competitions.CompetitionApiService"
TOTAL = 50 * 1024 * 1024
# What a refused client may have sent beyond what the server may read: the socket buffers between
# them (the client's is made small; measured 0.2-0.5 MiB on loopback).
SLACK = 1024 * 1024
UPLOAD_LIMIT = 100_000
REQUEST_LIMIT = 1024 * 1024  # PODIUM_MAX_REQUEST_BYTES's default
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
MULTIPART = {"Content-Type": "multipart/form-data; boundary=b"}
PART = b'--b\r\nContent-Disposition: form-data; name="file"; filename="s.csv"\r\n\r\n'


# One server for the module (a start costs seconds of CPU); its log is checked for tracebacks
# and 500s once every test has run.
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PODIUM_MAX_UPLOAD_BYTES", str(UPLOAD_LIMIT))
        env.setenv("PODIUM_MAX_DATA_FILE_BYTES", str(UPLOAD_LIMIT))
        with live_server(tmp_path_factory.mktemp("limits"), free_port()) as live:
            yield live


def _csrf_cookie(live: LiveServer) -> str:
    """A browser's CSRF cookie (from the sign-in page), with nobody signed in."""
    with httpx.Client(base_url=live.url, timeout=30) as client:
        client.get("/signin")
        return f"podium_csrf={client.cookies['podium_csrf']}"


@pytest.mark.parametrize("path", [f"/c/{SLUG}/submissions", "/signin", f"/c/{SLUG}/host/files"])
def test_a_50_mb_form_without_cookies_is_refused_before_it_is_read(server, path):
    status, sent = pushed_until_answered(server.url, "POST", path, total=TOTAL, headers=MULTIPART)
    assert status.startswith("HTTP/1.1 403"), status
    assert sent < SLACK, f"the server read {sent:,} bytes of a refused form"


def test_a_50_mb_form_without_a_session_goes_to_sign_in_before_it_is_read(server):
    headers = {**MULTIPART, "Cookie": _csrf_cookie(server)}
    path = f"/c/{SLUG}/submissions"
    status, sent = pushed_until_answered(server.url, "POST", path, total=TOTAL, headers=headers)
    assert status.startswith("HTTP/1.1 303"), status
    assert sent < SLACK


def test_a_chunked_form_body_is_cut_at_the_request_limit(server):
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": _csrf_cookie(server),
    }
    status, sent = pushed_until_answered(
        server.url, "POST", "/signin", total=TOTAL, headers=headers, chunked=True
    )
    assert status.startswith("HTTP/1.1 413"), status
    assert sent < REQUEST_LIMIT + SLACK


def _upload_url(live: LiveServer) -> str:
    with httpx.Client(base_url=live.url, timeout=30) as client:
        start = client.post(
            f"{KAGGLE}/StartSubmissionUpload",
            json={"competitionName": SLUG, "contentLength": 100, "fileName": "sub.csv"},
            headers={"Authorization": basic("alice", live.tokens["alice"])},
        )
        assert start.status_code == 200, start.text
        return urlsplit(start.json()["createUrl"]).path


def test_a_chunked_upload_past_the_limit_is_413_early_on_every_upload_route(server):
    routes = [
        ("PUT", _upload_url(server), {}),
        (
            "POST",
            f"/api/v1/competitions/{SLUG}/submissions",
            {"Authorization": f"Bearer {server.tokens['alice']}", **MULTIPART},
        ),
        (
            "PUT",
            f"/api/v1/competitions/{SLUG}/files/big.csv",
            {"Authorization": f"Bearer {server.tokens['host']}"},
        ),
    ]
    for method, path, headers in routes:
        first = PART if headers.get("Content-Type") == MULTIPART["Content-Type"] else b""
        status, sent = pushed_until_answered(
            server.url, method, path, total=TOTAL, headers=headers, chunked=True, first=first
        )
        assert status.startswith("HTTP/1.1 413"), (path, status)
        assert sent < UPLOAD_LIMIT + FRAMING_BYTES + SLACK, (path, sent)
