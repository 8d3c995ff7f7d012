"""The bubblewrap command line that jails an organiser's metric, and the self-test that proves it.

Inside the jail the metric runs as uid 65534 in fresh user, PID, network, IPC, UTS and mount
namespaces, with an empty environment, a read-only view of the system and the Python install,
its own ``/proc`` and a small ``/tmp``, and only the files of its job under ``/job``. It sees no
other process, no network but its own loopback, no user namespace to nest and no server file.
Killing bubblewrap kills the namespace's first process, and with it every process in the jail,
however it forked or detached.
"""

import json
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import app

UID = GID = 65534
JOB_DIR = "/job"
CODE_DIR = "/podium"  # where this package's child code is visible inside the jail
TMP_BYTES = 64 * 1024**2  # the jail's /tmp, in memory: bounded
_APP_ROOT = Path(app.__file__).resolve().parent.parent
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
_SELF_TEST_SECONDS = 20


class JailUnavailable(RuntimeError):
    """bubblewrap is missing or cannot build the jail here; the message says why."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.path.exists("/usr/bin/bwrap") else None)


def _python_dirs() -> list[str]:
    """The Python install, the virtual environment and every site-packages, outermost first."""
    candidates = [sys.base_prefix, sys.prefix, *site.getsitepackages()]
    candidates += [str(Path(sys.executable).resolve().parent.parent)]
    chosen: list[str] = []
    for path in sorted({os.path.realpath(p) for p in candidates if os.path.isdir(p)}, key=len):
        if not any(path == c or path.startswith(c.rstrip("/") + "/") for c in chosen):
            chosen.append(path)
    return chosen


def _system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in _ETC_FILES:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for path in _python_dirs():
        if not path.startswith("/usr/"):
            # A venv's python is a symlink to the install's: the same path outside and in.
            args += ["--ro-bind", path, path]
    if sys.prefix != sys.base_prefix and os.path.realpath(sys.prefix) != sys.prefix:
        args += ["--ro-bind", os.path.realpath(sys.prefix), sys.prefix]
    return args


def jail_command(
    command: list[str], *, files: Mapping[str, Path], env: Mapping[str, str]
) -> list[str]:
    """``command`` under bubblewrap, seeing only ``files`` (inside path -> host path, read-only)."""
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
        "podium-metric",
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into a terminal the server may have
        "--clearenv",
        # The private /tmp first: the system and Python mounts may lie below /tmp (a checkout
        # there, its venv) and must stay visible on top of it.
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(TMP_BYTES),
        "--tmpfs",
        "/tmp",
        *_system_mounts(),
        "--ro-bind",
        str(_APP_ROOT / "app" / "__init__.py"),
        f"{CODE_DIR}/app/__init__.py",
        "--ro-bind",
        str(_APP_ROOT / "app" / "custom_metrics"),
        f"{CODE_DIR}/app/custom_metrics",
    ]
    for inside, host in files.items():
        args += ["--ro-bind", str(host), inside]
    args += ["--remount-ro", "/", "--chdir", "/tmp"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return [*args, "--", *command]


def base_env() -> dict[str, str]:
    """The whole environment of a jailed process: nothing of the server's."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": CODE_DIR,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",  # so a killed metric's last prints still reach the host
    }


_SELF_TEST = """
import json, os, socket
net = sorted(name for _, name in socket.if_nameindex())
print(json.dumps({"uid": os.getuid(), "pid": os.getpid(), "env": sorted(os.environ),
                  "proc": sorted(p for p in os.listdir("/proc") if p.isdigit()), "net": net,
                  "root_writable": os.access("/", os.W_OK)}))
"""
_passed: list[str] = []


def check_jail() -> None:
    """Prove the jail starts and isolates, once per process; raise :class:`JailUnavailable`."""
    if _passed:
        return
    command = jail_command(
        [sys.executable, "-S", "-c", _SELF_TEST], files={}, env={"LANG": "C.UTF-8"}
    )
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_SELF_TEST_SECONDS,
            check=False,
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
    _passed.append(bwrap_path() or "")
