"""A fork bomb in a custom metric: the jail's process limit stops it, the job fails with a reason
for the host only, nothing of it outlives the job, and the server keeps answering.

The attack is capped so that it is safe for this machine when nothing stops it: a bounded number
of ``sleep`` processes, each of which ends by itself. Without the jail (the development opt-out,
as root, where no process limit holds) it holds them all, which proves the probe would see a
breach.
"""

import os
import signal
import uuid

import pytest

from app.custom_metrics import sandbox
from app.custom_metrics.jail import JailUnavailable
from app.custom_metrics.sandbox import (
    GENERIC_FAILURE,
    CustomMetricFailure,
    SandboxLimits,
    run_custom_metric,
)
from tests.custom_metrics.processes import processes_with_argument
from tests.helpers import API, create_competition, upload_key

FORK_BOMB = """
import os


def score(solution, submission, row_id_column_name):
    held = 0
    for _ in range({attempts}):
        if os.fork() == 0:
            try:
                os.execv("/bin/sleep", ["sleep", "{marker}"])
            finally:
                os._exit(1)
        held += 1
    return float(held)
"""


def _marker() -> str:
    return f"40.{uuid.uuid4().int % 10**9}"  # seconds: each process ends by itself


@pytest.fixture
def small(csv_file):  # type: ignore[no-untyped-def]
    key = csv_file("key.csv", ["id", "y"], [["a", 1.0], ["b", 2.0]])
    sub = csv_file("sub.csv", ["id", "y"], [["a", 1.0], ["b", 2.0]])
    return key, sub


def _run(metric, small, *, limits: SandboxLimits):  # type: ignore[no-untyped-def]
    return run_custom_metric(
        metric_path=metric,
        answer_key=small[0],
        submission=small[1],
        id_column=None,
        params={},
        limits=limits,
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="without the jail, a non-root user's limit holds")
def test_without_the_jail_the_capped_fork_bomb_holds_every_process(metric_file, small, monkeypatch):
    marker = _marker()
    metric = metric_file(FORK_BOMB.format(attempts=300, marker=marker))

    def unavailable() -> None:
        raise JailUnavailable("bubblewrap (bwrap) is not installed")

    monkeypatch.setattr(sandbox, "check_jail", unavailable)
    try:
        limits = SandboxLimits(timeout_seconds=60, max_processes=64, allow_unjailed=True)
        assert _run(metric, small, limits=limits).score == 300.0
    finally:
        for pid in processes_with_argument(marker, settle_seconds=0):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(("attempts", "limit"), [(300, 64), (2000, 256)])
def test_in_the_jail_a_fork_bomb_stops_at_the_limit_and_leaves_nothing(
    metric_file, small, attempts, limit
):
    marker = _marker()
    metric = metric_file(FORK_BOMB.format(attempts=attempts, marker=marker))
    with pytest.raises(CustomMetricFailure) as caught:
        _run(metric, small, limits=SandboxLimits(timeout_seconds=60, max_processes=limit))
    failure = caught.value
    assert failure.kind == "processes", failure.host_message
    assert f"limit of {limit} processes and threads" in failure.host_message
    assert failure.participant_message == GENERIC_FAILURE  # the reason is for the host only
    assert processes_with_argument(marker, settle_seconds=5) == []


def test_a_fork_bomb_metric_is_refused_at_upload_and_the_server_keeps_serving(client, host, alice):
    create_competition(client, host.headers, slug="own", metric={"name": "custom"})
    assert upload_key(client, host.headers, "own").status_code == 201
    marker = _marker()
    response = client.put(
        f"{API}/competitions/own/custom-metric",
        files={"file": ("metric.py", FORK_BOMB.format(attempts=2000, marker=marker).encode())},
        data={"direction": "maximize"},
        headers=host.headers,
    )
    assert response.status_code == 422, response.text
    assert "processes and threads" in response.json()["detail"]
    assert processes_with_argument(marker, settle_seconds=5) == []
    assert client.get(f"{API}/competitions", headers=alice.headers).status_code == 200
    assert client.get(f"{API}/competitions/own", headers=alice.headers).status_code == 200


SYSTEM_PYTHON = "/usr/bin/python3"  # under /usr: reachable by the jail's unprivileged uid
HOLD = """
import os, resource, sys
resource.setrlimit(resource.RLIMIT_NPROC, (32, 32))
held = 0
try:
    for _ in range(300):
        if os.fork() == 0:
            try:
                os.execv("/bin/sleep", ["sleep", sys.argv[1]])
            finally:
                os._exit(1)
        held += 1
except BlockingIOError:
    pass
print(held)
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON), reason="a root server's jail"
)
def test_a_jail_started_unprivileged_holds_its_process_limit_under_a_root_server(monkeypatch):
    """The mechanism a root server uses where it can (the Docker image): bubblewrap started as
    uid 65534, so that RLIMIT_NPROC holds in the jail; and not as root, where it does not."""
    import subprocess

    from app.custom_metrics import jail
    from app.custom_metrics.jail import jail_command, jail_user

    monkeypatch.setattr(jail, "_python_dirs", lambda: [])  # the system's Python, under /usr
    held = {}
    for drop in (True, False):
        marker = _marker()
        command = jail_command([SYSTEM_PYTHON, "-S", "-c", HOLD, marker], files={}, env={})
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=60, **jail_user(drop=drop)
        )
        if drop and done.returncode != 0:
            pytest.skip(f"no unprivileged user namespaces here: {done.stderr.strip()}")
        assert done.returncode == 0, done.stderr
        held[drop] = int(done.stdout)
        assert processes_with_argument(marker, settle_seconds=5) == []
    assert held[True] < 32 and held[False] == 300
