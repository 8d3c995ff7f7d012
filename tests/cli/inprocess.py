"""Run the `podium` command's ``main()`` in this process, as a shell would run the console
script: its arguments, an environment, a working directory, and back its exit status, stdout and
stderr. A new Python process costs seconds of CPU importing the app; the suite runs the command
hundreds of times, so only the tests about the process itself (the installed script, an
interpreter without an extra, a server) start one."""

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn
from unittest import mock

from typer.testing import CliRunner

from app.cli import commands
from app.config import get_settings


def run_main(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``podium ARGS`` with exactly ``env`` as its environment (None: this process's own)."""
    settings: dict[str, str | None] = {}
    if env is not None:
        settings = {k: None for k in os.environ if k not in env}
        settings.update(env)
    before = Path.cwd()
    with (
        CliRunner().isolation(env=settings) as (out, err, _),
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
    return subprocess.CompletedProcess(["podium", *args], code, stdout, stderr)


def _raise_exit(code: int) -> NoReturn:
    # main() leaves through os._exit (a one-shot process skips the interpreter's teardown).
    raise SystemExit(code)
