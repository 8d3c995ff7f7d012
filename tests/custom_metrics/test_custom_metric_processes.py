"""A fork bomb in a custom metric: the jail's process limit stops it, the job fails with a reason
for the host only, nothing of it outlives the job, and the server keeps answering.

The attack is capped so that it is safe for this machine when nothing stops it: a bounded number
of ``sleep`` processes, each of which ends by itself. Without the jail (the development opt-out,
as root, where no process limit holds) it holds them all, which proves the probe would see a
breach.
"""

import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from app.custom_metrics import sandbox
from app.custom_metrics.sandbox import (
    GENERIC_FAILURE,
    CustomMetricFailure,
    SandboxLimits,
    run_custom_metric,
)
from app.jail import bwrap as jail
from app.jail.bwrap import JailUnavailable, check_jail, jail_command, jail_user
from tests.conftest import skip_or_fail
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


def _as_root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("a root server's jail: this test runs as root (as CI's container does)")


def test_a_capped_fork_bomb_holds_every_process_unjailed_and_stops_at_each_jails_limit(
    metric_file, small, monkeypatch
):
    """The control and the jails in one test: without the jail (the development opt-out, with
    a process limit far past the attack's) the capped fork bomb holds all its processes; in the
    jail it stops at the limit, at two limits, and in the root-made jail (the fallback where the
    uid-65534 jail cannot start), whose limit is a pids control group of its own (RLIMIT_NPROC
    does not hold there)."""
    marker = _marker()
    metric = metric_file(FORK_BOMB.format(attempts=300, marker=marker))

    def unavailable() -> None:
        raise JailUnavailable("bubblewrap (bwrap) is not installed")

    with monkeypatch.context() as unjailed:
        unjailed.setattr(sandbox, "check_jail", unavailable)
        try:
            limits = SandboxLimits(timeout_seconds=60, max_processes=4096, allow_unjailed=True)
            assert _run(metric, small, limits=limits).score == 300.0
        finally:
            for pid in processes_with_argument(marker, settle_seconds=0):
                os.kill(pid, signal.SIGKILL)

    for attempts, limit in ((300, 64), (2000, 256)):
        _fork_bomb_stops_at_the_limit(metric_file, small, attempts, limit)

    _as_root()
    if jail._cgroup_base() is None:
        skip_or_fail("no pids control group can be made here (cgroup v1 pids or a writable v2)")
    monkeypatch.setattr(jail, "_passed", ["root-made"])
    _fork_bomb_stops_at_the_limit(metric_file, small, 300, 64)


def _fork_bomb_stops_at_the_limit(metric_file, small, attempts: int, limit: int) -> None:  # type: ignore[no-untyped-def]
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


def test_a_jail_started_unprivileged_holds_its_process_limit_under_a_root_server():
    """The mechanism a root server uses: bubblewrap started as uid 65534 (this interpreter's
    install bound in for it where uid 65534 may not reach it), so that RLIMIT_NPROC holds in
    the jail; and not as root, where it does not."""
    _as_root()
    held = {}
    for drop in (True, False):
        marker = _marker()
        command = jail_command(
            [sys.executable, "-S", "-c", HOLD, marker], files={}, env={}, drop=drop
        )
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=60, **jail_user(drop=drop)
        )
        if drop and done.returncode != 0:
            skip_or_fail(f"the unprivileged jail cannot start here: {done.stderr.strip()}")
        assert done.returncode == 0, done.stderr
        held[drop] = int(done.stdout)
        assert processes_with_argument(marker, settle_seconds=5) == []
    assert held[True] < 32 and held[False] == 300


# The metric starts one process the test watches from outside (its owner on this machine, then
# killed by the test to let the metric go on), then forks until the kernel refuses.
WATCHED_THEN_BOMB = """
import os


def score(solution, submission, row_id_column_name):
    watched = os.fork()
    if watched == 0:
        try:
            os.execv("/bin/sleep", ["sleep", "{watched}"])
        finally:
            os._exit(1)
    os.waitpid(watched, 0)  # until the test has seen it and killed it
    held = 0
    try:
        for _ in range({attempts}):
            if os.fork() == 0:
                try:
                    os.execv("/bin/sleep", ["sleep", "{marker}"])
                finally:
                    os._exit(1)
            held += 1
    except BlockingIOError:  # the kernel's refusal: RLIMIT_NPROC
        pass
    return float(held)
"""


def _real_uid(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:  # this machine's view: the uid outside every namespace
        line = next(line for line in fh if line.startswith("Uid:"))
    return int(line.split()[1])


def _owner_and_held(metric_file, small, *, attempts: int, limit: int) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    """Run the metric in the jail; return the real uid of its watched process, and its score."""
    watched, marker = _marker(), _marker()
    metric = metric_file(
        WATCHED_THEN_BOMB.format(watched=watched, marker=marker, attempts=attempts)
    )
    result: dict[str, object] = {}

    def run() -> None:
        try:
            limits = SandboxLimits(timeout_seconds=90, max_processes=limit)
            result["score"] = _run(metric, small, limits=limits).score
        except Exception as exc:  # handed to the test's thread below
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        deadline, found = time.monotonic() + 60, []  # a hang guard: the jail starts in ~1 s
        while not found and thread.is_alive() and time.monotonic() < deadline:
            found = processes_with_argument(watched, settle_seconds=0)
            time.sleep(0.02)
        assert found, f"the metric's watched process never appeared: {result}"
        owner = _real_uid(found[0])
        os.kill(found[0], signal.SIGKILL)
        thread.join(timeout=90)
        assert not thread.is_alive(), "the metric did not end after its watched process was killed"
    finally:
        for pid in processes_with_argument(watched, settle_seconds=0):
            os.kill(pid, signal.SIGKILL)
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    assert processes_with_argument(marker, settle_seconds=5) == []
    return owner, float(result["score"])  # type: ignore[arg-type]


def test_a_root_servers_metric_runs_as_uid_65534_and_rlimit_nproc_caps_its_fork_bomb(
    metric_file, small, monkeypatch
):
    """End to end, through ``run_custom_metric`` as the server calls it: under a root server the
    metric's processes belong to uid 65534 on this machine, and its fork bomb stops at the limit
    by RLIMIT_NPROC alone (no control group is made). The same attack in the root-made jail,
    with no control group, holds every process and runs as root: the probe sees the difference.
    """
    _as_root()
    check_jail()
    if not jail.unprivileged():
        skip_or_fail(
            "the uid-65534 jail cannot start here (are unprivileged user namespaces off? "
            "/proc/sys/user/max_user_namespaces); custom metrics fall back to a root-made jail"
        )
    cgroups: list[int] = []
    real_pids_cgroup = sandbox.pids_cgroup
    monkeypatch.setattr(
        sandbox, "pids_cgroup", lambda limit: cgroups.append(limit) or real_pids_cgroup(limit)
    )
    owner, held = _owner_and_held(metric_file, small, attempts=300, limit=64)
    assert owner == 65534
    assert 0 < held < 64
    assert cgroups == [68]  # asked for, and none made: the kernel's limit did it
    assert jail.pids_cgroup(68) is None

    # The control: the root-made jail without its control group.
    monkeypatch.setattr(jail, "_passed", ["root-made"])
    monkeypatch.setattr(sandbox, "pids_cgroup", lambda limit: None)
    owner, held = _owner_and_held(metric_file, small, attempts=300, limit=64)
    assert owner == 0
    assert held == 300


def test_a_stage_directory_others_may_write_to_is_refused(tmp_path, monkeypatch):
    """The staged mount points lie in a shared directory: one that another user made or may write
    to could swap what the jail binds in, so the uid-65534 jail refuses it (and the server falls
    back to the root-made jail, as check_jail logs)."""
    _as_root()
    monkeypatch.setattr(jail.tempfile, "gettempdir", lambda: str(tmp_path))
    stage = tmp_path / "podium-jail-stage"
    stage.mkdir(mode=0o755)
    assert jail._stage() == stage  # root's own, written by root only
    stage.chmod(0o777)
    with pytest.raises(JailUnavailable, match="only root may write to"):
        jail._stage()
    stage.chmod(0o755)
    os.chown(stage, 65534, 65534)
    with pytest.raises(JailUnavailable, match="only root may write to"):
        jail._stage()
    stage.rmdir()
    stage.symlink_to(tmp_path)
    with pytest.raises(JailUnavailable, match="only root may write to"):
        jail._stage()
