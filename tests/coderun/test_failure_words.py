"""A crashed run says why in the participant's own words (the exception's last line), and its log
names Kaggle's paths, never the server's (issue 42)."""

import sys

import pytest

from app.coderun.limits import CodeLimits
from app.coderun.outcome import RunLog
from app.coderun.verdict import Facts, last_exception, verdict

LIMITS = CodeLimits(wall_seconds=5, memory_mb=256, cpus=1, working_mb=16)
TRACEBACK = b"""reading...
Traceback (most recent call last):
  File "/kaggle/code/main.py", line 4, in <module>
    y = train["target"]
        ~~~~~^^^^^^^^^^
KeyError: 'target'
"""


def _exited(log: bytes, code: int = 1):  # type: ignore[no-untyped-def]
    facts = Facts(
        timed_out=False,
        oom_kills=0,
        returncode=code,
        received=0,
        log=RunLog(b"", log, len(log)),
        memory_by_rlimit=False,
    )
    return verdict({"status": "exited", "code": code}, facts, limits=LIMITS, max_output_bytes=10)


def test_a_failure_names_the_exceptions_last_line():
    found = _exited(TRACEBACK)
    assert found.failure == "runtime_error"
    assert found.message == "the code raised KeyError: 'target' (exit status 1)"


def test_the_last_of_chained_tracebacks_and_none_without_one():
    chained = TRACEBACK + (
        b"\nDuring handling of the above exception, another exception occurred:\n\n"
        b'Traceback (most recent call last):\n  File "/kaggle/code/main.py", line 6\n'
        b"ValueError: no target column\n"
    )
    assert last_exception(RunLog(b"", chained, len(chained))) == "ValueError: no target column"
    assert last_exception(RunLog(b"just output\n", b"", 12)) is None
    assert _exited(b"just output\n", 3).message == "the code exited with status 3"


@pytest.mark.slow
def test_a_crash_inside_a_library_shows_kaggle_paths_and_its_exception(run):  # type: ignore[no-untyped-def]
    outcome = run(
        """
        import pandas as pd
        frame = pd.DataFrame({"x": [1, 2]})
        print(frame["target"])
        """
    )
    assert outcome.failure == "runtime_error"
    assert outcome.message.startswith("the code raised KeyError: 'target'")
    log = outcome.log.text()
    assert 'File "/kaggle/code/main.py"' in log
    # pandas' own frames: under /kaggle/lib/python, never the server's install or venv.
    assert "/kaggle/lib/python/" in log and "pandas" in log
    for server_path in {sys.prefix, sys.base_prefix}:
        assert server_path not in log
