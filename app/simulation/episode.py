"""One episode: the environment steps (here, or in a jail for a host's own), each agent answers
from its own jail.

The loop is ``kaggle_environments``' own ``Environment.run`` with the agents' side replaced by
jailed processes, and Kaggle's rules for them kept as ``kaggle_environments.agent.Agent.act``
states them: an agent is timed around its answer; an answer later than ``actTimeout`` plus its
remaining overage is a ``TIMEOUT`` (its jail is killed at that moment, not left running); the time
it took past ``actTimeout`` is taken from its overage by the environment; an exception is an
``ERROR``; an action the environment's schema refuses is ``INVALID``. The environment scores
them (``reward`` None for those three), exactly as on Kaggle. Each agent's prints per step are
kept as Kaggle keeps them (``maxLogLength`` characters, 1024 by default).
"""

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.coderun.outcome import RunLog
from app.simulation.environments import EnvironmentConfig
from app.simulation.jailed import AgentGone, AgentLimits, AgentTimeout, JailedAgent
from app.simulation.tables import Failed, JailedTable, LocalTable

# Time for the pipe and JSON both ways, above the agent's own budget, before its jail is killed:
# Kaggle's rule (duration past the budget is a TIMEOUT) still decides on the measured duration.
_SLACK_SECONDS = 0.05
_FAILED = ("ERROR", "TIMEOUT", "INVALID")


@dataclass
class AgentOutcome:
    """How one agent ended its episode: Kaggle's status and reward, why it failed (when it did),
    its per-step logs (Kaggle's ``{duration, stdout, stderr}``) and its process's own output."""

    status: str
    reward: float | None
    reason: str | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    process_log: str = ""

    @property
    def failed(self) -> bool:
        return self.status in _FAILED

    def log_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reward": self.reward,
            "reason": self.reason,
            "steps": self.steps,
            "process_output": self.process_log,
        }


@dataclass
class EpisodeOutcome:
    """The whole episode: Kaggle's replay JSON (``Environment.toJSON``), and each agent's end."""

    replay: dict[str, Any]
    agents: list[AgentOutcome]
    steps: int
    # The episode did not finish within runTimeout: not counted (Kaggle raises DeadlineExceeded).
    unfinished: str | None = None


def run_episode(
    environment: EnvironmentConfig,
    agent_dirs: list[Path],
    limits: AgentLimits,
    *,
    overage_seconds: float | None = None,
    hosted: Path | None = None,
) -> EpisodeOutcome:
    """Play one episode of ``environment`` between the agents in ``agent_dirs`` (each a folder
    with ``main.py``), in that order. ``hosted``: the folder of a host's own environment (run
    in a jail of its own), else ``environment`` is one of kaggle-environments'. Raises
    :class:`~app.jail.bwrap.JailUnavailable` where the jail cannot run here, and
    :class:`~app.simulation.tables.EnvironmentFailed` where a host's environment failed; every
    failure of an agent is an outcome. ``overage_seconds``: each agent's overage budget at the
    start, where the host sets one (else the environment's own ``remainingOverageTime``, 60 s
    for ConnectX)."""
    table: LocalTable | JailedTable = (
        JailedTable(hosted, environment) if hosted is not None else LocalTable(environment)
    )
    try:
        return _play(table, agent_dirs, limits, overage_seconds)
    finally:
        table.close()


def _play(
    table: "LocalTable | JailedTable",
    agent_dirs: list[Path],
    limits: AgentLimits,
    overage_seconds: float | None,
) -> EpisodeOutcome:
    configuration = table.configuration
    act_timeout = float(configuration.get("actTimeout", 6))
    log_chars = configuration.get("maxLogLength", 1024)
    table.reset(len(agent_dirs), overage_seconds)
    jailed: list[JailedAgent] = []
    reasons: list[str | None] = []
    sent: list[Any] = [None] * len(agent_dirs)  # each agent's last action, for an INVALID's reason
    try:
        for folder in agent_dirs:
            agent = JailedAgent(folder, limits, log_chars=log_chars)
            jailed.append(agent)
        for agent in jailed:  # each loads in its own jail, side by side
            reasons.append(_load(agent))
        began = time.monotonic()
        run_timeout = float(configuration.get("runTimeout", 1200))
        while not table.done and time.monotonic() - began < run_timeout:
            actions: list[Any] = []
            logs: list[dict[str, Any]] = []
            for index, agent in enumerate(jailed):
                if table.status(index) != "ACTIVE":
                    actions.append(None)
                    logs.append({})
                    continue
                if reasons[index] is not None:  # gone already: an ERROR at its turn
                    actions.append(Failed("error", str(reasons[index])))
                    logs.append({})
                    continue
                action, log, reason = _ask(agent, table, index, act_timeout, log_chars)
                reasons[index], sent[index] = reason, action
                actions.append(action)
                logs.append(log)
            table.step(actions, logs)
    finally:
        process_logs = [agent.close() for agent in jailed]
    unfinished = None
    if not table.done:
        unfinished = (
            f"the episode did not end within runTimeout ({configuration.get('runTimeout')} s)"
        )
    replay, step_logs = table.finish()
    last = replay["steps"][-1] if replay.get("steps") else []
    outcomes = []
    for index in range(len(agent_dirs)):
        state = last[index] if index < len(last) and isinstance(last[index], dict) else {}
        status = str(state.get("status", "ERROR"))
        reward = state.get("reward")
        steps = [
            dict(logs[index]) if isinstance(logs, list) and index < len(logs) else {}
            for logs in step_logs[1:]
        ]
        reason = reasons[index] if status in _FAILED else None
        if status == "INVALID" and reason is None:
            reason = f"the environment refused its action {_shown(sent[index])}"
        outcomes.append(
            AgentOutcome(
                status=status,
                reward=reward if isinstance(reward, int | float) else None,
                reason=reason,
                steps=steps,
                process_log=_text(process_logs[index]),
            )
        )
    return EpisodeOutcome(replay, outcomes, len(replay.get("steps") or []), unfinished)


def _load(agent: JailedAgent) -> str | None:
    try:
        agent.ready()
    except AgentTimeout:
        return f"the agent did not load within {agent.limits.load_seconds:g} s"
    except AgentGone as exc:
        return str(exc)
    return None


def _ask(
    agent: JailedAgent,
    table: "LocalTable | JailedTable",
    index: int,
    act_timeout: float,
    log_chars: int | None,
) -> tuple[Any, dict[str, Any], str | None]:
    """One agent's action for this step, its step log and, when it failed, why."""
    observation = table.observation(index)
    remaining = float(observation.get("remainingOverageTime", 0) or 0)
    budget = act_timeout + remaining
    started = time.perf_counter()
    reply: dict[str, Any] = {}
    reason = None
    try:
        reply = agent.act(observation, table.configuration, seconds=budget + _SLACK_SECONDS)
        action: Any = reply.get("action")
        if "error" in reply:
            reason = f"the agent raised {reply['error']}"
            action = Failed("error", reason)
    except AgentTimeout:
        reason = (
            f"the agent did not answer within actTimeout ({act_timeout:g} s) and its remaining "
            f"overage ({remaining:g} s)"
        )
        action = Failed("timeout", reason)
    except AgentGone as exc:
        reason = str(exc)
        action = Failed("error", reason)
    duration = time.perf_counter() - started
    late = not (isinstance(action, Failed) and action.kind == "timeout")
    if duration - act_timeout > remaining and late:
        # Kaggle's rule in Agent.act: late is late, whatever came back.
        reason = (
            f"the agent answered after {duration:.3f} s, past actTimeout ({act_timeout:g} s) "
            f"and its remaining overage ({remaining:g} s)"
        )
        action = Failed("timeout", reason)
    stdout, stderr = str(reply.get("stdout", "")), str(reply.get("stderr", ""))
    if log_chars is not None:
        stdout, stderr = stdout[:log_chars], stderr[:log_chars]
    return action, {"duration": round(duration, 6), "stdout": stdout, "stderr": stderr}, reason


def _shown(action: Any) -> str:
    try:
        return json.dumps(action)[:200]
    except (TypeError, ValueError):
        return repr(action)[:200]


def _text(log: RunLog) -> str:
    return log.text()
