"""A host's own environment, in the jail, for one episode: the environment's specification,
interpreter and renderer (``kaggle-environments``' interface, as its own environments are
written) made into ``kaggle_environments.Environment`` and stepped on the host's request.

Started only by :class:`app.simulation.tables.JailedTable` as ``python -I
/podium/environment.py JOB`` inside the jail, as the jail's user; it reads the host's files from
``/kaggle_simulations/environment`` (``<name>.json``, ``<name>.py`` defining ``interpreter`` and
``renderer``, and optionally ``html_renderer`` or a ``<name>.js``). One JSON line each way per
request: ``reset``, ``step`` (the agents' actions: a value, or a failure the host saw), and
``finish`` (the replay). A failure of the host's code is an ``{"error"}`` answer, never the
server's.
"""

import json
import os
import sys
import traceback
from typing import Any

# The runners' shared half, bound beside this file in the jail (app.jail.bwrap.RUNNER_CODE).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app.jail import inside as jail  # noqa: E402

_MESSAGE_CHARS = 4000


def _send(fd: int, message: dict[str, Any]) -> None:
    jail.send_line(fd, message, default=str, unsendable="the environment's answer is not JSON")


def _load(folder: str, name: str, configuration: dict[str, Any]) -> Any:
    from kaggle_environments.core import Environment

    with open(os.path.join(folder, f"{name}.json"), encoding="utf-8") as fh:
        specification = json.load(fh)
    namespace: dict[str, Any] = {"__name__": f"podium_environment_{name}"}
    source_path = os.path.join(folder, f"{name}.py")
    with open(source_path, encoding="utf-8") as fh:
        exec(compile(fh.read(), source_path, "exec"), namespace)  # noqa: S102 - in the jail
    script = os.path.join(folder, f"{name}.js")
    html = namespace.get("html_renderer")
    if not callable(html):
        text = open(script, encoding="utf-8").read() if os.path.exists(script) else "() => {}"
        html = lambda: text  # noqa: E731 - the renderer's script, as kaggle's envs return it
    return Environment(
        specification=specification,
        configuration=configuration,
        interpreter=namespace["interpreter"],
        renderer=namespace.get("renderer") or (lambda state, env: ""),
        html_renderer=html,
    )


def _summary(env: Any) -> dict[str, Any]:
    shared = env._Environment__get_shared_state  # what Kaggle sends each agent
    return {
        "done": env.done,
        "statuses": [s.status for s in env.state],
        "observations": [shared(i).observation for i in range(len(env.state))],
        "steps": len(env.steps),
    }


def _actions(env: Any, sent: list[Any]) -> list[Any]:
    from kaggle_environments.errors import DeadlineExceeded

    actions: list[Any] = []
    for item in sent:
        if not isinstance(item, dict):
            actions.append(None)
        elif "timeout" in item:
            actions.append(DeadlineExceeded(str(item["timeout"])))
        elif "error" in item:
            actions.append(RuntimeError(str(item["error"])))
        else:
            actions.append(item.get("value"))
    return actions


def _serve(env: Any, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    if op == "reset":
        env.reset(int(request["agents"]))
        if request.get("overage") is not None:
            for state in env.state:
                state.observation.remainingOverageTime = float(request["overage"])
        return _summary(env)
    if op == "step":
        env.step(_actions(env, request["actions"]), list(request.get("logs") or []))
        return _summary(env)
    if op == "finish":
        return {"replay": env.toJSON(), "logs": env.logs}
    if op == "render":
        return {"html_renderer": env.html_renderer()}
    return {"error": f"unknown request {op!r}"}


def _setup(job: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    try:
        env = _load(job["env_dir"], job["name"], job.get("configuration") or {})
        players = max(int(n) for n in env.specification.agents)
    except BaseException as exc:  # noqa: BLE001 - the host's code: its failure is the answer
        text = "".join(traceback.format_exception(exc))[-_MESSAGE_CHARS:]
        return None, {"error": f"the environment could not be made: {text}"}
    return env, {"ready": True, "configuration": dict(env.configuration), "players": players}


def _answer(env: Any, request: dict[str, Any]) -> dict[str, Any]:
    try:
        return _serve(env, request)
    except BaseException as exc:  # noqa: BLE001 - the host's interpreter raised
        text = "".join(traceback.format_exception(exc))[-_MESSAGE_CHARS:]
        return {"error": f"the environment failed: {text}"}


def main(argv: list[str]) -> int:
    return jail.converse(argv, _setup, _answer, send=_send)


if __name__ == "__main__":
    jail.exit_now(main(sys.argv))
