"""Behind a reverse proxy, `podium serve --forwarded-allow-ips` makes the client's own address the
one the sign-in throttle counts and the access log shows; from a proxy it does not trust, the
forwarded header is ignored (issue 23). A real `podium serve` process on a free port."""

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from app.auth.service import create_user
from app.db import make_engine, make_session_factory, unit_of_work
from app.models import Role
from tests.databases import migrated
from tests.live_server import free_port, wait_until_healthy

SECRET = "proxy-headers-test-secret"
FAILURES = 3


@contextmanager
def podium_serve(root: Path, *args: str) -> Iterator[tuple[str, str, Path]]:
    """A server started by `podium serve ARGS`; yields its URL, alice's token and its log."""
    database_url = f"sqlite:///{root}/podium.db"
    migrated(database_url)
    engine = make_engine(database_url)
    with unit_of_work(make_session_factory(engine)) as session:
        _user, token = create_user(session, name="alice", role=Role.participant, secret_key=SECRET)
    engine.dispose()
    env = {
        **os.environ,
        "PODIUM_ENV": "test",
        "PODIUM_DATABASE_URL": database_url,
        "PODIUM_DATA_DIR": str(root / "data"),
        "PODIUM_SECRET_KEY": SECRET,
        "PODIUM_AUTH_FAILURES_PER_WINDOW": str(FAILURES),
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = root / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port), *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(process, url, log)
        yield url, token, log
    finally:
        process.terminate()
        process.wait(timeout=30)


def _from(address: str, token: str) -> dict[str, str]:
    return {"X-Forwarded-For": address, "Authorization": f"Bearer {token}"}


def _fail_from(client: httpx.Client, address: str) -> None:
    for _ in range(FAILURES):
        wrong = client.get("/api/v1/competitions", headers=_from(address, "wrong-token"))
        assert wrong.status_code == 401


def test_a_trusted_proxys_forwarded_address_is_the_one_throttled_and_logged(tmp_path):
    with podium_serve(tmp_path, "--proxy-headers", "--forwarded-allow-ips", "127.0.0.1") as (
        url,
        token,
        log,
    ):
        with httpx.Client(base_url=url, timeout=30) as client:
            _fail_from(client, "203.0.113.7")
            # The wrong token is refused unchecked from the address that failed with it...
            again = client.get("/api/v1/competitions", headers=_from("203.0.113.7", "wrong-token"))
            assert again.status_code == 429
            # ...and only there: from another client behind the same proxy it is merely wrong.
            neighbour = client.get(
                "/api/v1/competitions", headers=_from("203.0.113.8", "wrong-token")
            )
            assert neighbour.status_code == 401, neighbour.text
            # A right token is never refused for other credentials' failures.
            right = client.get("/api/v1/competitions", headers=_from("203.0.113.7", token))
            assert right.status_code == 200, right.text
    text = log.read_text()
    assert "203.0.113.7" in text and "203.0.113.8" in text


def test_an_untrusted_peers_forwarded_header_is_ignored(tmp_path):
    with podium_serve(tmp_path, "--forwarded-allow-ips", "192.0.2.1") as (url, token, log):
        with httpx.Client(base_url=url, timeout=30) as client:
            _fail_from(client, "203.0.113.7")
            # Every client is the peer (127.0.0.1) here, and the wrong token has failed too
            # often from it, whatever the header says.
            shared = client.get("/api/v1/competitions", headers=_from("203.0.113.8", "wrong-token"))
            assert shared.status_code == 429
    assert "203.0.113.8" not in log.read_text()
