"""One agent in the jail for a whole episode: its process, its two pipes and its bounded log.

Inside the jail (:mod:`app.jail`: uid 65534, no network, an empty environment, its own PID
namespace, a read-only system and Python)::

    /kaggle_simulations/agent/   the agent's files, read-only, its working directory (Kaggle's
                                 path: agents that open their own files there find them)
    /tmp                         fresh and small

Each agent has its own jail and its own control groups (memory, CPUs, processes where the machine
allows; else ``RLIMIT_AS`` and ``RLIMIT_NPROC``), so no agent sees another's files, memory or
log. The host writes one observation per step and waits for the answer until the step's deadline
(Kaggle's ``actTimeout`` plus what is left of the agent's overage); past it, or on an answer
larger than its budget, or on the pipe's end, the agent's whole jail is killed and the reason
kept. Nothing the agent does can block the host: every read and write has the deadline.
"""

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.jail.bwrap import APP_ROOT, CODE_DIR, RUNNER_CODE, TMP_BYTES, check_jail
from app.jail.cgroups import run_cgroup
from app.jail.runner import Jail, JailSpec, RunLog, limits_for_job

MIB = 1024**2
AGENT_DIR = "/kaggle_simulations/agent"
_RUNNER = f"{CODE_DIR}/agent.py"
_CODE = (str(APP_ROOT / "app" / "simulation" / "inside.py"), _RUNNER)
_LOG_HEAD, _LOG_TAIL = 8 * 1024, 32 * 1024
_CHUNK = 65536


@dataclass(frozen=True)
class AgentLimits:
    """What one agent may use for one episode (memory and CPUs: the phase's ``simulation``
    settings): memory (the agent's processes together where a memory group holds it), CPUs,
    processes, the bytes of one answer, the time to load (Kaggle's ``agentTimeout``, spent
    before the first step)."""

    memory_mb: int = 1024
    cpus: float = 1.0
    max_processes: int = 64
    max_answer_bytes: int = 1 * MIB
    load_seconds: float = 60.0


class AgentGone(Exception):
    """The agent cannot answer any more: its message says why (crashed, too large, killed)."""


class AgentTimeout(Exception):
    """The agent did not answer before its deadline; its jail was killed."""


class JailedPipe:
    """A jailed process that answers JSON lines over two pipes of its own: started from the
    runner ``code`` (host path, path inside), seeing ``files`` read-only, its job as JSON on its
    command line (plus the pipes' numbers). :meth:`ask` sends one line and reads one back before
    a deadline; :meth:`close` kills it and returns what it printed (its process log, bounded)."""

    def __init__(
        self,
        code: tuple[str, str],
        job: dict[str, Any],
        limits: AgentLimits,
        *,
        files: dict[str, Path],
        dirs: list[str],
        chdir: str,
        hostname: str,
        who: str = "the agent",
    ) -> None:
        check_jail()
        self.limits, self.who = limits, who
        group = run_cgroup(
            memory_bytes=limits.memory_mb * MIB + 2 * TMP_BYTES,
            cpus=limits.cpus,
            processes=limits.max_processes + 8,  # bubblewrap and its shells count as well
        )
        obs_read, self._obs_write = os.pipe()
        self._act_read, act_write = os.pipe()
        spec = JailSpec(
            command=[sys.executable, "-I", code[1]],
            job={
                **job,
                **limits_for_job(
                    group,
                    max_processes=limits.max_processes,
                    address_space=limits.memory_mb * MIB,
                ),
            },
            env={"HOME": "/tmp", "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
            wall_seconds=0,  # each answer has its own deadline (ask); close() ends it
            code=(code, *RUNNER_CODE),
            files=files,
            dirs=dirs,
            chdir=chdir,
            hostname=hostname,
            group=group,
            log_head=_LOG_HEAD,
            log_tail=_LOG_TAIL,
        )
        try:
            self.jail = Jail(spec, {"observation_fd": obs_read, "action_fd": act_write})
        except BaseException:
            for fd in (self._obs_write, self._act_read):
                os.close(fd)
            raise
        self.process, self.group = self.jail.process, self.jail.group
        os.set_blocking(self._obs_write, False)
        self._pending = b""
        self.closed = False

    def ask(self, message: Any, *, seconds: float) -> dict[str, Any]:
        """Send ``message``, return the answer within ``seconds``; raises
        :class:`AgentTimeout` or :class:`AgentGone` after killing the process."""
        deadline = time.monotonic() + seconds
        self._write((json.dumps(message) + "\n").encode(), deadline)
        return self._read(deadline)

    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            if not self._wait(self._obs_write, select.POLLOUT, deadline):
                self.kill()
                raise AgentTimeout(f"{self.who} did not read its input in time")
            try:
                view = view[os.write(self._obs_write, view) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                self.kill()
                raise AgentGone(f"{self.who}'s process ended") from None

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\n" not in self._pending:
            if len(self._pending) > self.limits.max_answer_bytes:
                self.kill()
                raise AgentGone(
                    f"{self.who}'s answer is larger than {self.limits.max_answer_bytes} bytes"
                )
            if not self._wait(self._act_read, select.POLLIN, deadline):
                self.kill()
                raise AgentTimeout(f"{self.who} did not answer in time")
            chunk = os.read(self._act_read, _CHUNK)
            if not chunk:
                why = self._ended()  # its own exit status, before the kill below
                self.kill()
                raise AgentGone(why)
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        if len(line) > self.limits.max_answer_bytes:
            self.kill()
            raise AgentGone(
                f"{self.who}'s answer is larger than {self.limits.max_answer_bytes} bytes"
            )
        try:
            reply = json.loads(line)
        except ValueError:
            self.kill()
            raise AgentGone(f"{self.who}'s answer is not JSON") from None
        if not isinstance(reply, dict):
            self.kill()
            raise AgentGone(f"{self.who}'s answer is not a JSON object")
        return reply

    def _ended(self) -> str:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        oom = self.group.oom_kills() if self.group else 0
        if oom:
            return f"{self.who} exceeded its memory limit of {self.limits.memory_mb} MB"
        if code is not None and code < 0:
            return f"{self.who}'s process was killed by signal {-code}"
        return f"{self.who}'s process ended (exit status {code})"

    @staticmethod
    def _wait(fd: int, event: int, deadline: float) -> bool:
        poller = select.poll()
        poller.register(fd, event | select.POLLHUP | select.POLLERR)
        left = deadline - time.monotonic()
        return left > 0 and bool(poller.poll(max(1, int(left * 1000))))

    def kill(self) -> None:
        self.jail.kill()

    def close(self) -> RunLog:
        """Kill the agent's jail (whatever it left running) and return its process log."""
        if not self.closed:
            self.closed = True
            for fd in (self._obs_write, self._act_read):
                os.close(fd)
        return self.jail.close()


class JailedAgent(JailedPipe):
    """One agent's jailed process for a whole episode (:mod:`app.simulation.inside`)."""

    def __init__(self, code_dir: Path, limits: AgentLimits, *, log_chars: int | None) -> None:
        super().__init__(
            _CODE,
            {"agent_dir": AGENT_DIR, "log_chars": log_chars},
            limits,
            files={AGENT_DIR: code_dir},
            dirs=["/kaggle_simulations"],
            chdir=AGENT_DIR,
            hostname="podium-agent",
        )

    def ready(self) -> None:
        """Wait for the agent's load; raises :class:`AgentGone` or :class:`AgentTimeout`."""
        reply = self._read(time.monotonic() + self.limits.load_seconds)
        if "error" in reply:
            raise AgentGone(str(reply["error"])[:2000])

    def act(self, observation: Any, configuration: Any, *, seconds: float) -> dict[str, Any]:
        """The agent's answer to one step (``{"action"}`` or ``{"error"}``, with its prints),
        within ``seconds``; raises :class:`AgentTimeout` or :class:`AgentGone` after killing it."""
        return self.ask(
            {"observation": observation, "configuration": configuration}, seconds=seconds
        )
