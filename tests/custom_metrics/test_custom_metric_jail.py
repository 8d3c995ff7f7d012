"""The jail around an organiser's metric: each attack that took over the server before is tried.

Every attack runs twice. First without the jail (the development opt-out, with the jail made to
look unavailable): the attack works, which proves the probe would see a breach. Then in the jail,
where it must fail. The metric reports what it managed through its score, or by a process the
test finds by a unique argument in its command line.
"""

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.auth.service import create_user
from app.config import Settings
from app.custom_metrics import sandbox
from app.custom_metrics.sandbox import CustomMetricFailure, SandboxLimits, run_custom_metric
from app.db import make_engine, make_session_factory, unit_of_work
from app.jail.bwrap import JailUnavailable
from app.models import ApiToken, Role
from tests.custom_metrics.processes import processes_with_argument
from tests.databases import migrated
from tests.helpers import API, create_competition, csv_bytes, submit, upload_key

SECRET = f"s3cret-{uuid.uuid4().hex}"


@pytest.fixture
def small(csv_file):
    key = csv_file("key.csv", ["id", "y"], [["a", 1.0], ["b", 2.0]])
    sub = csv_file("sub.csv", ["id", "y"], [["a", 1.0], ["b", 2.0]])
    return key, sub


def _no_jail(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> None:
        raise JailUnavailable("bubblewrap (bwrap) is not installed")

    monkeypatch.setattr(sandbox, "check_jail", unavailable)


def _score(metric: Path, small, *, jailed: bool, monkeypatch, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    """The metric's score, in the jail or (jailed=False) without it."""
    with monkeypatch.context() as patch:
        if not jailed:
            _no_jail(patch)
        return run_custom_metric(
            metric_path=metric,
            answer_key=small[0],
            submission=small[1],
            id_column=None,
            params={},
            limits=SandboxLimits(timeout_seconds=timeout, allow_unjailed=not jailed),
        ).score


@pytest.fixture
def server_like(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A process holding the server's secrets in its environment, and a data directory with
    another competition's answer key in it."""
    data = tmp_path / "data"
    other_key = data / "answer-keys" / "2" / "0123abcd.upload"
    other_key.parent.mkdir(parents=True)
    other_key.write_text(f"id,y\nprivate-row,{SECRET}\n")
    env = {
        **os.environ,
        "PODIUM_SECRET_KEY": SECRET,
        "PODIUM_DATABASE_URL": f"sqlite:///{data}/podium.db",
    }
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], env=env, start_new_session=True
    )
    try:
        yield process.pid, other_key
    finally:
        process.kill()
        process.wait()


def test_the_metric_cannot_read_the_servers_environment_data_directory_or_other_keys(
    metric_file, small, server_like, monkeypatch
):
    pid, other_key = server_like
    metric = metric_file(f"""
        import os

        def attempt(read):
            try:
                return read()
            except OSError:
                return ""

        def score(solution, submission, row_id_column_name):
            found = 0
            environ = attempt(lambda: open("/proc/{pid}/environ", "rb").read().decode())
            if {SECRET!r} in environ:
                found += 1
            if {SECRET!r} in attempt(lambda: open({str(other_key)!r}).read()):
                found += 10
            if attempt(lambda: " ".join(os.listdir({str(other_key.parents[2])!r}))):
                found += 100
            return float(found)
    """)
    assert _score(metric, small, jailed=False, monkeypatch=monkeypatch) == 111.0
    assert _score(metric, small, jailed=True, monkeypatch=monkeypatch) == 0.0


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP port on 127.0.0.1 and the list of connections it accepted."""
    accepted: list[object] = []
    stop = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, address = server.accept()
            except TimeoutError:
                continue
            accepted.append(address)
            connection.close()

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        server.close()


def test_the_metric_cannot_connect_to_the_servers_loopback(
    metric_file, small, listener, monkeypatch
):
    port, accepted = listener
    metric = metric_file(f"""
        import socket

        def score(solution, submission, row_id_column_name):
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
            except OSError:
                return 0.0
            return 1.0
    """)
    assert _score(metric, small, jailed=False, monkeypatch=monkeypatch) == 1.0
    assert len(accepted) == 1
    assert _score(metric, small, jailed=True, monkeypatch=monkeypatch) == 0.0
    assert len(accepted) == 1  # nothing more reached the listener


DETACHING = """
    import os

    def score(solution, submission, row_id_column_name):
        # fork, setsid, fork again: the grandchild leaves the metric's session and process group.
        ready, tell = os.pipe()
        # Python's pipes close on exec: EOF on `started` once the grandchild has become sleep.
        started, exec_done = os.pipe()
        if os.fork() == 0:
            os.setsid()
            grandchild = os.fork()
            if grandchild == 0:
                try:
                    os.execvp("sleep", ["sleep", {marker!r}])
                finally:
                    os._exit(1)
            os.close(exec_done)
            os.write(tell, str(grandchild).encode())
            os._exit(0)
        os.close(tell)
        os.close(exec_done)
        grandchild = int(os.read(ready, 32))
        os.read(started, 1)  # waits for the exec (bounded by the job's own timeout)
        try:
            running = {marker!r} in open(f"/proc/{{grandchild}}/cmdline").read()
        except OSError:
            running = False
        print("grandchild running:", running, flush=True)
        while {loop}:
            pass
        return 1.0 if running else 0.0
"""


@pytest.mark.parametrize("ending", ["returns", "times out"])
def test_a_detached_grandchild_is_gone_after_the_job(metric_file, small, monkeypatch, ending):
    loop = ending == "times out"
    markers = [f"299.{uuid.uuid4().int % 10**9}" for _ in range(2)]

    def run(marker: str, jailed: bool) -> None:
        metric = metric_file(DETACHING.format(marker=marker, loop=loop))
        if loop:
            with pytest.raises(CustomMetricFailure) as caught:
                _score(metric, small, jailed=jailed, monkeypatch=monkeypatch, timeout=6)
            assert caught.value.kind == "timeout"
            assert "grandchild running: True" in caught.value.host_message
        else:
            assert _score(metric, small, jailed=jailed, monkeypatch=monkeypatch) == 1.0

    run(markers[0], jailed=False)
    survivors = processes_with_argument(markers[0], settle_seconds=0)
    for pid in survivors:  # the breach the jail closes: clean it up by hand
        os.kill(pid, signal.SIGKILL)
    assert survivors, "without the jail the detached grandchild outlives the job"

    run(markers[1], jailed=True)
    assert processes_with_argument(markers[1]) == []


def test_the_metric_cannot_write_to_the_database(metric_file, small, tmp_path, monkeypatch):
    database = tmp_path / "data" / "podium.db"
    url = f"sqlite:///{database}"
    migrated(url)
    factory = make_session_factory(make_engine(url))
    with unit_of_work(factory) as session:
        create_user(session, name="host", role=Role.organiser, secret_key="k" * 32)

    def tokens() -> int:
        with unit_of_work(factory) as session:
            return int(session.scalar(select(func.count(ApiToken.id))) or 0)

    postgres = os.environ.get("PODIUM_TEST_DATABASE_URL", "").replace("+psycopg", "")
    metric = metric_file(f"""
        import sqlite3

        def score(solution, submission, row_id_column_name):
            done = 0.0
            try:
                connection = sqlite3.connect({str(database)!r}, timeout=2)
                connection.execute(
                    "INSERT INTO api_tokens (user_id, token_hash, prefix, created_at) "
                    "VALUES (1, lower(hex(randomblob(32))), 'forged', '2026-01-01 00:00:00')"
                )
                connection.commit()
                done += 1
            except sqlite3.Error:
                pass
            if {postgres!r}:
                try:
                    import psycopg
                    with psycopg.connect({postgres!r}, connect_timeout=3) as connection:
                        connection.execute("SELECT 1")
                    done += 10
                except Exception:
                    pass
            return done
    """)
    reached = 11.0 if postgres else 1.0
    before = tokens()
    assert _score(metric, small, jailed=False, monkeypatch=monkeypatch) == reached
    assert tokens() == before + 1
    assert _score(metric, small, jailed=True, monkeypatch=monkeypatch) == 0.0
    assert tokens() == before + 1
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_the_metric_runs_as_nobody_in_an_empty_environment(metric_file, small, monkeypatch):
    metric = metric_file("""
        import os

        def score(solution, submission, row_id_column_name):
            try:
                files = sorted(os.listdir("/job"))
            except OSError:
                files = []
            visible = files == ["answer_key", "job.json", "metric.py", "submission"]
            return float(os.getuid() == 65534 and visible and "PATH" in os.environ
                         and not any(name.startswith("PODIUM") for name in os.environ)
                         and len([p for p in os.listdir("/proc") if p.isdigit()]) <= 3)
    """)
    monkeypatch.setenv("PODIUM_SECRET_KEY", SECRET)
    assert _score(metric, small, jailed=True, monkeypatch=monkeypatch) == 1.0
    assert _score(metric, small, jailed=False, monkeypatch=monkeypatch) == 0.0


RMSE = b"""
def score(solution, submission, row_id_column_name):
    diff = solution["y"].astype(float) - submission["y"].astype(float)
    return float((diff ** 2).mean() ** 0.5)
"""
KEY = csv_bytes(["id", "y"], ["a", 1.0], ["b", 2.0])


def _upload_metric(client, headers):  # type: ignore[no-untyped-def]
    return client.put(
        f"{API}/competitions/own/custom-metric",
        files={"file": ("metric.py", RMSE, "text/x-python")},
        data={"direction": "minimize"},
        headers=headers,
    )


def test_without_a_jail_a_metric_upload_is_refused_naming_bubblewrap(client, host, monkeypatch):
    create_competition(client, host.headers, "own", metric={"name": "custom"})
    _no_jail(monkeypatch)
    response = _upload_metric(client, host.headers)
    assert response.status_code == 409, response.text
    detail = response.json()["detail"]
    assert "custom metrics are disabled on this server" in detail
    assert "bubblewrap (bwrap) is not installed" in detail


def test_without_a_jail_scoring_fails_for_the_host_and_refunds(client, host, alice, monkeypatch):
    create_competition(client, host.headers, "own", metric={"name": "custom"})
    assert upload_key(client, host.headers, "own", KEY).status_code == 201
    assert _upload_metric(client, host.headers).status_code == 200
    _no_jail(monkeypatch)  # bubblewrap went away after the metric was accepted
    response = submit(client, alice.headers, csv_bytes(["id", "y"], ["a", 1], ["b", 2]), "own")
    submission = response.json()["id"]
    mine = client.get(f"{API}/submissions/{submission}", headers=alice.headers).json()
    theirs = client.get(f"{API}/submissions/{submission}", headers=host.headers).json()
    assert mine["status"] == "failed" and "bubblewrap" not in mine["error"]
    assert "bubblewrap (bwrap) is not installed" in theirs["host_error"]


def test_the_development_opt_out_runs_metrics_without_a_jail(client, host, settings, monkeypatch):
    create_competition(client, host.headers, "own", metric={"name": "custom"})
    assert upload_key(client, host.headers, "own", KEY).status_code == 201
    _no_jail(monkeypatch)
    settings.custom_metric_unjailed = True
    assert _upload_metric(client, host.headers).status_code == 200


def test_the_opt_out_is_refused_in_production():
    with pytest.raises(ValueError, match="PODIUM_CUSTOM_METRIC_UNJAILED"):
        Settings(env="production", secret_key="p" * 40, custom_metric_unjailed=True)
