"""An agent as Kaggle takes it: a ``main.py`` whose last function is the agent, or a zip holding
``main.py`` at its root (its other files beside it, importable and readable). Checked at upload
and unpacked for an episode with :mod:`app.coderun.code`'s budgets (size, entries, unpacked
bytes, names, links); a notebook is not an agent."""

from pathlib import Path, PurePosixPath

from app.coderun.code import ENTRY_SCRIPT, InvalidCode, check_code, unpack_code

AGENT_SUFFIXES = (".py", ".zip")


def check_agent(filename: str, data: bytes, *, max_bytes: int) -> None:
    """Refuse an upload no episode could load, naming why (:class:`InvalidCode`)."""
    _entry(filename, check_code(_named(filename), data, max_bytes=max_bytes))


def unpack_agent(filename: str, data: bytes, dest: Path, *, max_bytes: int) -> None:
    """Write the agent's files into the empty folder ``dest``, its entry as ``main.py``."""
    _entry(filename, unpack_code(_named(filename), data, dest, max_bytes=max_bytes))


def _named(filename: str) -> str:
    # A single script is the agent's main.py whatever it was called (Kaggle's submission.py).
    return ENTRY_SCRIPT if PurePosixPath(filename.lower()).suffix == ".py" else filename


def _entry(filename: str, entry: object) -> None:
    if getattr(entry, "kind", None) != "script" or getattr(entry, "path", None) != ENTRY_SCRIPT:
        raise InvalidCode(
            f"'{filename[:100]}' is not an agent: send a main.py whose last function is the "
            "agent, or a .zip with main.py at its root (a notebook is not an agent)"
        )
