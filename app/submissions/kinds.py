"""What a phase takes: a predictions file, or code to run. An upload of the other kind is a 422
that says which kind the phase takes, decided by the file's name before anything is stored or
charged (and, for a ``.zip``, by what it holds)."""

from pathlib import Path, PurePosixPath

from app.coderun.code import InvalidCode, check_code
from app.errors import Unprocessable
from app.models import Phase
from app.simulation.agents import AGENT_SUFFIXES, check_agent

CODE_SUFFIXES = (".py", ".ipynb")  # a .zip may be either: a zipped CSV or a zipped program
_CODE_WORDS = "code: a Python script (.py), a Jupyter notebook (.ipynb) or a .zip with main.py"


def _suffix(filename: str) -> str:
    return PurePosixPath(filename.lower().replace("\\", "/")).suffix


def refuse_other_kind(phase: Phase, filename: str) -> None:
    """A 422 for a file that is plainly of the kind the phase does not take."""
    suffix = _suffix(filename)
    if phase.takes_agents:
        if suffix not in AGENT_SUFFIXES:
            raise wrong_kind(phase, f"'{filename[:100]}' is not an agent")
        return
    if phase.takes_code and suffix not in (*CODE_SUFFIXES, ".zip"):
        raise wrong_kind(phase, f"'{filename[:100]}' looks like a predictions file")
    if not phase.takes_code and suffix in CODE_SUFFIXES:
        raise wrong_kind(phase, f"'{filename[:100]}' is code")


def wrong_kind(phase: Phase, what: str) -> Unprocessable:
    if phase.takes_agents:
        return Unprocessable(
            f"{what}; the phase '{phase.name}' takes an agent: a main.py whose last function is "
            "the agent, or a .zip with main.py at its root",
            extra={"kind": "wrong_submission_kind", "phase_takes": phase.submission_kind},
        )
    takes = (
        f"{_CODE_WORDS} or one notebook at its root, which runs on the competition's data and "
        "writes submission.csv"
        if phase.takes_code
        else "a predictions file (CSV, optionally .gz or .zip); it does not run code"
    )
    return Unprocessable(
        f"{what}; the phase '{phase.name}' takes {takes}",
        extra={"kind": "wrong_submission_kind", "phase_takes": phase.submission_kind},
    )


def checked_code(path: Path, filename: str, *, max_bytes: int) -> None:
    """Refuse code no run could start (bad notebook, zip without main.py ...), naming why."""
    try:
        check_code(filename, path.read_bytes(), max_bytes=max_bytes)
    except InvalidCode as exc:
        raise Unprocessable(str(exc), extra={"kind": "invalid_code"}) from None


def checked_agent(path: Path, filename: str, *, max_bytes: int) -> None:
    """Refuse an agent no episode could load (no main.py, a notebook, a bad zip), naming why."""
    try:
        check_agent(filename, path.read_bytes(), max_bytes=max_bytes)
    except InvalidCode as exc:
        raise Unprocessable(str(exc), extra={"kind": "invalid_code"}) from None


def is_code(path: Path, filename: str, *, max_bytes: int) -> bool:
    """Whether a file refused as predictions would run as code (a zipped program)."""
    if _suffix(filename) != ".zip" or path.stat().st_size > max_bytes:
        return False
    try:
        check_code(filename, path.read_bytes(), max_bytes=max_bytes)
    except InvalidCode:
        return False
    return True
