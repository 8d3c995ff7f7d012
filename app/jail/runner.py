"""The one runner of untrusted code, the host's half: start a kind's runner in the jail with its
layout and limits, read what comes back within budgets, kill everything it started at the end or
at the wall limit, and say what came of it in one shape (:class:`Verdict`).

Every kind is a small adapter around this that lays out its files, chooses its limits and reads
its verdict in its own words: custom metrics (:mod:`app.custom_metrics.sandbox`), imported scoring
programs (:mod:`app.programs.jailed`), participants' code (:mod:`app.coderun.runner`), and
simulation agents and host environments (:mod:`app.simulation.jailed`), whose jail stays open for
a whole episode (:class:`Jail` without :func:`run_jailed`'s wait). The half inside the jail is
:mod:`app.jail.inside`. Each channel has its own budget: the runner's report (``status``), a file
it hands back (``output``), and its processes' stdout and stderr together (the log, first and
last bytes kept).
"""

import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from io import BufferedReader
from pathlib import Path
from typing import Any, Literal

from app.jail.bwrap import TMP_BYTES, Binds, jail_command, jail_user
from app.jail.cgroups import Cgroup
from app.jail.process import (
    BoundedReader,
    FileSink,
    HeadTailReader,
    kill_group,
    start,
    wait_then_kill,
)

LOG_HEAD_BYTES = 8 * 1024
LOG_TAIL_BYTES = 64 * 1024
STATUS_BYTES = 64 * 1024
_JOIN_SECONDS = 5  # a reader still open after the kill: a detached grandchild of an unjailed run

Killed = Literal["time", "memory", "output"]


@dataclass(frozen=True)
class RunLog:
    """A run's stdout and stderr together, as they interleaved: the first and last bytes of it
    (``total_bytes`` says how much there was; what lies between is dropped)."""

    head: bytes
    tail: bytes
    total_bytes: int

    @property
    def truncated(self) -> bool:
        return self.total_bytes > len(self.head) + len(self.tail)

    def text(self) -> str:
        """The log as one text, with a line saying how much was left out in the middle."""
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + tail
        dropped = self.total_bytes - len(self.head) - len(self.tail)
        return f"{head}\n[... {dropped} bytes of output left out ...]\n{tail}"


def _json_job(job: dict[str, Any]) -> str:
    return json.dumps(job)


@dataclass(frozen=True)
class JailSpec:
    """One run of a kind's runner. ``command`` is the runner's command inside the jail; the job
    (``job`` plus the numbers of the pipes the runner writes to) is its last argument, as
    ``encode`` writes it. The layout (``files`` read-only, ``dirs``, ``writable`` in-memory
    folders of at most so many bytes, ``code``: the runner's own files) is
    :func:`app.jail.bwrap.jail_command`'s. ``group`` holds the run's control groups where the
    adapter made some (the runner removes it at the end). ``jailed=False`` is a custom metric's
    development opt-out only: the command runs as a plain child with ``env`` in ``cwd``."""

    command: list[str]
    job: dict[str, Any]
    env: Mapping[str, str]
    wall_seconds: float
    code: Binds = ()
    files: Mapping[str, Path] = field(default_factory=dict)
    dirs: Sequence[str] = ()
    writable: Mapping[str, int] = field(default_factory=dict)
    chdir: str = "/tmp"
    hostname: str = "podium-run"
    tmp_bytes: int = TMP_BYTES
    group: Cgroup | None = None
    encode: Callable[[dict[str, Any]], str] = _json_job
    status_bytes: int = STATUS_BYTES
    output: tuple[Path, int] | None = None  # a file handed back over a pipe, at most so many bytes
    log_head: int = LOG_HEAD_BYTES
    log_tail: int = LOG_TAIL_BYTES
    jailed: bool = True
    cwd: Path | None = None  # unjailed only


@dataclass(frozen=True)
class Verdict:
    """What came of one run, the same for every kind.

    ``killed``: ``time`` (the wall limit was reached, everything was killed), ``memory`` (the
    kernel killed a process of the run's memory group), ``output`` (a channel brought more than
    its budget; the rest was dropped), else None. ``exit`` is the exit status the host saw (the
    jail's; negative: a signal). ``status`` is the runner's report (None where it wrote none, or
    not a JSON object, or past its budget). ``output_bytes``: the bytes of the file handed back,
    None past its budget or without one. ``held`` names the limits the control groups held
    (``processes``, ``memory``, ``cpus``)."""

    killed: Killed | None
    exit: int | None
    status: dict[str, Any] | None
    log: RunLog
    seconds: float
    oom_kills: int = 0
    output_bytes: int | None = None
    held: frozenset[str] = frozenset()

    @property
    def timed_out(self) -> bool:
        return self.killed == "time"


def limits_for_job(
    group: Cgroup | None, *, max_processes: int, address_space: int
) -> dict[str, int | None]:
    """The rlimits the runner inside sets (:func:`app.jail.inside.job_limits`): each only where
    no control group holds it (``RLIMIT_NPROC`` counts every process of uid 65534 on the machine,
    ``RLIMIT_AS`` each process's address space, where a group counts the run's own)."""
    held = group.held if group else set()
    return {
        "max_processes": None if "processes" in held else max_processes,
        "address_space": None if "memory" in held else address_space,
    }


class Jail:
    """A kind's runner started in the jail (or, opted out, as a plain child), in a session of its
    own, its stdout and stderr read into a bounded log. ``fds`` are the pipe ends the runner
    keeps (name -> fd), added to its job under those names and closed here once it holds them.
    :meth:`close` kills everything it started and returns its log."""

    def __init__(self, spec: JailSpec, fds: Mapping[str, int]) -> None:
        self.spec, self.group = spec, spec.group
        inside = [*spec.command, spec.encode({**spec.job, **fds})]
        try:
            if spec.jailed:
                argv = jail_command(
                    inside,
                    files=spec.files,
                    env=spec.env,
                    code=spec.code,
                    writable=spec.writable,
                    dirs=spec.dirs,
                    tmp_bytes=spec.tmp_bytes,
                    chdir=spec.chdir,
                    hostname=spec.hostname,
                )
                env, cwd, user = {}, None, jail_user(code=spec.code)
            else:
                argv, env, cwd, user = inside, dict(spec.env), spec.cwd, None
            self.began = time.monotonic()
            self.process = start(
                self.group.wrap(argv) if self.group else argv,
                env=env,
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,  # one log, as the output interleaved
                pass_fds=tuple(fds.values()),
                user=user,
            )
        except BaseException:
            if self.group is not None:
                self.group.remove()
            raise
        finally:
            for fd in fds.values():
                os.close(fd)  # the runner holds its own copies
        stdout: BufferedReader = self.process.stdout  # type: ignore[assignment]
        self._log = HeadTailReader(stdout, head=spec.log_head, tail=spec.log_tail)
        self.closed = False

    def kill(self) -> None:
        kill_group(self.process.pid)

    def oom_kills(self) -> int:
        return self.group.oom_kills() if self.group else 0

    def close(self) -> RunLog:
        """Kill whatever the run left running, and return its log (once; again: the same)."""
        if not self.closed:
            self.closed = True
            self.kill()
            self.process.wait()
            self._log.join(timeout=_JOIN_SECONDS)
            if self.group is not None:
                self.group.remove()
        return RunLog(head=self._log.head(), tail=self._log.tail(), total_bytes=self._log.total)


def run_jailed(spec: JailSpec) -> Verdict:
    """Run ``spec``'s runner to its end or its wall limit; everything it started is killed
    either way. The runner writes one JSON object to the pipe named ``status_fd`` in its job,
    and, with ``spec.output``, a file to the pipe named ``output_fd``."""
    status_read, status_write = os.pipe()
    ends = {"status_fd": status_write}
    output_read = None
    if spec.output is not None:
        output_read, ends["output_fd"] = os.pipe()
    try:
        jail = Jail(spec, ends)
    except BaseException:
        os.close(status_read)
        if output_read is not None:
            os.close(output_read)
        raise
    status = BoundedReader(os.fdopen(status_read, "rb"), spec.status_bytes, name="podium-status")
    sink = None
    if spec.output is not None and output_read is not None:
        sink = FileSink(os.fdopen(output_read, "rb"), spec.output[0], spec.output[1])
    try:
        timed_out = wait_then_kill(jail.process, spec.wall_seconds)
        seconds = time.monotonic() - jail.began
        for reader in (status, sink):
            if reader is not None:
                reader.join(timeout=_JOIN_SECONDS)
        oom_kills = jail.oom_kills()
        held = frozenset(jail.group.held) if jail.group else frozenset()
    finally:
        log = jail.close()
    overflowed = status.overflowed or (sink is not None and sink.overflowed)
    killed: Killed | None = (
        "time" if timed_out else "memory" if oom_kills else "output" if overflowed else None
    )
    return Verdict(
        killed=killed,
        exit=jail.process.returncode,
        status=read_status(status.data()),
        log=log,
        seconds=seconds,
        oom_kills=oom_kills,
        output_bytes=None if sink is None or sink.overflowed else sink.written,
        held=held,
    )


def read_status(data: bytes) -> dict[str, Any] | None:
    """The runner's one JSON object, or None where it wrote none (it was killed first)."""
    try:
        status = json.loads(data)
    except ValueError:
        return None
    return status if isinstance(status, dict) else None
