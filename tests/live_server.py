"""A real Podium server for end-to-end tests of the command-line clients: uvicorn in a
subprocess on SQLite with the scoring thread, seeded with a host, two participants and a
competition that has an answer key and data files."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from app.auth.service import create_user
from app.db import make_engine, make_session_factory, unit_of_work
from app.models import Role, Submission, SubmissionStatus
from tests.databases import migrated
from tests.helpers import KEY, csv_bytes

SLUG = "churn"
SECRET = "live-server-test-secret"
TRAIN = csv_bytes(["id", "x", "target"], *[[f"t{i}", i % 7, i % 2] for i in range(300)])
TEST = csv_bytes(["id", "x"], *[[k, i] for i, k in enumerate("abcdef")])


@dataclass
class LiveServer:
    url: str
    root: Path
    database_url: str
    tokens: dict[str, str]
    log: Path

    def session(self) -> Session:
        return Session(create_engine(self.database_url))

    def wait_until_done(self, submission_id: int, timeout: float = 60.0) -> Submission:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.session() as session:
                sub = session.get(Submission, submission_id)
                if sub is not None and sub.status in (
                    SubmissionStatus.scored,
                    SubmissionStatus.failed,
                ):
                    session.expunge(sub)
                    return sub
            time.sleep(0.1)
        raise AssertionError(f"submission {submission_id} was not scored within {timeout} s")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A redis-server of the test's own on a free loopback port (the machine's shared one is
    never stopped): started and stopped by its process, not by name."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.dir = tmp_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=20)
            self.process = None


# The client the tests that talk to live servers send their own requests with: a new one per call
# (``httpx.get``) builds a TLS context each time, about 15 ms of CPU even for http://.
HTTP = httpx.Client(timeout=30)


def wait_until_healthy(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """Poll ``url``/healthz until the server answers (at most ~30 s), or fail with its log's tail
    if the process has exited."""
    for _ in range(300):
        if process.poll() is not None:
            raise AssertionError(f"the server did not start:\n{log.read_text()[-2000:]}")
        try:
            if HTTP.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)  # not up yet: poll again
    raise AssertionError(f"the server did not answer /healthz:\n{log.read_text()[-2000:]}")


@contextmanager
def live_server(
    root: Path, port: int, *, daily_limit: int = 3, http: str | None = None
) -> Iterator[LiveServer]:
    """``http``: uvicorn's HTTP parser (``h11``, ``httptools``); by default the one it picks."""
    database_url = f"sqlite:///{root}/podium.db"
    env = {
        **os.environ,
        "PODIUM_ENV": "test",
        "PODIUM_DATABASE_URL": database_url,
        "PODIUM_DATA_DIR": str(root / "data"),
        "PODIUM_SECRET_KEY": SECRET,
        "PODIUM_SCORING_BACKEND": "thread",
    }
    migrated(database_url)
    tokens: dict[str, str] = {}
    engine = make_engine(database_url)
    with unit_of_work(make_session_factory(engine)) as session:
        for name, role in (
            ("host", Role.organiser),
            ("alice", Role.participant),
            ("bob", Role.participant),
        ):
            _user, tokens[name] = create_user(session, name=name, role=role, secret_key=SECRET)
    engine.dispose()
    log = root / "server.log"
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory"]
            + ["--host", "127.0.0.1", "--port", str(port)]
            + (["--http", http] if http else []),
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(process, url, log)
        headers = {"Authorization": f"Bearer {tokens['host']}"}
        # A hang guard, as HTTP's: a fresh server's first requests (FastAPI works out its routes
        # on the first) took over httpx's default 5 s on a 2-core machine running the suite.
        with httpx.Client(base_url=f"{url}/api/v1", headers=headers, timeout=30) as api:
            for slug, title in ((SLUG, "Churn prediction"), ("other", "Another one")):
                body = {
                    "slug": slug,
                    "title": title,
                    "metric": {"name": "roc_auc"},
                    "daily_submission_limit": daily_limit,
                }
                assert api.post("/competitions", json=body).status_code == 201
            key = api.put(f"/competitions/{SLUG}/answer-key", files={"file": ("key.csv", KEY)})
            assert key.status_code == 201, key.text
            for name, content in (("train.csv", TRAIN), ("test.csv", TEST)):
                assert (
                    api.put(f"/competitions/{SLUG}/files/{name}", content=content).status_code
                    == 201
                )
        yield LiveServer(url, root, database_url, tokens, log)
    finally:
        process.terminate()
        process.wait(timeout=30)
    text = log.read_text()
    assert "Traceback" not in text and " 500 " not in text, text[-3000:]


def seeded_with_people(
    root: Path, secret: str, people: tuple[tuple[str, Role], ...], password: str
) -> tuple[str, dict[str, str]]:
    """A migrated SQLite database under ``root`` holding ``people`` (name, role), each with an
    address at example.org and ``password``: its URL and their tokens."""
    from app.auth.service import set_password

    url = f"sqlite:///{root}/podium.db"
    migrated(url)
    tokens: dict[str, str] = {}
    engine = make_engine(url)
    with unit_of_work(make_session_factory(engine)) as session:
        for name, role in people:
            user, tokens[name] = create_user(
                session, name=name, role=role, secret_key=secret, email=f"{name}@example.org"
            )
            set_password(user, password=password)
    engine.dispose()
    return url, tokens


@contextmanager
def uvicorn_server(root: Path, port: int, env: dict[str, str]) -> Iterator[str]:
    """``podium``'s app under uvicorn on ``port`` with ``env`` added to this process's
    environment (the thread scoring backend, PODIUM_ENV=test), its log under ``root``; yields
    its base URL once /healthz answers."""
    base = f"http://127.0.0.1:{port}"
    full = {**os.environ, "PODIUM_SCORING_BACKEND": "thread", "PODIUM_ENV": "test", **env}
    with (root / "server.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
            + ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            env=full,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until_healthy(process, base, root / "server.log")
            yield base
        finally:
            process.terminate()
            process.wait(timeout=10)
