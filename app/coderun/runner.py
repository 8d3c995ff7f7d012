"""Running a participant's code in the jail, Kaggle's layout, and naming what came of it.

Inside the jail (:mod:`app.jail`), as Kaggle lays it out so that Kaggle code runs unchanged::

    /kaggle/input/{slug}/   every data file of the competition, read-only
    /kaggle/working/        the current directory, writable, at most working_mb (in memory)
    /kaggle/code/           the participant's files, read-only (a zip's other modules import)
    /tmp                    fresh and small

The code sees ``PODIUM_INPUT_DIR``, ``HOME`` and ``PATH`` and nothing else of any environment,
runs as an unprivileged user with no network, its own PID namespace and a read-only system and
Python; its memory is capped by a control group where the machine allows (else ``RLIMIT_AS`` per
process), its CPUs likewise, its processes by ``RLIMIT_NPROC`` (and a control group), and at the
wall limit everything it started is killed. Its output, ``/kaggle/working/submission.csv``, comes
back over a pipe into the caller's folder.
"""

import hashlib
import marshal
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.coderun.code import Entry, InvalidCode, unpack_code
from app.coderun.limits import CodeLimits
from app.coderun.outcome import (
    CodeRunOutcome,
    Provenance,
    RunLog,
    RunnerError,
)
from app.coderun.runtime import runtime_fingerprint
from app.coderun.verdict import Facts, verdict
from app.jail.bwrap import (
    APP_ROOT,
    CODE_DIR,
    RUNNER_CODE,
    TMP_BYTES,
    check_jail,
    python_paths,
    unprivileged,
    visible_to_jail,
)
from app.jail.cgroups import Cgroup, run_cgroup
from app.jail.runner import JailSpec, limits_for_job, run_jailed

MIB = 1024**2
INPUT_ROOT = "/kaggle/input"
WORKING_DIR = "/kaggle/working"
CODE_INSIDE = "/kaggle/code"
MAX_PROCESSES = 256  # processes and threads at once (a fork bomb stops here)
_STATUS_BYTES = 64 * 1024
_WRAPPER = f"{CODE_DIR}/run.py"
_CODE = ((str(APP_ROOT / "app" / "coderun" / "inside.py"), _WRAPPER), *RUNNER_CODE)
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,99}$")
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$")  # as app.datafiles allows


@dataclass(frozen=True)
class InputFile:
    """One data file of the competition, shown as ``/kaggle/input/{slug}/{name}``; ``sha256``
    where the caller knows it already (else it is computed)."""

    name: str
    path: Path
    sha256: str | None = None


def run_code(
    *,
    code: Path,
    filename: str,
    slug: str,
    inputs: Sequence[InputFile],
    limits: CodeLimits,
    output_dir: Path,
    max_output_bytes: int,
    max_code_bytes: int,
    max_processes: int = MAX_PROCESSES,
) -> CodeRunOutcome:
    """Run the code stored at ``code`` (uploaded as ``filename``) in the jail on ``inputs``.

    On success the outcome's ``output`` is ``output_dir / "submission.csv"`` (at most
    ``max_output_bytes``); the caller then takes it through intake like an uploaded file. A
    failure of the participant's code is an outcome, never an exception. Raises
    :class:`~app.jail.bwrap.JailUnavailable` where the jail cannot run here (a failure of the
    platform: refund), :class:`~app.coderun.code.InvalidCode` for code that upload should have
    refused, :class:`~app.coderun.outcome.RunnerError` where the runner in the jail failed (the
    platform's failure too), and ``ValueError`` for a slug or input name the layout cannot hold.
    """
    if not _SLUG.match(slug):
        raise ValueError(f"the slug {slug!r} cannot name a folder in /kaggle/input")
    names = [item.name for item in inputs]
    bad = [n for n in names if not _FILE_NAME.match(n) or ".." in n] + sorted(
        {n for n in names if names.count(n) > 1}
    )
    if bad:
        raise ValueError(f"data file names the layout cannot hold: {bad[:5]}")
    check_jail()
    size = code.stat().st_size
    if size > max_code_bytes:  # refused before reading it
        raise InvalidCode(
            f"the code is {size} bytes; a code submission may be at most {max_code_bytes} bytes"
        )
    data = code.read_bytes()
    provenance = Provenance(
        code_sha256=hashlib.sha256(data).hexdigest(),
        inputs_sha256=inputs_digest(inputs),
        runtime_fingerprint=runtime_fingerprint(),
    )
    with tempfile.TemporaryDirectory(prefix="podium-run-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp)
        work.chmod(0o711)  # searchable, not listable: the jail's user binds its parts by name
        code_dir = work / "code"
        code_dir.mkdir(mode=0o755)
        code_dir.chmod(0o755)
        entry = unpack_code(filename, data, code_dir, max_bytes=max_code_bytes)
        files = {CODE_INSIDE: code_dir}
        for item in inputs:
            files[f"{INPUT_ROOT}/{slug}/{item.name}"] = _visible(item, work)
        return _run(
            entry=entry,
            files=files,
            slug=slug,
            limits=limits,
            output=output_dir / "submission.csv",
            max_output_bytes=max_output_bytes,
            max_processes=max_processes,
            provenance=provenance,
        )


def inputs_digest(inputs: Sequence[InputFile]) -> str:
    """One sha256 over every input's name and content digest, in name order."""
    lines = sorted(f"{item.name}\0{item.sha256 or file_sha256(item.path)}\n" for item in inputs)
    return hashlib.sha256("".join(lines).encode()).hexdigest()


_DIGESTS: dict[tuple[str, int, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """The file's sha256, remembered per process while its size, inode and mtime are unchanged
    (a competition's data files are read for every run)."""
    seen = path.stat()
    key = (str(path), seen.st_ino, seen.st_size, seen.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        if len(_DIGESTS) > 1024:
            _DIGESTS.clear()
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def _visible(item: InputFile, work: Path) -> Path:
    """The file, or a copy the unprivileged jail may read (stored files are the server's only)."""
    if visible_to_jail(item.path):
        return item.path.resolve()
    copies = work / "inputs"
    copies.mkdir(mode=0o711, exist_ok=True)
    copy = copies / item.name
    shutil.copyfile(item.path, copy)
    copy.chmod(0o644)
    return copy


def _run(
    *,
    entry: Entry,
    files: dict[str, Path],
    slug: str,
    limits: CodeLimits,
    output: Path,
    max_output_bytes: int,
    max_processes: int,
    provenance: Provenance,
) -> CodeRunOutcome:
    # The working folder, /tmp and /dev/shm are in memory, charged to the run's memory group:
    # they count on top of memory_mb, so that the code itself has memory_mb whatever it writes.
    group = run_cgroup(
        memory_bytes=(limits.memory_mb + limits.working_mb) * MIB + 2 * TMP_BYTES,
        cpus=limits.cpus,
        processes=max_processes + 8,  # bubblewrap and the shells that start it count as well
    )
    held = group.held if group else set()
    ran = run_jailed(
        _spec(
            entry=entry,
            files=files,
            slug=slug,
            limits=limits,
            output=output,
            max_output_bytes=max_output_bytes,
            # The run's own pids group where there is one: RLIMIT_NPROC counts every process of
            # uid 65534 on the machine, so one run's fork bomb would starve the runs beside it.
            job_limits=limits_for_job(
                group, max_processes=max_processes, address_space=limits.memory_mb * MIB
            ),
            group=group,
        )
    )
    facts = Facts(
        timed_out=ran.timed_out,
        oom_kills=ran.oom_kills,
        returncode=ran.exit,
        received=ran.output_bytes,
        log=RunLog(
            head=_scrub(ran.log.head), tail=_scrub(ran.log.tail), total_bytes=ran.log.total_bytes
        ),
        memory_by_rlimit="memory" not in held,
    )
    status, seconds = ran.status, ran.seconds
    try:
        found = verdict(status, facts, limits=limits, max_output_bytes=max_output_bytes)
    except RunnerError:
        output.unlink(missing_ok=True)  # nothing half-written is left for the caller
        raise
    if found.failure is not None:
        output.unlink(missing_ok=True)
    return CodeRunOutcome(
        output=output if found.failure is None else None,
        failure=found.failure,
        message=found.message,
        log=facts.log,
        provenance=provenance,
        limits=limits,
        seconds=seconds,
        exit_code=found.exit_code,
        cell=found.cell,
        enforced={
            "memory": "cgroup" if "memory" in held else "rlimit_as",
            "cpus": "cgroup" if "cpus" in held else "none",
            "processes": _process_limit(held),
            "working": "tmpfs",
        },
    )


def _spec(
    *,
    entry: Entry,
    files: dict[str, Path],
    slug: str,
    limits: CodeLimits,
    output: Path,
    max_output_bytes: int,
    job_limits: dict[str, int | None],
    group: Cgroup | None,
) -> JailSpec:
    """The run in the shared runner's terms: Kaggle's layout, the runner (:mod:`inside`) and
    its job, submission.csv handed back over a pipe of at most ``max_output_bytes``."""
    env = {
        "PODIUM_INPUT_DIR": f"{INPUT_ROOT}/{slug}",
        "HOME": "/tmp",
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
    }
    job = {
        "kind": entry.kind,
        "entry": entry.path,
        "code_dir": CODE_INSIDE,
        "working_dir": WORKING_DIR,
        "env": env,
        "max_output_bytes": max_output_bytes,
        **job_limits,
    }
    # A script's runner needs only the standard library: no site-packages to scan (-S).
    python = [sys.executable, "-I", *(["-S"] if entry.kind == "script" else [])]
    return JailSpec(
        command=[*python, _WRAPPER],
        job=job,
        encode=lambda job: marshal.dumps(job).hex(),  # the runner reads it without json
        env=env,
        wall_seconds=limits.wall_seconds,
        code=_CODE,
        files=files,
        dirs=[f"{INPUT_ROOT}/{slug}"],
        writable={WORKING_DIR: limits.working_mb * MIB},
        chdir=WORKING_DIR,
        hostname="podium-run",
        group=group,
        status_bytes=_STATUS_BYTES,
        output=(output, max_output_bytes),
    )


# Where a log shows the server's Python (a library's frames in a traceback): Kaggle's layout
# instead, so a participant reads /kaggle/... paths only and learns nothing of the server's.
KAGGLE_PYTHON = "/kaggle/lib/python"


def _scrub(data: bytes) -> bytes:
    for path in python_paths():
        data = data.replace(path.encode(), KAGGLE_PYTHON.encode())
    return data


def _process_limit(held: set[str]) -> str:
    if "processes" in held:
        return "cgroup"
    # RLIMIT_NPROC holds unless the jail's uid is root outside it (the root-made jail).
    return "rlimit_nproc" if unprivileged() or os.geteuid() != 0 else "none"
