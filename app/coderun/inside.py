"""The run's side in the jail: start the participant's code, wait, hand back its submission.csv.

Started only by :func:`app.coderun.runner.run_code` as ``python -I -S /podium/run.py JOB``, inside
the jail, as the jail's user (JOB: the job as hex of :mod:`marshal`, written by the server). It
imports nothing of the server (only the standard library, and nbclient for a notebook). It limits
itself first (the limits pass to everything it starts), runs the script (``python -u``) or executes
the notebook top to bottom with nbclient, printing each cell's output to the log as it comes, then
writes the file over its own pipe and one JSON status over another. The participant's code gets
neither pipe, nor this process's ``/proc`` entries (it is not dumpable). The skeleton (job in,
limits, status out) is every kind's (:func:`app.jail.inside.serve`); this file is the adapter.

Every run pays for this process's start-up, so a script's path imports only what is built in or
nearly so (no json, re, subprocess or typing: together they were a fifth of an empty run's time).
"""

from __future__ import annotations

import marshal
import os
import resource
import stat
import sys

# The runners' shared half, bound beside this file in the jail (app.jail.bwrap.RUNNER_CODE).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app.jail import inside as jail  # noqa: E402

# typing imports re and collections: the checker's names only, never imported at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
_FULL_BYTES = 1024 * 1024  # less free space than this in /kaggle/working: it filled up
_MESSAGE_CHARS = 2000


def _run_script(job: dict[str, Any]) -> dict[str, Any]:
    entry = os.path.join(job["code_dir"], job["entry"])
    argv = [sys.executable, "-u", entry]
    pid = os.fork()
    if pid == 0:  # the participant's process: what subprocess.Popen would do, without its import
        try:
            import _signal

            # Python ignores SIGPIPE and SIGXFSZ for itself; what it starts gets the defaults.
            for name in ("SIGPIPE", "SIGXFSZ"):
                if hasattr(_signal, name):
                    _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.closerange(3, _max_fd())  # neither pipe, nor anything else of ours
            os.chdir(job["working_dir"])
            os.execve(argv[0], argv, job["env"])
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    return {"status": "exited", "code": os.waitstatus_to_exitcode(status)}


def _max_fd() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def _run_notebook(job: dict[str, Any]) -> dict[str, Any]:
    import re

    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    ansi = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
    path = os.path.join(job["code_dir"], job["entry"])
    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    code_cells = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    current: list[int] = []

    class LoggingClient(NotebookClient):
        def output(self, outs: Any, msg: dict[str, Any], display_id: Any, cell_index: int) -> Any:
            content, kind = msg.get("content", {}), msg.get("msg_type")
            if kind == "stream":
                stream = sys.stderr if content.get("name") == "stderr" else sys.stdout
                stream.write(content.get("text", ""))
                stream.flush()
            elif kind == "error":
                sys.stderr.write(ansi.sub("", "\n".join(content.get("traceback", []))) + "\n")
                sys.stderr.flush()
            return super().output(outs, msg, display_id, cell_index)

    # Over Unix sockets in the jail's /tmp: the kernel needs no network, not even loopback.
    manager = AsyncKernelManager(kernel_name="python3", transport="ipc", ip="/tmp/podium-kernel")
    client = LoggingClient(
        notebook,
        km=manager,
        timeout=None,  # the wall limit is the host's: it kills the whole jail
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": job["working_dir"]}},
        # A zip's own modules import as they would beside the notebook.
        extra_arguments=[
            f"--IPKernelApp.exec_lines=import sys; sys.path.append({job['code_dir']!r})"
        ],
        on_cell_execute=lambda cell, cell_index: current.append(cell_index),
    )
    try:
        client.execute(env=job["env"], cwd=job["working_dir"])
    except CellExecutionError as exc:
        cell = code_cells.index(current[-1]) + 1 if current and current[-1] in code_cells else None
        return {
            "status": "cell_error",
            "cell": cell,
            "ename": str(exc.ename),
            "evalue": str(exc.evalue)[:_MESSAGE_CHARS],
        }
    except DeadKernelError as exc:
        return {"status": "kernel_died", "message": str(exc)[:_MESSAGE_CHARS]}
    return {"status": "exited", "code": 0}


def _deliver(job: dict[str, Any], output_fd: int) -> dict[str, Any]:
    path = os.path.join(job["working_dir"], "submission.csv")
    try:
        # Not blocking: a FIFO named submission.csv must not hang the run.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return {"status": "no_output"}
    with os.fdopen(fd, "rb") as source:
        seen = os.fstat(source.fileno())
        if not stat.S_ISREG(seen.st_mode):
            return {"status": "no_output", "reason": "submission.csv is not a regular file"}
        if seen.st_size > job["max_output_bytes"]:
            return {"status": "output_too_large", "bytes": seen.st_size}
        sent = 0
        while chunk := source.read(1 << 20):
            sent += len(chunk)
            if sent > job["max_output_bytes"]:
                return {"status": "output_too_large", "bytes": sent}
            view = memoryview(chunk)
            while view:
                view = view[os.write(output_fd, view) :]
    return {"status": "delivered", "bytes": sent}


def _working_full(job: dict[str, Any]) -> bool:
    try:
        seen = os.statvfs(job["working_dir"])
    except OSError:
        return False
    return seen.f_bavail * seen.f_frsize < _FULL_BYTES


def _json(value: Any) -> str:
    """JSON for the status: a flat object of strings, numbers, booleans and nulls."""
    from _json import encode_basestring_ascii

    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json(str(k))}:{_json(v)}" for k, v in value.items()) + "}"
    return str(encode_basestring_ascii(str(value)))


def _run(job: dict[str, Any]) -> dict[str, Any]:
    ran = _run_notebook(job) if job["kind"] == "notebook" else _run_script(job)
    result = dict(ran)
    if ran["status"] == "exited" and ran["code"] == 0:
        result.update(_deliver(job, job["output_fd"]))
        result["code"] = 0
    result["working_full"] = _working_full(job)
    return result


def main(argv: list[str]) -> int:
    # The job comes as hex of marshal and the status goes as this file's own JSON: neither
    # needs the json module's import (see the module's doc).
    return jail.serve(
        argv,
        _run,
        load=lambda text: marshal.loads(bytes.fromhex(text)),
        dump=lambda result: _json(result).encode("ascii"),
        hide=lambda job: True,  # the participant's code runs as this process's user
    )


if __name__ == "__main__":
    jail.exit_now(main(sys.argv))
