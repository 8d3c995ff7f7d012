"""Run the `podium` command's ``main()`` in this process, as a shell would run the console
script: its arguments, an environment, a working directory, and back its exit status, stdout and
stderr. A new Python process costs seconds of CPU importing the app; the suite runs the command
hundreds of times, so only the tests about the process itself (the installed script, an
interpreter without an extra, a server) start one.

What an in-process run cannot show: state a real process sets up when a module is imported, or
once per process, stays as this test process made it.

- The password hasher is chosen by ``PODIUM_ENV`` when ``app.auth.passwords`` is imported: under
  the suite's ``PODIUM_ENV=test``. A run given another ``PODIUM_ENV`` (or none) that hashes a
  password still hashes at the test cost; :func:`run_main` warns (:class:`InProcessDifference`)
  when a run does. tests/auth/test_passwords.py proves the real wiring in a process.
- Caches kept per process (the jail's self-test, the settings of other modules' own
  ``functools.cache``) answer as they did first in this process; only ``get_settings`` is
  cleared around each run.
- Logging: a command that configures it (``podium worker``, ``beat``) puts a handler on the root
  logger writing to the run's captured stderr, which is closed once the run ends; every later
  log line of this process would print "Logging error". :func:`restored_logging` puts the root
  logger back as it was; :func:`run_main` runs inside it.
"""

import logging
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn
from unittest import mock

from typer.testing import CliRunner

from app.auth import passwords
from app.cli import commands
from app.config import get_settings


class InProcessDifference(UserWarning):
    """An in-process run did something a real process would have done differently."""


@contextmanager
def restored_logging() -> Iterator[None]:
    """Put the root logger back as it was: its handlers (those added meanwhile closed), its
    level and the global ``logging.disable`` level."""
    root = logging.getLogger()
    handlers, level, disabled = list(root.handlers), root.level, logging.root.manager.disable
    try:
        yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.disable(disabled)


class _CountingHasher:
    """The imported hasher, counting the hashes made through it."""

    def __init__(self, hasher: Any) -> None:
        self._hasher = hasher
        self.hashed = 0

    def hash(self, password: str) -> str:
        self.hashed += 1
        return str(self._hasher.hash(password))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hasher, name)


def run_main(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``podium ARGS`` with exactly ``env`` as its environment (None: this process's own) and
    ``stdin`` piped in."""
    settings: dict[str, str | None] = {}
    if env is not None:
        settings = {k: None for k in os.environ if k not in env}
        settings.update(env)
    before = Path.cwd()
    hasher = _CountingHasher(passwords._hasher)
    with (
        restored_logging(),
        mock.patch.object(passwords, "_hasher", hasher),
        CliRunner().isolation(input=stdin, env=settings) as (out, err, _),
        mock.patch.object(sys, "argv", ["podium", *args]),
        mock.patch.object(commands, "_leave", _raise_exit),
    ):
        get_settings.cache_clear()  # read from this run's environment, as a new process would
        if cwd is not None:
            os.chdir(cwd)
        try:
            commands.main()
            code = 0
        except SystemExit as leaving:
            code = leaving.code if isinstance(leaving.code, int) else 1
        finally:
            os.chdir(before)
            get_settings.cache_clear()
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    _warn_of_differences(env, hasher.hashed)
    return subprocess.CompletedProcess(["podium", *args], code, stdout, stderr)


def _warn_of_differences(env: Mapping[str, str] | None, hashed: int) -> None:
    imported = os.environ.get("PODIUM_ENV")
    given = imported if env is None else env.get("PODIUM_ENV")
    if hashed and (given == "test") != (imported == "test"):
        warnings.warn(
            f"this run hashed {hashed} password(s) with the hasher imported under "
            f"PODIUM_ENV={imported or '(unset)'}; a process started with "
            f"PODIUM_ENV={given or '(unset)'} would hash at another cost",
            InProcessDifference,
            stacklevel=3,
        )


def _raise_exit(code: int) -> NoReturn:
    # main() leaves through os._exit (a one-shot process skips the interpreter's teardown).
    raise SystemExit(code)
