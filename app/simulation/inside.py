"""One agent's side in the jail, for a whole episode: load the agent as Kaggle does, then answer
each observation with an action, one JSON line each way.

Started only by :class:`app.simulation.jailed.JailedAgent` as ``python -I /podium/agent.py JOB``,
inside the jail, as the jail's user (JOB: the job as JSON, written by the server). It imports
nothing of the server and not ``kaggle_environments`` either (half a second per agent per
episode): the two helpers it needs, Kaggle's ``Struct`` and its "last callable" loader, are
copied here with their behaviour. It limits itself first (the limits pass to all it starts).

Its protocol, over two pipes it was given (not stdin/stdout, which stay the agent's to print to):
the host writes ``{"observation": ..., "configuration": ...}`` per step; this side answers
``{"action": ..., "stdout": ..., "stderr": ...}`` or ``{"error": "...", ...}`` (the agent
raised). The first line either way is the load: ``{"ready": true}`` or ``{"error": ...}``. What
the agent prints during a step is kept as Kaggle keeps it (the first ``maxLogLength``
characters); what it writes past Python's streams reaches the host's bounded log reader. The
skeleton (job in, limits, one line out per line in) is :func:`app.jail.inside.converse`, shared
with a host's environment; this file is the agent's adapter.
"""

import os
import sys
import traceback
from typing import Any

# The runners' shared half, bound beside this file in the jail (app.jail.bwrap.RUNNER_CODE).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app.jail import inside as jail  # noqa: E402

_MESSAGE_CHARS = 2000


class Struct(dict):  # type: ignore[type-arg]
    """``kaggle_environments.utils.Struct``: a dict whose keys read as attributes."""

    def __init__(self, **entries: Any) -> None:
        entries = {k: v for k, v in entries.items() if k != "items"}
        dict.__init__(self, entries)
        self.__dict__.update(entries)

    def __setattr__(self, attr: str, value: Any) -> None:
        self.__dict__[attr] = value
        self[attr] = value


def structify(value: Any) -> Any:
    """``kaggle_environments.utils.structify``: dicts (nested) become :class:`Struct`."""
    if isinstance(value, list):
        return [structify(item) for item in value]
    if isinstance(value, dict):
        return Struct(**{k: structify(v) for k, v in value.items()})
    return value


class _Capped:
    """A text stream keeping its first ``limit`` characters: an agent printing megabytes in a
    step costs no memory here (Kaggle keeps the first ``maxLogLength`` characters too)."""

    def __init__(self, limit: int | None) -> None:
        self.limit, self.parts, self.kept = limit, [], 0

    def write(self, text: str) -> int:
        text = str(text)
        if self.limit is None:
            self.parts.append(text)
        elif self.kept < self.limit:
            piece = text[: self.limit - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def value(self) -> str:
        return "".join(self.parts)


def load_agent(path: str) -> Any:
    """``kaggle_environments.agent.get_last_callable``: run ``main.py`` with its folder on the
    path and take the last callable it defined (its last function, as Kaggle documents)."""
    with open(path, encoding="utf-8") as fh:
        raw = fh.read()
    namespace: dict[str, Any] = {}
    sys.path.append(os.path.dirname(path))
    exec(compile(raw, path, "exec"), namespace)  # noqa: S102 - the agent, in the jail
    found = [v for v in namespace.values() if callable(v)]
    if not found:
        raise ValueError("main.py defines no function: its last function is the agent")
    return found[-1]


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as plain JSON values (an agent returning ``np.int64(3)``)."""
    for method in ("item", "tolist"):
        convert = getattr(value, method, None)
        if callable(convert):
            return convert()
    raise TypeError(f"the action is a {type(value).__name__}, which is not JSON")


def _send(fd: int, message: dict[str, Any]) -> None:
    jail.send_line(fd, message, default=_plain, unsendable="the action cannot be sent")


def _act(agent: Any, message: dict[str, Any], log_chars: int | None) -> dict[str, Any]:
    observation = structify(message["observation"])
    configuration = structify(message["configuration"])
    args: list[Any] = [observation, configuration]
    code = getattr(agent, "__code__", None)
    if code is not None:  # as Kaggle calls it: as many arguments as the function takes
        args = args[: code.co_argcount]
    out, err = _Capped(log_chars), _Capped(log_chars)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    try:
        try:
            action = agent(*args)
            reply: dict[str, Any] = {"action": action}
        except Exception as exc:  # noqa: BLE001 - the agent's own failure: it loses, says why
            traceback.print_exc(file=err)  # type: ignore[arg-type]
            reply = {"error": f"{type(exc).__name__}: {exc}"[:_MESSAGE_CHARS]}
    finally:
        sys.stdout, sys.stderr = saved
    reply["stdout"], reply["stderr"] = out.value(), err.value()
    return reply


def _setup(job: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    try:
        os.chdir(job["agent_dir"])
        agent = load_agent(os.path.join(job["agent_dir"], "main.py"))
    except BaseException as exc:  # noqa: BLE001 - a SystemExit at import is a failed load too
        traceback.print_exc()
        return None, {"error": f"the agent could not be loaded: {type(exc).__name__}: {exc}"}
    return (agent, job.get("log_chars")), {"ready": True}


def _answer(state: tuple[Any, int | None], message: dict[str, Any]) -> dict[str, Any]:
    agent, log_chars = state
    return _act(agent, message, log_chars)


def main(argv: list[str]) -> int:
    return jail.converse(argv, _setup, _answer, send=_send)


if __name__ == "__main__":
    jail.exit_now(main(sys.argv))
