"""Each rule that names a run's failure, from what the host saw and the runner reported."""

import pytest

from app.coderun.limits import CodeLimits
from app.coderun.outcome import RunLog, RunnerError
from app.coderun.verdict import Facts, read_status, verdict

LIMITS = CodeLimits(wall_seconds=5, memory_mb=256, cpus=1, working_mb=16)


def _facts(**changes: object) -> Facts:
    seen: dict[str, object] = {
        "timed_out": False,
        "oom_kills": 0,
        "returncode": 0,
        "received": 0,
        "log": RunLog(b"", b"", 0),
        "memory_by_rlimit": False,
    }
    seen.update(changes)
    return Facts(**seen)  # type: ignore[arg-type]


def _judge(status: dict[str, object] | None, **facts: object):  # type: ignore[no-untyped-def]
    return verdict(status, _facts(**facts), limits=LIMITS, max_output_bytes=1000)


def test_a_file_received_whole_is_a_success_even_at_the_deadline():
    found = _judge({"status": "delivered", "bytes": 12}, received=12, timed_out=True)
    assert found.failure is None and found.exit_code == 0


def test_a_file_cut_short_is_not_taken():
    assert _judge({"status": "delivered", "bytes": 12}, received=5).failure == "runtime_error"
    assert _judge({"status": "delivered", "bytes": 12}, received=None).failure == "output_too_large"


def test_the_clock_comes_before_everything_else():
    found = _judge(None, timed_out=True, oom_kills=1)
    assert found.failure == "timeout" and "5 s" in found.message


def test_an_oom_kill_is_memory_whatever_the_code_said():
    assert _judge({"status": "exited", "code": -9}, oom_kills=1).failure == "memory"
    assert _judge(None, oom_kills=2).failure == "memory"


def test_a_memory_error_counts_only_where_rlimit_as_is_the_limit():
    log = RunLog(b"", b"Traceback ...\nMemoryError\n", 30)
    status = {"status": "exited", "code": 1}
    assert _judge(status, log=log, memory_by_rlimit=True).failure == "memory"
    # With a memory group, a MemoryError the code raised itself is its own error.
    assert _judge(status, log=log, memory_by_rlimit=False).failure == "runtime_error"


def test_a_full_working_space_is_output_too_large():
    found = _judge({"status": "exited", "code": 1, "working_full": True})
    assert found.failure == "output_too_large" and "16 MB" in found.message


def test_exit_statuses_and_signals_are_named():
    assert _judge({"status": "exited", "code": 2}).message == "the code exited with status 2"
    assert _judge({"status": "exited", "code": -11}).message == "the code was killed by SIGSEGV"
    assert _judge(None, returncode=-9).exit_code == -9


def test_a_cells_error_names_the_cell():
    found = _judge({"status": "cell_error", "cell": 4, "ename": "ValueError", "evalue": "bad"})
    assert (found.failure, found.cell) == ("runtime_error", 4)
    assert found.message == "code cell 4 raised ValueError: bad"
    memory = _judge({"status": "cell_error", "cell": 2, "ename": "MemoryError", "evalue": ""})
    assert memory.failure == "memory"


def test_no_file_and_too_large_a_file():
    assert _judge({"status": "no_output"}).failure == "no_output"
    found = _judge({"status": "output_too_large", "bytes": 5000})
    assert found.failure == "output_too_large" and "1000 bytes" in found.message


def test_the_status_channel_is_read_defensively():
    assert read_status(b"") is None
    assert read_status(b"[1, 2]") is None
    assert read_status(b'{"status": "no_output"}') == {"status": "no_output"}


def test_a_dead_kernel_is_memory_only_under_an_address_space_limit():
    status = {"status": "kernel_died"}
    assert _judge(status, memory_by_rlimit=True).failure == "memory"
    assert _judge(status, memory_by_rlimit=False).failure == "runtime_error"


def test_a_failure_of_the_runner_itself_is_the_platforms():
    with pytest.raises(RunnerError, match="Kernel didn't respond"):
        _judge({"status": "wrapper_error", "message": "RuntimeError: Kernel didn't respond"})
    # ... but not when the clock or the memory limit explains it.
    assert _judge({"status": "wrapper_error"}, timed_out=True).failure == "timeout"
    assert _judge({"status": "wrapper_error"}, oom_kills=1).failure == "memory"
