"""Participants' code in the real jail: a script, a notebook and a zip each produce their file, and
each attack is contained and named, with the next run normal.

Every attack is first run as a plain subprocess (``outside``), where it works: that proves the
probe would see a breach. The jailed run then must fail (or be cleaned up) and say why.
"""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from app.coderun import runner
from app.coderun.limits import CodeLimits
from tests.coderun.conftest import (
    EXPECTED,
    WRITE_SUBMISSION,
    assert_normal,
    make_zip,
)
from tests.conftest import skip_or_fail
from tests.custom_metrics.processes import processes_with_argument

SECRET = f"s3cret-{uuid.uuid4().hex}"
TIGHT = CodeLimits(wall_seconds=2, memory_mb=128, cpus=1, working_mb=16)


def _marker() -> str:
    return f"60.{uuid.uuid4().int % 10**9}"  # seconds: each process ends by itself


# --- what a participant sends ------------------------------------------------------------------


def test_a_script_writes_its_submission(run):
    outcome = run(WRITE_SUBMISSION)
    assert_normal(outcome)
    assert outcome.exit_code == 0
    assert outcome.kaggle_words is None
    assert len(outcome.provenance.code_sha256) == 64
    assert outcome.enforced["working"] == "tmpfs"


def test_the_same_code_on_the_same_inputs_gives_the_same_file_and_provenance(run):
    first, second = run(WRITE_SUBMISSION), run(WRITE_SUBMISSION)
    assert first.output is not None and second.output is not None
    assert first.output.read_bytes() == second.output.read_bytes()
    assert first.provenance == second.provenance
    changed = run(WRITE_SUBMISSION + "\n# another version\n")
    assert changed.provenance.code_sha256 != first.provenance.code_sha256
    assert changed.provenance.inputs_sha256 == first.provenance.inputs_sha256


def _notebook(*sources: str) -> bytes:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# A Kaggle notebook")] + [
        nbformat.v4.new_code_cell(source) for source in sources
    ]
    return nbformat.writes(notebook).encode()


def test_a_notebook_runs_top_to_bottom_and_writes_its_submission(run):
    outcome = run(
        _notebook(
            "import os\nimport pandas as pd\nprint('cells run in', os.getcwd())",
            "test = pd.read_csv(os.environ['PODIUM_INPUT_DIR'] + '/test.csv')\n"
            "test['y'] = [0.5] * len(test)",
            "test.to_csv('submission.csv', index=False)",
        ),
        name="solution.ipynb",
    )
    assert_normal(outcome)
    assert "cells run in /kaggle/working" in outcome.log.text()  # cell output reaches the log


def test_a_failing_cell_fails_the_run_with_its_traceback(run):
    outcome = run(
        _notebook(
            "open('submission.csv', 'w').write('id,y\\n')",
            "def predict():\n    return {}['missing']\n",
            "predict()",
            "print('never reached')",
        ),
        name="solution.ipynb",
    )
    assert outcome.failure == "runtime_error"
    assert outcome.cell == 3
    assert "code cell 3 raised KeyError" in outcome.message
    assert outcome.kaggle_words == "Notebook Threw Exception"
    log = outcome.log.text()
    assert "KeyError" in log and "predict()" in log and "never reached" not in log
    assert outcome.output is None  # the file the first cell wrote is not taken


HELPERS = """
import os
import pandas as pd


def predictions():
    test = pd.read_csv(os.path.join(os.environ["PODIUM_INPUT_DIR"], "test.csv"))
    test["y"] = [0.5] * len(test)
    return test
"""


def test_a_zip_runs_main_py_with_its_own_modules(run):
    archive = make_zip(
        {
            "main.py": "from helpers import predictions\n"
            "predictions().to_csv('submission.csv', index=False)\n",
            "helpers.py": HELPERS,
        }
    )
    assert_normal(run(archive, name="solution.zip"))


def test_a_zip_with_one_notebook_runs_it(run):
    archive = make_zip(
        {
            "solution.ipynb": _notebook(
                "from helpers import answer\nopen('submission.csv', 'w').write(answer())"
            ),
            "helpers.py": f"def answer():\n    return {EXPECTED!r}\n",
        }
    )
    assert_normal(run(archive, name="bundle.zip"))


def test_an_exit_status_is_a_runtime_error_naming_it(run):
    outcome = run("import sys\nprint('about to fail')\nsys.exit(3)\n")
    assert outcome.failure == "runtime_error"
    assert outcome.exit_code == 3
    assert "exited with status 3" in outcome.message
    assert "about to fail" in outcome.log.text()


def test_no_submission_file_is_no_output(run):
    outcome = run("print('forgot to write it')\n")
    assert outcome.failure == "no_output"
    assert outcome.kaggle_words == "Submission CSV Not Found"


def test_a_submission_past_the_upload_limit_is_output_too_large(run):
    outcome = run(
        "open('submission.csv', 'w').write('id,y\\n' + 'a,1\\n' * 1000)\n", max_output_bytes=1000
    )
    assert outcome.failure == "output_too_large"
    assert outcome.output is None


# Which descriptors past stdin, stdout and stderr the code holds, and whether it can write to one.
OPEN_DESCRIPTORS = """
import os
held = []
for fd in range(3, 256):
    try:
        os.fstat(fd)
    except OSError:
        continue
    held.append(fd)
print("held:", held)
for fd in held:
    try:
        os.write(fd, b'{"status": "delivered", "bytes": 0}')
        print("wrote to", fd)
    except OSError:
        pass
"""


def test_the_code_holds_none_of_the_runners_pipes(run, outside):
    # Outside, a descriptor handed down is there to write to: the probe sees it.
    read_end, write_end = os.pipe()
    script = Path(os.environ.get("TMPDIR", "/tmp")) / f"probe-{uuid.uuid4().hex}.py"
    script.write_text(OPEN_DESCRIPTORS)
    try:
        done = subprocess.run(
            [sys.executable, str(script)],
            pass_fds=(write_end,),
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        script.unlink()
        os.close(write_end)
        os.close(read_end)
    assert f"wrote to {write_end}" in done.stdout
    # In the jail, the runner's status and output pipes stay the runner's.
    outcome = run(OPEN_DESCRIPTORS + textwrap.dedent(WRITE_SUBMISSION))
    assert_normal(outcome)
    assert "held: []" in outcome.log.text(), outcome.log.text()


def test_the_log_keeps_its_head_and_its_tail(run):
    outcome = run(
        "import sys\nfor i in range(40000):\n    print(f'line {i:06d}')\n"
        + "open('submission.csv', 'w').write('id,y\\n')\n"
    )
    text = outcome.log.text()
    assert outcome.log.total_bytes == 40000 * 12
    assert "line 000000" in text and "line 039999" in text
    assert "line 020000" not in text and "bytes of output left out" in text


# --- the environment, the layout, the files ------------------------------------------------------

SEE_ALL = """
    import json, os
    print(json.dumps({
        "env": sorted(os.environ),
        "uid": os.getuid(),
        "input": sorted(os.listdir("/kaggle/input")),
        "files": sorted(os.listdir(os.environ["PODIUM_INPUT_DIR"])),
        "processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
        "root_writable": os.access("/", os.W_OK),
        "input_writable": os.access(os.environ["PODIUM_INPUT_DIR"], os.W_OK),
        "python_writable": os.access(os.path.dirname(os.__file__), os.W_OK),
        "tmp": os.listdir("/tmp"),
    }))
    open("submission.csv", "w").write("id,y\\n")
"""


# What the same code sees as a plain process (no /kaggle there): the control.
SEE_OUTSIDE = """
    import json, os
    print(json.dumps({
        "env": sorted(os.environ),
        "uid": os.getuid(),
        "processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
        "python_writable": os.access(os.path.dirname(os.__file__), os.W_OK),
    }))
"""


def test_the_code_sees_kaggles_layout_as_nobody_in_an_empty_environment(run, outside, monkeypatch):
    import json

    monkeypatch.setenv("PODIUM_SECRET_KEY", SECRET)
    # Outside, the server's environment, its user and every process of the machine are there.
    control = outside(SEE_OUTSIDE)
    plain = json.loads(control.stdout.strip().splitlines()[-1])
    assert "PODIUM_SECRET_KEY" in plain["env"] and plain["uid"] != 65534
    assert plain["processes"] > 4
    outcome = run(SEE_ALL)
    assert outcome.failure is None, outcome.log.text()
    seen = json.loads(outcome.log.text().strip().splitlines()[-1])
    # LC_CTYPE: Python's own coercion of the C locale inside the jail (PEP 538), nothing inherited.
    assert set(seen["env"]) - {"LC_CTYPE"} == {"HOME", "PATH", "PODIUM_INPUT_DIR"}
    assert seen["uid"] == 65534
    assert seen["input"] == ["demo"] and seen["files"] == ["test.csv"]
    assert seen["processes"] <= 4  # bubblewrap's init, the runner, the code (and its shell)
    assert not seen["root_writable"] and not seen["input_writable"]
    assert not seen["python_writable"]


@pytest.fixture
def server_like(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A process holding the server's secrets in its environment, and a data directory with the
    competition's answer key beside its data files."""
    key = tmp_path / "data" / "answer-keys" / "1" / "key.csv"
    key.parent.mkdir(parents=True)
    key.write_text(f"id,y\nprivate-row,{SECRET}\n")
    env = {**os.environ, "PODIUM_SECRET_KEY": SECRET}
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], env=env, start_new_session=True
    )
    try:
        yield process.pid, key
    finally:
        process.kill()
        process.wait()


def test_the_code_cannot_read_the_answer_key_data_directory_environ_or_server_environment(
    run, outside, server_like, data_dir, monkeypatch
):
    pid, key = server_like
    sibling = data_dir / "answer_key.csv"  # beside the data file the run is given
    sibling.write_text(f"id,y\nhidden,{SECRET}\n")
    monkeypatch.setenv("PODIUM_SECRET_KEY", SECRET)
    attack = f"""
        import os

        def attempt(what, read):
            try:
                if {SECRET!r} in read():
                    print("BREACH", what)
            except OSError as exc:
                print("blocked", what, type(exc).__name__)

        attempt("answer key", lambda: open({str(key)!r}).read())
        attempt("beside the data", lambda: open({str(sibling)!r}).read())
        attempt("data directory", lambda: open(
            os.path.join({str(key.parents[2])!r}, "answer-keys", "1", "key.csv")).read())
        attempt("input folder", lambda: "".join(
            open(os.path.join(os.environ.get("PODIUM_INPUT_DIR", "."), n)).read()
            for n in os.listdir(os.environ.get("PODIUM_INPUT_DIR", "."))))
        attempt("server environ", lambda: open("/proc/{pid}/environ", "rb").read().decode())
        attempt("/proc/1/environ", lambda: open("/proc/1/environ", "rb").read().decode())
        attempt("own environment", lambda: repr(dict(os.environ)))
        for p in os.listdir("/proc"):
            if p.isdigit():
                attempt("environ of " + p,
                        lambda: open(f"/proc/{{p}}/environ", "rb").read().decode())
        open("submission.csv", "w").write("id,y\\n")
    """
    control = outside(attack)
    for what in (
        "answer key",
        "beside the data",
        "data directory",
        "server environ",
        "own environment",
    ):
        assert f"BREACH {what}" in control.stdout, control.stdout + control.stderr
    outcome = run(attack)
    log = outcome.log.text()
    assert outcome.failure is None, log
    assert "BREACH" not in log and SECRET not in log
    assert "blocked answer key FileNotFoundError" in log
    assert "blocked server environ FileNotFoundError" in log  # another PID namespace


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP port on 127.0.0.1 (the server's stand-in) and the connections it accepted."""
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


CONNECT = """
    import socket
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("BREACH connected to {port}")
    open("submission.csv", "w").write("id,y\\n")
"""


def test_the_code_cannot_reach_the_servers_port(run, outside, listener):
    port, accepted = listener
    control = outside(CONNECT.format(port=port))
    assert f"BREACH connected to {port}" in control.stdout and len(accepted) == 1
    outcome = run(CONNECT.format(port=port))
    assert outcome.failure == "runtime_error"
    assert "ConnectionRefusedError" in outcome.log.text()  # its own, empty loopback
    assert len(accepted) == 1


def test_the_code_cannot_reach_postgresql(run, outside):
    control = outside(CONNECT.format(port=5432))
    if control.returncode != 0:
        skip_or_fail(f"PostgreSQL is not listening on 127.0.0.1:5432: {control.stderr[-300:]}")
    assert "BREACH connected to 5432" in control.stdout
    outcome = run(CONNECT.format(port=5432))
    assert outcome.failure == "runtime_error"
    assert "BREACH" not in outcome.log.text()
    assert "ConnectionRefusedError" in outcome.log.text()


# --- resources: each limit stops its attack, and the next run is normal --------------------------


def test_the_wall_limit_stops_the_run_and_everything_it_started(run, outside):
    marker = _marker()
    attack = f"""
        import subprocess, time
        subprocess.Popen(["sleep", "{marker}"])
        while True:
            time.sleep(0.1)
    """
    with pytest.raises(subprocess.TimeoutExpired):
        outside(attack, timeout=2)  # nothing stops it by itself
    for pid in processes_with_argument(marker, settle_seconds=0):
        os.kill(pid, signal.SIGKILL)
    outcome = run(attack, limits=TIGHT)
    assert outcome.failure == "timeout"
    assert outcome.kaggle_words == "Notebook Timeout"
    assert "limit of 2 s" in outcome.message
    assert processes_with_argument(marker, settle_seconds=5) == []
    assert_normal(run(WRITE_SUBMISSION))


HOG = """
    held = []
    for _ in range({megabytes} // 64):
        held.append(b"x" * (64 * 1024 * 1024))  # written, so every page is really held
    print("BREACH held {megabytes} MB")
    open("submission.csv", "w").write("id,y\\n")
"""


def test_a_memory_hog_is_stopped_and_named(run, outside):
    control = outside(HOG.format(megabytes=512))
    assert "BREACH held 512 MB" in control.stdout
    outcome = run(HOG.format(megabytes=4096), limits=TIGHT.model_copy(update={"wall_seconds": 60}))
    assert outcome.failure == "memory", (outcome.message, outcome.log.text())
    assert outcome.kaggle_words == "Notebook Exceeded Allowed Compute"
    assert "BREACH" not in outcome.log.text()
    assert_normal(run(WRITE_SUBMISSION))


def test_without_a_memory_group_the_address_space_limit_names_the_hog(run, outside, monkeypatch):
    control = outside(HOG.format(megabytes=512))  # past the 128 MB limit: nothing stops it
    assert "BREACH held 512 MB" in control.stdout
    monkeypatch.setattr(runner, "run_cgroup", lambda **limits: None)
    outcome = run(HOG.format(megabytes=4096), limits=TIGHT.model_copy(update={"wall_seconds": 60}))
    assert outcome.enforced["memory"] == "rlimit_as"
    assert outcome.failure == "memory", (outcome.message, outcome.log.text())
    assert "MemoryError" in outcome.log.text()


FORK_BOMB = """
    import os
    held = 0
    for _ in range(300):
        if os.fork() == 0:
            try:
                os.execv("/bin/sleep", ["sleep", "{marker}"])
            finally:
                os._exit(1)
        held += 1
    print("BREACH held", held)
"""


def _fork_bomb_holds_300_outside(outside) -> None:  # type: ignore[no-untyped-def]
    """The control: as a plain process, the fork bomb holds all its 300 processes."""
    marker = _marker()
    control = outside(FORK_BOMB.format(marker=marker))
    # The parent prints once it has forked 300 times; its last children may not have exec'd
    # `sleep` yet (until then their command line is the parent's): wait for them to show.
    deadline = time.monotonic() + 10
    while len(survivors := processes_with_argument(marker, settle_seconds=0)) < 300:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert "BREACH held 300" in control.stdout and len(survivors) == 300


def test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing(run, outside):
    _fork_bomb_holds_300_outside(outside)
    marker = _marker()
    outcome = run(FORK_BOMB.format(marker=marker), max_processes=32)
    assert outcome.failure == "runtime_error"
    assert "BlockingIOError" in outcome.log.text() and "BREACH" not in outcome.log.text()
    assert processes_with_argument(marker, settle_seconds=5) == []
    assert_normal(run(WRITE_SUBMISSION))


WRITE = """
    written = 0
    with open("big.bin", "wb") as out:
        for _ in range({megabytes}):
            out.write(b"\\0" * (1024 * 1024))
            written += 1
    print("BREACH wrote", written, "MB")
"""


def test_a_10_gb_write_fills_only_the_working_space(run, outside, tmp_path):
    control = outside(
        WRITE.format(megabytes=2 * TIGHT.working_mb)
    )  # past working_mb: nothing stops it
    assert f"BREACH wrote {2 * TIGHT.working_mb} MB" in control.stdout
    assert (
        tmp_path / "outside-working" / "big.bin"
    ).stat().st_size == 2 * TIGHT.working_mb * 1024**2
    outcome = run(
        WRITE.format(megabytes=10 * 1024), limits=TIGHT.model_copy(update={"wall_seconds": 60})
    )
    assert outcome.failure == "output_too_large", (outcome.message, outcome.log.text())
    assert "filled its working space" in outcome.message and "16 MB" in outcome.message
    assert "No space left on device" in outcome.log.text()
    assert_normal(run(WRITE_SUBMISSION))


DETACH = """
    import os
    started, exec_done = os.pipe()
    if os.fork() == 0:
        os.setsid()  # its own session and process group: out of reach of a group kill
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{marker}"])
        os._exit(0)
    os.close(exec_done)
    os.read(started, 1)  # EOF once the grandchild has become sleep (the pipe closes on exec)
    open("submission.csv", "w").write({expected!r})
"""


def test_a_setsid_survivor_is_gone_after_the_run(run, outside):
    marker = _marker()
    control = outside(DETACH.format(marker=marker, expected=EXPECTED))
    assert control.returncode == 0, control.stderr
    survivors = processes_with_argument(marker, settle_seconds=0)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors, "outside the jail the detached grandchild outlives the script"

    marker = _marker()
    outcome = run(DETACH.format(marker=marker, expected=EXPECTED))
    assert_normal(outcome)
    assert processes_with_argument(marker, settle_seconds=5) == []
    assert_normal(run(WRITE_SUBMISSION))


def test_in_the_root_made_jail_the_pids_group_stops_a_fork_bomb(run, outside, monkeypatch):
    """Where the uid-65534 jail cannot start, the jail is made by root and RLIMIT_NPROC does not
    hold (its uid is root outside): the run's pids control group is then the limit."""
    if os.geteuid() != 0:
        skip_or_fail("a root server's fallback jail: this test runs as root (as CI's container)")
    from app.jail import bwrap, cgroups

    probe = cgroups._make_child("pids", f"podium-probe-{uuid.uuid4().hex}")
    if probe is None:
        skip_or_fail("no pids control group can be made here")
    probe.rmdir()
    _fork_bomb_holds_300_outside(outside)
    monkeypatch.setattr(bwrap, "_passed", ["root-made"])
    marker = _marker()
    outcome = run(FORK_BOMB.format(marker=marker), max_processes=32)
    assert outcome.enforced["processes"] == "cgroup"
    assert outcome.failure == "runtime_error"
    assert "BlockingIOError" in outcome.log.text() and "BREACH" not in outcome.log.text()
    assert processes_with_argument(marker, settle_seconds=5) == []


def test_without_control_groups_rlimit_nproc_stops_the_fork_bomb(run, outside, monkeypatch):
    _fork_bomb_holds_300_outside(outside)
    monkeypatch.setattr(runner, "run_cgroup", lambda **limits: None)
    marker = _marker()
    outcome = run(FORK_BOMB.format(marker=marker), max_processes=32)
    assert outcome.enforced["processes"] == "rlimit_nproc"
    assert outcome.failure == "runtime_error"
    assert "BlockingIOError" in outcome.log.text() and "BREACH" not in outcome.log.text()
    assert processes_with_argument(marker, settle_seconds=5) == []
