"""The one runner of untrusted code (app.jail.runner.run_jailed with app.jail.inside.serve), by
itself: each budget and limit named in its verdict, and attacks tried once outside the jail (the
development opt-out's plain child) and then inside, where they fail."""

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from app.jail.bwrap import APP_ROOT, CODE_DIR, RUNNER_CODE, JailUnavailable, check_jail
from app.jail.cgroups import run_cgroup
from app.jail.runner import JailSpec, Verdict, limits_for_job, run_jailed
from tests.conftest import skip_or_fail

# A kind's runner in a few lines: the shared skeleton, and the test's own act as its "code".
RUNNER = """
import json, sys
job = json.loads(sys.argv[1])
sys.path.insert(0, job["code_path"])
from app.jail import inside

def run(job):
    scope = {"job": job, "result": {"status": "ok"}}
    exec(job["act"], scope)
    return scope["result"]

inside.exit_now(inside.serve(sys.argv, run))
"""
MIB = 1024**2


@pytest.fixture(scope="module")
def jail() -> None:
    try:
        check_jail()
    except JailUnavailable as exc:
        skip_or_fail(f"the jail cannot run here: {exc}")


def _run(act: str, *, jailed: bool = True, **spec: Any) -> Verdict:
    job = {"act": act, "code_path": CODE_DIR if jailed else str(APP_ROOT)}
    job.update(spec.pop("job", {}))
    return run_jailed(
        JailSpec(
            command=[sys.executable, "-I", "-S", "-c", RUNNER],
            job=job,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"} if jailed else dict(os.environ),
            wall_seconds=spec.pop("wall_seconds", 30),
            code=RUNNER_CODE,
            jailed=jailed,
            **spec,
        )
    )


def test_a_run_reports_over_its_status_pipe_and_hands_back_its_file(jail: None, tmp_path: Path):
    out = tmp_path / "out.bin"
    ran = _run(
        "import os\nos.write(job['output_fd'], b'a file')\n"
        "print('to the log')\nresult = {'status': 'ok', 'n': 3}",
        output=(out, MIB),
    )
    assert ran.killed is None and ran.exit == 0
    assert ran.status == {"status": "ok", "n": 3}
    assert ran.output_bytes == 6 and out.read_bytes() == b"a file"
    assert ran.log.text() == "to the log\n"


def test_the_runners_own_failure_still_reaches_the_host(jail: None):
    ran = _run("raise ValueError('broken runner')")
    assert ran.killed is None
    assert ran.status == {"status": "runner_error", "message": "ValueError: broken runner"}


def test_the_wall_limit_kills_the_run_and_is_named_time(jail: None):
    ran = _run("import time\ntime.sleep(60)", wall_seconds=1)
    assert ran.killed == "time" and ran.timed_out
    assert ran.status is None


def test_a_status_past_its_budget_is_dropped_and_named_output(jail: None):
    ran = _run("result = {'status': 'x' * 200_000}", status_bytes=64 * 1024)
    assert ran.killed == "output"
    assert ran.status is None


def test_a_file_past_its_budget_is_dropped_and_named_output(jail: None, tmp_path: Path):
    out = tmp_path / "out.bin"
    act = "import os\nfor _ in range(4):\n    os.write(job['output_fd'], b'x' * (1 << 20))"
    ran = _run(act, output=(out, MIB))
    assert ran.killed == "output"
    assert ran.output_bytes is None
    assert out.stat().st_size <= MIB


def test_a_flood_of_prints_keeps_the_logs_head_and_tail(jail: None):
    act = "import sys\nsys.stdout.write('h' * 5000 + 'm' * (4 << 20) + 't' * 5000)"
    ran = _run(act, log_head=1000, log_tail=2000)
    assert ran.killed is None and ran.status == {"status": "ok"}
    assert ran.log.total_bytes == (4 << 20) + 10_000
    assert ran.log.head == b"h" * 1000 and ran.log.tail == b"t" * 2000
    assert "bytes of output left out" in ran.log.text()


def test_the_memory_groups_kill_is_named_memory(jail: None):
    group = run_cgroup(memory_bytes=256 * MIB + 128 * MIB, cpus=1.0, processes=64)
    if group is None or "memory" not in group.held:
        if group is not None:
            group.remove()
        skip_or_fail("no memory control group can be made here (root and cgroups)")
    job = limits_for_job(group, max_processes=56, address_space=256 * MIB)
    assert job == {"max_processes": None, "address_space": None}  # the groups hold both
    ran = _run("hog = b'x' * (1 << 30)", group=group, job=job)
    assert ran.killed == "memory" and ran.oom_kills >= 1
    assert "memory" in ran.held


# The attacks: the same act outside the jail (a plain child, as the custom metric's development
# opt-out runs) succeeds, and inside fails.
FORK = """
import os, time
started = 0
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    started += 1
result = {"status": "ok", "started": started}
"""


def test_a_fork_bomb_holds_every_process_outside_and_stops_at_the_limit_inside(jail: None):
    outside = _run(FORK, jailed=False)
    assert outside.status == {"status": "ok", "started": 40}
    job = limits_for_job(None, max_processes=8, address_space=4096 * MIB)
    inside = _run(FORK, job=job)
    assert inside.status is not None and inside.status["status"] == "ok"
    assert inside.status["started"] < 8


def test_a_server_file_and_secret_are_read_outside_and_are_not_there_inside(
    jail: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    monkeypatch.setenv("PODIUM_SECRET_KEY", "s3cret-key")
    act = f"""
import os
try:
    seen = open({str(secret)!r}).read()
except OSError:
    seen = None
result = {{"status": "ok", "file": seen, "env": os.environ.get("PODIUM_SECRET_KEY")}}
"""
    outside = _run(act, jailed=False)
    assert outside.status == {"status": "ok", "file": "s3cret", "env": "s3cret-key"}
    inside = _run(act)
    assert inside.status == {"status": "ok", "file": None, "env": None}


def test_the_network_is_reached_outside_and_not_inside(jail: None):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    act = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    reached = True
except OSError:
    reached = False
result = {{"status": "ok", "reached": reached}}
"""
    try:
        assert _run(act, jailed=False).status == {"status": "ok", "reached": True}
        assert _run(act).status == {"status": "ok", "reached": False}
    finally:
        listener.close()


def test_the_job_reaches_the_runner_with_its_pipes_named(jail: None):
    ran = _run("result = {'status': 'ok', 'keys': sorted(job)}", job={"extra": 1})
    assert ran.status is not None
    assert ran.status["keys"] == ["act", "code_path", "extra", "status_fd"]
    assert json.dumps(ran.status)  # the report is plain JSON
