"""Running participants' code in the real jail, and the same code outside it (the control)."""

import io
import os
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from app.coderun.limits import CodeLimits
from app.coderun.outcome import CodeRunOutcome
from app.coderun.runner import InputFile, run_code
from app.jail.bwrap import JailUnavailable, check_jail
from tests.conftest import skip_or_fail

SLUG = "demo"
TEST_CSV = "id\na\nb\nc\n"
# Generous where the code ends by itself (it stops at its end, not at the limit: no timing is
# asserted), small where the limit is what is tested.
ROOMY = CodeLimits(wall_seconds=120, memory_mb=512, cpus=1, working_mb=32)


@pytest.fixture(scope="session")
def jail() -> None:
    """One self-test of the jail for the whole session (check_jail remembers it passed)."""
    try:
        check_jail()
    except JailUnavailable as exc:
        skip_or_fail(f"the jail cannot start here: {exc}")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """The competition's data files, and beside them an answer key the run must not see."""
    folder = tmp_path / "data" / "competitions" / SLUG
    folder.mkdir(parents=True)
    (folder / "test.csv").write_text(TEST_CSV)
    return folder


RunCode = Callable[..., CodeRunOutcome]


@pytest.fixture
def run(jail: None, tmp_path: Path, data_dir: Path) -> RunCode:
    """``run(source_or_bytes, name="main.py", limits=ROOMY, **options)``: the code's outcome."""
    made = iter(range(1, 1000))

    def go(
        source: str | bytes,
        name: str = "main.py",
        limits: CodeLimits = ROOMY,
        **options: object,
    ) -> CodeRunOutcome:
        number = next(made)
        folder = tmp_path / f"run-{number}"
        (folder / "out").mkdir(parents=True)
        code = folder / name
        code.write_bytes(source if isinstance(source, bytes) else textwrap.dedent(source).encode())
        arguments: dict[str, object] = {
            "code": code,
            "filename": name,
            "slug": SLUG,
            "inputs": [InputFile("test.csv", data_dir / "test.csv")],
            "limits": limits,
            "output_dir": folder / "out",
            "max_output_bytes": 10 * 1024**2,
            "max_code_bytes": 20 * 1024**2,
            **options,
        }
        return run_code(**arguments)  # type: ignore[arg-type]

    return go


@pytest.fixture
def outside(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``outside(source, timeout=30, env=None)``: the same script as a plain subprocess, in a
    working folder of its own, as the server's user: the control that proves an attack works
    where nothing stops it."""

    def go(
        source: str, *, timeout: float = 60, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        working = tmp_path / "outside-working"
        working.mkdir(exist_ok=True)
        script = tmp_path / "outside.py"
        script.write_text(textwrap.dedent(source))
        # Files, not pipes: a process the script leaves behind would hold a pipe open.
        with (
            open(tmp_path / "outside.out", "w+") as out,
            open(tmp_path / "outside.err", "w+") as err,
        ):
            done = subprocess.run(
                [sys.executable, str(script)],
                cwd=working,
                env=env if env is not None else dict(os.environ),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                timeout=timeout,
                check=False,
            )
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(done.args, done.returncode, out.read(), err.read())

    return go


def make_zip(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


WRITE_SUBMISSION = """
    import os
    import pandas as pd

    test = pd.read_csv(os.path.join(os.environ["PODIUM_INPUT_DIR"], "test.csv"))
    test["y"] = [0.5] * len(test)
    test.to_csv("submission.csv", index=False)
"""
EXPECTED = "id,y\na,0.5\nb,0.5\nc,0.5\n"


def assert_normal(outcome: CodeRunOutcome) -> None:
    assert outcome.failure is None, (outcome.failure, outcome.message, outcome.log.text())
    assert outcome.output is not None
    assert outcome.output.read_text() == EXPECTED
