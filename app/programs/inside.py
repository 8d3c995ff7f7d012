"""The program's side in the jail: run an imported scoring program as its platform does, and hand
back what it wrote.

Started only by :func:`app.programs.jailed.run_program` as ``python -I /podium/program.py JOB``,
inside the jail, as the jail's user. It imports nothing of the server (the standard library only:
the program brings its own imports). It limits itself first (the limits pass to all it starts),
then either

- ``evalai``: imports ``/app/evaluation_script`` as a package (its relative imports work) and
  calls ``evaluate(annotation, submission, phase_codename, submission_metadata=...)`` as EvalAI's
  worker does; the returned value goes back as JSON (numpy scalars as plain numbers), or
- ``coda``: copies the program into the writable ``/app/program``, runs the metadata command there
  (Codabench's working directory) and sends back ``/app/output/scores.json`` and
  ``scores.txt``, or
- ``ingestion``: Codabench's prediction step: copies the ingestion program into ``/app/program``
  and the participant's code into ``/app/ingested_program`` (both writable), runs the ingestion
  program's command in ``/app/program``, and sends ``/app/output`` back as a zip over its own
  pipe. The participant's code runs as this process's user, so this process makes itself
  undumpable first: its pipes are not reachable through ``/proc``.

One JSON status goes back over its own pipe; the program's output goes to the log (the host's).
The skeleton (job in, limits, status out) is every kind's (:func:`app.jail.inside.serve`); this
file is the adapter.
"""

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
import traceback
from typing import Any

# The runners' shared half, bound beside this file in the jail (app.jail.bwrap.RUNNER_CODE).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app.jail import inside as jail  # noqa: E402

_SCORE_FILES = ("scores.json", "scores.txt")


def _plain(value: Any) -> Any:
    """What ``json`` cannot write as it is: numpy scalars and arrays, sets, anything else as its
    text (the host's side reads ``np.float64(0.5)`` back as a number)."""
    for method in ("item", "tolist"):
        convert = getattr(value, method, None)
        if callable(convert):
            try:
                return convert()
            except (TypeError, ValueError):
                continue
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def _evalai(job: dict[str, Any]) -> dict[str, Any]:
    import importlib

    sys.path.insert(0, job["package_parent"])
    try:
        package = importlib.import_module(job["package"])
        output = package.evaluate(
            job["annotation"],
            job["submission"],
            job["phase_codename"],
            submission_metadata=job["submission_metadata"],
        )
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the program's failure
        traceback.print_exc()
        return {"status": "error", "error": type(exc).__name__}
    sys.stdout.flush()
    try:
        text = json.dumps(output, default=_plain)
    except (TypeError, ValueError, RecursionError) as exc:
        print(f"evaluate() returned what cannot be read: {exc}", file=sys.stderr)
        return {"status": "error", "error": "unreadable_result"}
    return {"status": "returned", "result": text}


def _copy_program(source: str, target: str) -> None:
    """The program into the writable folder it runs in (Codabench's is writable)."""
    for name in os.listdir(source):
        path = os.path.join(source, name)
        if os.path.isdir(path):
            shutil.copytree(path, os.path.join(target, name), symlinks=False)
        else:
            shutil.copy(path, os.path.join(target, name))


def _read_score_file(path: str, limit: int) -> dict[str, Any] | None:
    try:
        # Not blocking: a FIFO named scores.txt must not hang the run.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as source:
        seen = os.fstat(source.fileno())
        if not stat.S_ISREG(seen.st_mode):
            return {"too_large": False, "not_a_file": True}
        data = source.read(limit + 1)
    if len(data) > limit:
        return {"too_large": True}
    return {"data": base64.b64encode(data).decode("ascii")}


def _run_command(job: dict[str, Any]) -> dict[str, Any]:
    """The program's command, run in its folder: ``{"status": "exited", "code": ...}``, or an
    error status when there is no command or it could not start."""
    argv = job["argv"]
    if not argv:
        return {"status": "error", "error": "no_command"}
    try:
        child = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, cwd=job["program_dir"], env=job["env"]
        )
    except OSError as exc:
        print(f"the command could not start: {exc}", file=sys.stderr)
        return {"status": "error", "error": "not_started"}
    return {"status": "exited", "code": child.wait()}


def _coda(job: dict[str, Any]) -> dict[str, Any]:
    _copy_program(job["program_source"], job["program_dir"])
    result = _run_command(job)
    if result["status"] != "exited":
        return result
    files = {}
    for name in _SCORE_FILES:
        found = _read_score_file(os.path.join(job["output_dir"], name), job["max_scores_bytes"])
        if found is not None:
            files[name] = found
    result["files"] = files
    return result


def _zip_output(folder: str, output_fd: int, limit: int) -> dict[str, Any]:
    """The output folder, regular files only (no link is followed, no FIFO read), as a zip
    written to the output pipe: what the scoring step finds in ``/app/input/res``."""
    import zipfile

    sent = count = 0
    with os.fdopen(output_fd, "wb", closefd=False) as pipe:
        with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
                dirnames.sort()
                for name in sorted(filenames):
                    path = os.path.join(dirpath, name)
                    try:
                        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
                    except OSError:
                        continue  # a link, or gone
                    with os.fdopen(fd, "rb") as source:
                        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
                            continue
                        data = source.read(limit + 1)
                    sent += len(data)
                    if sent > limit:
                        return {"too_large": True, "bytes": sent}
                    archive.writestr(os.path.relpath(path, folder), data)
                    count += 1
    return {"files": count, "bytes": sent}


def _ingestion(job: dict[str, Any]) -> dict[str, Any]:
    _copy_program(job["program_source"], job["program_dir"])
    _copy_program(job["code_source"], job["code_dir"])
    result = _run_command(job)
    if result["status"] == "exited" and result["code"] == 0:
        result["output"] = _zip_output(job["output_dir"], job["output_fd"], job["max_output_bytes"])
    return result


def _run(job: dict[str, Any]) -> dict[str, Any]:
    if job["kind"] == "ingestion":
        return _ingestion(job)
    return _evalai(job) if job["kind"] == "evalai" else _coda(job)


def main(argv: list[str]) -> int:
    # The ingestion step runs the participant's code as this process's user: hide our pipes.
    return jail.serve(argv, _run, hide=lambda job: job["kind"] == "ingestion")


if __name__ == "__main__":
    jail.exit_now(main(sys.argv))
