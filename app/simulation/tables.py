"""Where an episode's environment steps: in this process (one of ``kaggle-environments``' own,
trusted code of a pinned package) or in a jail of its own (a host's environment, their code).
Both answer the same few questions, so the episode loop (:mod:`app.simulation.episode`) does not
know which it plays on."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.jail.bwrap import APP_ROOT, CODE_DIR
from app.simulation.environments import ENVIRONMENT_LOCK, EnvironmentConfig, make
from app.simulation.jailed import (
    AgentGone,
    AgentLimits,
    AgentTimeout,
    JailedPipe,
)

ENV_DIR = "/kaggle_simulations/environment"
_RUNNER = (str(APP_ROOT / "app" / "simulation" / "env_inside.py"), f"{CODE_DIR}/environment.py")
# A host's environment: its own jail, with room for a large replay in its last answer.
ENVIRONMENT_LIMITS = AgentLimits(
    memory_mb=2048, max_processes=16, max_answer_bytes=128 * 1024**2, load_seconds=60
)
STEP_SECONDS = 60.0  # one step of a host's interpreter, at most


@dataclass(frozen=True)
class Failed:
    """An agent's action that did not come: ``kind`` is ``error`` or ``timeout``."""

    kind: str
    message: str


class EnvironmentFailed(Exception):
    """The host's environment failed (raised, hung, answered nonsense): the episode does not
    count, and the message says why (for the host)."""


class LocalTable:
    """One of ``kaggle-environments``' environments, stepped in this process."""

    def __init__(self, config: EnvironmentConfig) -> None:
        self.env = make(config)
        self.configuration: dict[str, Any] = dict(self.env.configuration)

    def reset(self, agents: int, overage: float | None) -> None:
        with ENVIRONMENT_LOCK:
            self.env.reset(agents)
            if overage is not None:
                for state in self.env.state:
                    state.observation.remainingOverageTime = overage

    @property
    def done(self) -> bool:
        return bool(self.env.done)

    def status(self, index: int) -> str:
        return str(self.env.state[index].status)

    def observation(self, index: int) -> Any:
        return self.env._Environment__get_shared_state(index).observation  # what Kaggle sends

    def step(self, actions: list[Any], logs: list[dict[str, Any]]) -> None:
        from kaggle_environments.errors import DeadlineExceeded

        converted = [
            (DeadlineExceeded(a.message) if a.kind == "timeout" else RuntimeError(a.message))
            if isinstance(a, Failed)
            else a
            for a in actions
        ]
        with ENVIRONMENT_LOCK:
            self.env.step(converted, logs)

    def finish(self) -> tuple[dict[str, Any], list[Any]]:
        with ENVIRONMENT_LOCK:
            return self.env.toJSON(), list(self.env.logs)

    def close(self) -> str:
        return ""


class JailedTable:
    """A host's environment in a jail of its own, asked over its pipes."""

    def __init__(self, folder: Path, config: EnvironmentConfig) -> None:
        self.pipe = JailedPipe(
            _RUNNER,
            {"env_dir": ENV_DIR, "name": config.name, "configuration": config.configuration},
            ENVIRONMENT_LIMITS,
            files={ENV_DIR: folder},
            dirs=["/kaggle_simulations"],
            chdir=ENV_DIR,
            hostname="podium-environment",
            who="the environment",
        )
        ready = self._answer(None, ENVIRONMENT_LIMITS.load_seconds)
        self.configuration = dict(ready.get("configuration") or {})
        self.players = int(ready.get("players") or 0)
        self._state: dict[str, Any] = {"done": True, "statuses": [], "observations": []}

    def _answer(self, message: Any, seconds: float) -> dict[str, Any]:
        try:
            if message is None:
                reply = self.pipe._read(_deadline(seconds))
            else:
                reply = self.pipe.ask(message, seconds=seconds)
        except (AgentGone, AgentTimeout) as exc:
            raise EnvironmentFailed(str(exc)) from None
        if "error" in reply:
            raise EnvironmentFailed(str(reply["error"])[:4000])
        return reply

    def reset(self, agents: int, overage: float | None) -> None:
        self._state = self._answer(
            {"op": "reset", "agents": agents, "overage": overage}, STEP_SECONDS
        )
        self._check(agents)

    def _check(self, agents: int) -> None:
        state = self._state
        statuses, observations = state.get("statuses"), state.get("observations")
        if not (
            isinstance(statuses, list)
            and isinstance(observations, list)
            and len(statuses) == len(observations) == agents
            and all(isinstance(o, dict) for o in observations)
        ):
            raise EnvironmentFailed("the environment's state has not one entry per agent")

    @property
    def done(self) -> bool:
        return bool(self._state.get("done"))

    def status(self, index: int) -> str:
        return str(self._state["statuses"][index])

    def observation(self, index: int) -> Any:
        return _Struct(self._state["observations"][index])

    def step(self, actions: list[Any], logs: list[dict[str, Any]]) -> None:
        sent = [
            {a.kind: a.message} if isinstance(a, Failed) else None if a is None else {"value": a}
            for a in actions
        ]
        agents = len(self._state.get("statuses") or [])
        self._state = self._answer({"op": "step", "actions": sent, "logs": logs}, STEP_SECONDS)
        self._check(agents)

    def finish(self) -> tuple[dict[str, Any], list[Any]]:
        reply = self._answer({"op": "finish"}, STEP_SECONDS)
        replay = reply.get("replay")
        if not isinstance(replay, dict) or not isinstance(replay.get("steps"), list):
            raise EnvironmentFailed("the environment's replay is not Kaggle's JSON")
        return replay, list(reply.get("logs") or [])

    def html_renderer(self) -> str:
        return str(self._answer({"op": "render"}, STEP_SECONDS).get("html_renderer") or "")

    def close(self) -> str:
        return self.pipe.close().text()


class _Struct(dict):  # type: ignore[type-arg]
    """An observation as the loop reads it (``.remainingOverageTime``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _deadline(seconds: float) -> float:
    import time

    return time.monotonic() + seconds


def inspect_environment(folder: Path, config: EnvironmentConfig) -> dict[str, Any]:
    """Make a host's environment in the jail and reset it for its players: its configuration
    (defaults filled in) and players, or :class:`EnvironmentFailed` naming what went wrong."""
    table = JailedTable(folder, config)
    try:
        if table.players < 1:
            raise EnvironmentFailed("the specification's 'agents' names no number of players")
        table.reset(table.players, None)
        json.dumps(table.configuration)
        return {"configuration": table.configuration, "players": table.players}
    finally:
        table.close()
