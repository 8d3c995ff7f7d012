"""Control groups of one jailed run: at most so many tasks, so much memory, so many CPUs.

A control group holds where rlimits do not: ``RLIMIT_NPROC`` does not hold for a jail whose uid is
root outside, and ``RLIMIT_AS`` counts address space (and not in-memory files) per process where a
memory group counts what the whole run really holds. Only root (or a delegated user) may make
them, so every function here answers None, or a group missing a controller, where the machine
does not allow it, and the caller falls back to rlimits. Both cgroup v1 (a hierarchy per
controller) and v2 (one hierarchy) are handled.
"""

import logging
import os
import re
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

_ROOT = Path("/sys/fs/cgroup")
_CGROUP_BASES = (_ROOT / "pids", _ROOT)


def _cgroup_base() -> Path | None:
    """A cgroup directory in which this process may make a child with ``pids.max``, or None."""
    for base in _CGROUP_BASES:
        probe = base / f"podium-probe-{os.getpid()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            if (probe / "pids.max").exists():
                return base
        finally:
            probe.rmdir()
    return None


@dataclass
class Cgroup:
    """The control groups of one jailed run (one directory per controller under cgroup v1, one
    under v2), and which limits they hold: ``held`` names ``processes``, ``memory``, ``cpus``."""

    paths: list[Path]
    held: set[str] = field(default_factory=set)
    memory_path: Path | None = None
    pids_path: Path | None = None

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the groups: the shell joins them, then becomes ``argv``."""
        procs = [str(path / "cgroup.procs") for path in self.paths]
        # $0 is the first group's file; the others follow as $1.. and are shifted off.
        script = " && ".join(
            ['echo $$ > "$0"']
            + [f'echo $$ > "${i}"' for i in range(1, len(procs))]
            + ([f"shift {len(procs) - 1}"] if len(procs) > 1 else [])
            + ['exec "$@"']
        )
        return ["/bin/sh", "-c", script, *procs, *argv]

    def oom_kills(self) -> int:
        """How many processes the kernel killed for reaching the memory limit."""
        if self.memory_path is None:
            return 0
        for name in ("memory.events", "memory.oom_control"):  # v2, v1
            try:
                text = (self.memory_path / name).read_text()
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        try:  # an old v1 kernel without the count: how often the limit was reached at all
            return int((self.memory_path / "memory.failcnt").read_text())
        except (OSError, ValueError):
            return 0

    def remove(self) -> None:
        """Kill whatever is still in the groups (nothing should be: the jail's PID namespace died
        with bubblewrap; this is the second lock on the door), then remove them."""
        for path in self.paths:
            try:
                pids = (path / "cgroup.procs").read_text().split()
            except OSError:
                pids = []
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError, ValueError):
                    pass
        for path in self.paths:
            _remove(path)


def _remove(path: Path) -> None:
    for _ in range(50):  # the killed jail's processes take a moment to leave it
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)
    log.warning("could not remove the control group %s", path)


# A group's name says which process made it: podium-run-<pid>-<12 hex>, podium-metric-...
_NAMED = re.compile(r"^podium-(?:run|metric)-(\d+)-[0-9a-f]{12}$")


def remove_abandoned(base: Path) -> None:
    """Remove the groups under ``base`` left by a process that died without removing them (a
    worker killed in the middle of a run). Only empty ones: the jail's processes died with the
    process that made them (bubblewrap's --die-with-parent), and a group still in use, by a
    process of another PID namespace whose number is free in ours, cannot be removed."""
    try:
        children = list(base.iterdir())
    except OSError:
        return
    for path in children:
        named = _NAMED.match(path.name)
        if named is None or _alive(int(named.group(1))):
            continue
        try:
            path.rmdir()
        except OSError:
            continue  # not empty, or not ours to remove
        log.info("removed the control group %s of a process that died", path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def make_pids_cgroup(base: Path, limit: int) -> Cgroup | None:
    """A new pids control group under ``base`` of at most ``limit`` tasks, or None."""
    remove_abandoned(base)
    path = base / f"podium-metric-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        path.mkdir()
        (path / "pids.max").write_text(str(limit))
    except OSError:
        log.warning("could not make a pids control group under %s", base, exc_info=True)
        return None
    return Cgroup([path], {"processes"}, pids_path=path)


# --- a code run's groups: processes, memory and CPU ---------------------------------------------

_V1_KNOBS = {"pids": "pids.max", "memory": "memory.limit_in_bytes", "cpu": "cpu.cfs_quota_us"}
_V2_KNOBS = {"pids": "pids.max", "memory": "memory.max", "cpu": "cpu.max"}


def _own_paths() -> dict[str, str]:
    """This process's group per v1 controller, and under "" its v2 group (/proc/self/cgroup)."""
    own: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name] = path.lstrip("/")
    return own


def _make_child(controller: str, name: str) -> Path | None:
    """A new group for ``controller`` beneath this process's own (so the limits of the group the
    server runs in still hold), else beneath the hierarchy's root; None where neither may be made
    or the controller is not there."""
    own = _own_paths()
    v1 = _ROOT / controller
    candidates = []
    if (v1 / "cgroup.procs").exists() and not (v1 / "cgroup.controllers").exists():
        candidates = [v1 / own.get(controller, ""), v1]
        knob = _V1_KNOBS[controller]
    elif (_ROOT / "cgroup.controllers").exists():
        candidates = [_ROOT / own.get("", ""), _ROOT]
        knob = _V2_KNOBS[controller]
    for base in dict.fromkeys(candidates):
        remove_abandoned(base)
        path = base / name
        try:
            path.mkdir()
        except FileExistsError:
            pass
        except OSError:
            continue
        if (path / knob).exists():
            return path
        _remove(path)
    return None


def run_cgroup(*, memory_bytes: int, cpus: float, processes: int) -> Cgroup | None:
    """Groups holding one run to ``memory_bytes``, ``cpus`` CPUs and ``processes`` tasks, as far
    as the machine allows (``held`` says which); None where it allows none of them."""
    if os.geteuid() != 0 and not os.access(_ROOT, os.W_OK):
        return None
    name = f"podium-run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    made: dict[str, Path] = {}
    for controller in ("pids", "memory", "cpu"):
        path = _make_child(controller, name)
        if path is not None:
            made[controller] = path
    group = Cgroup(list(dict.fromkeys(made.values())))
    for controller, path in made.items():
        try:
            _limit(controller, path, memory_bytes=memory_bytes, cpus=cpus, processes=processes)
        except OSError:
            log.warning("could not set the %s limit of %s", controller, path, exc_info=True)
            continue
        group.held.add({"pids": "processes", "memory": "memory", "cpu": "cpus"}[controller])
        if controller == "memory":
            group.memory_path = path
        elif controller == "pids":
            group.pids_path = path
    if not group.paths:
        return None
    return group


def _limit(controller: str, path: Path, *, memory_bytes: int, cpus: float, processes: int) -> None:
    v2 = (path / "cgroup.controllers").exists()
    if controller == "pids":
        (path / "pids.max").write_text(str(processes))
    elif controller == "memory":
        (path / ("memory.max" if v2 else "memory.limit_in_bytes")).write_text(str(memory_bytes))
        swap = path / ("memory.swap.max" if v2 else "memory.memsw.limit_in_bytes")
        try:  # no swapping past the limit either, where the kernel accounts swap
            swap.write_text("0" if v2 else str(memory_bytes))
        except OSError:
            pass
    else:
        period = 100_000
        quota = max(1000, int(cpus * period))
        if v2:
            (path / "cpu.max").write_text(f"{quota} {period}")
        else:
            (path / "cpu.cfs_period_us").write_text(str(period))
            (path / "cpu.cfs_quota_us").write_text(str(quota))
