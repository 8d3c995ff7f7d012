"""The bubblewrap command line that jails untrusted code, and the self-test that proves it.

Inside the jail the code runs as uid 65534 in fresh user, PID, network, IPC, UTS and mount
namespaces, with an empty environment, a read-only view of the system and the Python install,
its own ``/proc`` and a small ``/tmp``, and only the files its caller binds in (a custom metric's
job under ``/job``, a participant's run under ``/kaggle``). It sees no other process, no network
but its own loopback, no user namespace to nest and no server file.
Killing bubblewrap kills the namespace's first process, and with it every process in the jail,
however it forked or detached.

A process limit stops a fork bomb. Linux does not enforce ``RLIMIT_NPROC`` for uid 0, and a jail
made by a root server maps its uid to 0 outside. So a root server starts bubblewrap as uid 65534
(:func:`jail_user`): the jail is the same, made without privilege, and the child's limit holds;
it then reads only what anyone may read, so callers copy other input files in
(:func:`visible_to_jail`). Where the Python install or the caller's code lies in a directory
only root may enter (``/root/.pyenv``), root binds each of them first on an empty directory anyone
may reach, in a mount namespace of bubblewrap's own, and only then becomes uid 65534 and starts it
(:func:`_staged`). Where that jail cannot start (unprivileged user namespaces are off), the
root-made jail is used with a ``pids`` control group of its own as the limit
(:func:`pids_cgroup`), where one can be made; else the jail has no process limit, and says so in
the log.
"""

import functools
import hashlib
import json
import logging
import os
import shlex
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import app
from app.jail.cgroups import Cgroup, _cgroup_base, make_pids_cgroup

log = logging.getLogger(__name__)

UID = GID = 65534
JOB_DIR = "/job"
CODE_DIR = "/podium"  # where the caller's own child code is visible inside the jail
TMP_BYTES = 64 * 1024**2  # the jail's /tmp, in memory: bounded
APP_ROOT = Path(app.__file__).resolve().parent.parent
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
_SELF_TEST_SECONDS = 20
# The runners' shared half (app.jail.inside), bound into every jail beside each kind's runner and
# imported there as app.jail.inside (with CODE_DIR on the path).
RUNNER_CODE = tuple(
    (str(APP_ROOT / "app" / part), f"{CODE_DIR}/app/{part}")
    for part in ("__init__.py", "jail/__init__.py", "jail/inside.py")
)


class JailUnavailable(RuntimeError):
    """bubblewrap is missing or cannot build the jail here; the message says why."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.path.exists("/usr/bin/bwrap") else None)


@functools.cache
def _python_dirs() -> tuple[str, ...]:
    """The Python install, the virtual environment and every site-packages, outermost first
    (asked once per process: the interpreter does not move)."""
    candidates = [sys.base_prefix, sys.prefix, *site.getsitepackages()]
    candidates += [str(Path(sys.executable).resolve().parent.parent)]
    chosen: list[str] = []
    for path in sorted({os.path.realpath(p) for p in candidates if os.path.isdir(p)}, key=len):
        if not any(path == c or path.startswith(c.rstrip("/") + "/") for c in chosen):
            chosen.append(path)
    return tuple(chosen)


def python_paths() -> tuple[str, ...]:
    """The host's paths of the Python the jail binds in, longest first: what a traceback from
    inside names (a library's frames), and a log shown to a participant should not."""
    found = {
        *_python_dirs(),
        *site.getsitepackages(),
        sys.prefix,
        os.path.realpath(sys.prefix),
        sys.base_prefix,
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["platstdlib"],
    }
    # Never a bare top folder (a Debian Python's prefix is /usr): "/usr/bin" in a participant's
    # own output is no server path, and replacing it would garble what they printed.
    kept = (p for p in found if len(Path(p).parts) >= 3)
    return tuple(sorted(kept, key=len, reverse=True))


def _open_to_others(path: Path) -> bool:
    """Whether anyone may read ``path`` and search every directory above it."""
    resolved = path.resolve()
    try:
        if not resolved.stat().st_mode & stat.S_IROTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in resolved.parents)
    except OSError:
        return False


Binds = Sequence[tuple[str, str]]  # (host path, path inside the jail), read-only


def _own_binds(code: Binds = ()) -> list[tuple[str, str]]:
    """(host, inside) of the Python install and the caller's ``code``, as the jail sees them."""
    binds = []
    for path in _python_dirs():
        if not path.startswith("/usr/"):
            # A venv's python is a symlink to the install's: the same path outside and in.
            binds.append((path, path))
    if sys.prefix != sys.base_prefix and os.path.realpath(sys.prefix) != sys.prefix:
        binds.append((os.path.realpath(sys.prefix), sys.prefix))
    binds.extend(code)
    return binds


def _hidden_binds(code: Binds = ()) -> list[tuple[str, str]]:
    """Those of :func:`_own_binds` that bubblewrap started as uid 65534 could not look up."""
    return [(host, inside) for host, inside in _own_binds(code) if not _open_to_others(Path(host))]


def _stage() -> Path:
    """Root's directory of empty mount points, shared by every server on this machine (they are
    only mounted on inside private mount namespaces), so none is left behind per process."""
    stage = Path(tempfile.gettempdir()) / "podium-jail-stage"
    try:
        stage.mkdir(mode=0o755)
    except FileExistsError:
        pass
    seen = os.lstat(stage)
    if not stat.S_ISDIR(seen.st_mode) or seen.st_uid != 0 or seen.st_mode & 0o022:
        # Someone else's directory (or a link) could swap what the jail binds in.
        raise JailUnavailable(f"{stage} is not a directory that only root may write to")
    return stage


def _staged(bwrap_args: list[str], hidden: list[tuple[str, str]]) -> list[str]:
    """``bwrap_args`` started as uid 65534, after root bound each of ``hidden`` on an empty mount
    point under a directory anyone may search, in a new mount namespace (private: nothing of it
    reaches the host's) that bubblewrap then copies. The jail binds the mount points instead."""
    stage, script, args = _stage(), ["set -e"], list(bwrap_args)
    for host, inside in hidden:
        kind = "dir" if os.path.isdir(host) else "file"
        point = stage / f"{hashlib.sha256(host.encode()).hexdigest()[:24]}-{kind}"
        if kind == "dir":  # exist_ok: another job or server may have made it
            point.mkdir(mode=0o755, exist_ok=True)
        else:
            point.touch(mode=0o644, exist_ok=True)
        script.append(f"mount --bind {shlex.quote(host)} {shlex.quote(str(point))}")
        for at in range(len(args) - 2):
            if args[at] == "--ro-bind" and args[at + 1 : at + 3] == [host, inside]:
                args[at + 1] = str(point)
    script.append(f'exec setpriv --reuid={UID} --regid={GID} --clear-groups -- "$@"')
    unshare = shutil.which("unshare") or "/usr/bin/unshare"
    return [unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c"] + [
        "; ".join(script),
        "podium-jail",
        *args,
    ]


def _system_mounts(code: Binds) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in _ETC_FILES:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for host, inside in _own_binds(code):
        args += ["--ro-bind", host, inside]
    return args


def jail_command(
    command: list[str],
    *,
    files: Mapping[str, Path],
    env: Mapping[str, str],
    drop: bool | None = None,
    code: Binds = (),
    writable: Mapping[str, int] | None = None,
    dirs: Sequence[str] = (),
    tmp_bytes: int = TMP_BYTES,  # each of /tmp and /dev/shm
    chdir: str = "/tmp",
    hostname: str = "podium-metric",
) -> list[str]:
    """``command`` under bubblewrap, seeing only ``files`` (inside path -> host path, read-only,
    a file or a directory), the caller's ``code``, the empty read-only directories ``dirs`` (made
    before ``files``, which may lie in them) and, writable, an in-memory directory of at most the
    given bytes per path of ``writable``. Start it with :func:`jail_user`'s arguments, ``drop``
    and ``code`` the same for both (see the module's doc).
    """
    bwrap = bwrap_path()
    if bwrap is None:
        raise JailUnavailable("bubblewrap (bwrap) is not installed")
    args = [
        bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",  # no nested namespace in which the metric could be root again
        "--uid",
        str(UID),
        "--gid",
        str(GID),
        "--hostname",
        hostname,
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into a terminal the server may have
        "--clearenv",
        # The private /tmp first: the system and Python mounts may lie below /tmp (a checkout
        # there, its venv) and must stay visible on top of it.
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        # bubblewrap's /dev is a writable tmpfs of half the machine's memory, /dev/shm in it:
        # a bounded one for shared memory (multiprocessing, joblib), and /dev read-only below.
        # Files in a tmpfs are not address space: RLIMIT_AS would not stop them.
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/dev/shm",
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/tmp",
        *_system_mounts(code),
    ]
    for inside in dirs:
        args += ["--dir", inside]
    for inside, host in files.items():
        args += ["--ro-bind", str(host), inside]
    for inside, size in (writable or {}).items():
        # A size-capped tmpfs: the kernel refuses the write past it (ENOSPC), however many files.
        args += ["--perms", "0755", "--size", str(size), "--tmpfs", inside]
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", chdir]
    for name, value in env.items():
        args += ["--setenv", name, value]
    args += ["--", *command]
    if unprivileged() if drop is None else drop:
        hidden = _hidden_binds(code)
        if hidden:
            return _staged(args, hidden)
    return args


def unprivileged() -> bool:
    """True when a root server starts bubblewrap as the jail's uid (see the module's doc)."""
    return os.geteuid() == 0 and _passed[:1] == [_UNPRIVILEGED]


def jail_user(*, drop: bool | None = None, code: Binds = ()) -> dict[str, Any]:
    """``subprocess.Popen`` arguments that start bubblewrap as the jail's uid under a root server
    (none where :func:`jail_command` stages binds: it becomes that uid by itself)."""
    if not (unprivileged() if drop is None else drop) or _hidden_binds(code):
        return {}
    return {"user": UID, "group": GID, "extra_groups": []}


def visible_to_jail(path: Path) -> bool:
    """Whether bubblewrap started by :func:`jail_user` may bind and the jail may read ``path``:
    readable by others, and every directory above it searchable by others."""
    if not unprivileged():
        return True  # bubblewrap runs as the server's user, who reads its own files
    return _open_to_others(path)


def base_env() -> dict[str, str]:
    """The whole environment of a custom metric's jailed process: nothing of the server's."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": CODE_DIR,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",  # so a killed metric's last prints still reach the host
    }


# Whether RLIMIT_NPROC holds is asked of the kernel (one fork under a limit of one), not read
# from /proc/self/uid_map: through the jail's own /proc that shows 0 as the outer uid either way.
_SELF_TEST = """
import json, os, resource, socket
net = sorted(name for _, name in socket.if_nameindex())
resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
try:
    pid = os.fork()
except BlockingIOError:
    nproc_holds = True
else:
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    nproc_holds = False
print(json.dumps({"uid": os.getuid(), "nproc_holds": nproc_holds, "pid": os.getpid(),
                  "env": sorted(os.environ), "net": net,
                  "proc": sorted(p for p in os.listdir("/proc") if p.isdigit()),
                  "root_writable": os.access("/", os.W_OK)}))
"""
_UNPRIVILEGED, _ROOT_MADE = "unprivileged", "root-made"
_passed: list[str] = []  # the kind of jail that passed the self-test


def check_jail() -> None:
    """Prove the jail starts and isolates, once per process; raise :class:`JailUnavailable`."""
    if _passed:
        return
    if os.geteuid() == 0:
        try:
            _self_test(drop=True)
        except JailUnavailable as exc:
            _self_test(drop=False)
            limit = "a pids control group" if _cgroup_base() else "NO process limit"
            log.warning(
                "untrusted code runs in a root-made jail with %s (a fork bomb is stopped only "
                "by a limit): the unprivileged jail cannot start here: %s",
                limit,
                exc,
            )
            _passed.append(_ROOT_MADE)
            return
        _passed.append(_UNPRIVILEGED)
        return
    _self_test(drop=False)
    _passed.append(_UNPRIVILEGED)


def _self_test(*, drop: bool) -> None:
    command = jail_command(
        [sys.executable, "-S", "-c", _SELF_TEST], files={}, env={"LANG": "C.UTF-8"}, drop=drop
    )
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_SELF_TEST_SECONDS,
            check=False,
            **jail_user(drop=drop),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JailUnavailable(f"bubblewrap could not be started: {exc}") from None
    stderr = done.stderr.decode("utf-8", errors="replace").strip()[-2000:]
    if done.returncode != 0:
        raise JailUnavailable(f"bubblewrap failed (exit status {done.returncode}): {stderr}")
    try:
        seen = json.loads(done.stdout)
    except ValueError:
        raise JailUnavailable(f"the jail's self-test printed no result: {stderr}") from None
    problems = []
    if seen.get("uid") != UID:
        problems.append(f"runs as uid {seen.get('uid')}, not {UID}")
    if drop and not seen.get("nproc_holds"):
        problems.append("is root outside its user namespace, where no process limit holds")
    if len(seen.get("proc", [])) > 2:
        problems.append(f"sees {len(seen['proc'])} processes: no PID namespace")
    inherited = set(seen.get("env", [])) - {"LANG", "PWD"}  # PWD: set by bwrap's --chdir
    if inherited:
        problems.append(f"inherits environment variables {sorted(inherited)}")
    if seen.get("root_writable"):
        problems.append("its root file system is writable")
    if seen.get("net") != ["lo"]:
        problems.append(f"sees network interfaces {seen.get('net')}: no network namespace")
    if problems:
        raise JailUnavailable("the jail's self-test failed: it " + "; ".join(problems))


# --- a pids control group, for the root-made jail ----------------------------------------------


def pids_cgroup(limit: int) -> Cgroup | None:
    """For a root-made jail: a new pids control group of at most ``limit`` tasks, or None."""
    if unprivileged() or os.geteuid() != 0:
        return None  # the child's RLIMIT_NPROC holds
    base = _cgroup_base()
    if base is None:
        return None
    return make_pids_cgroup(base, limit)
