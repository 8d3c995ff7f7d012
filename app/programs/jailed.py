"""Running an imported scoring program in the jail, in its platform's layout, and reading what it
gave back as scores.

Inside the jail (:mod:`app.jail`: uid 65534, no network, an empty environment, a read-only system
and Python, its own PID namespace; memory, CPUs and processes held by control groups where the
machine allows, else by rlimits; everything killed at the wall limit)::

    /app/program/           Codabench / CodaLab: the program, writable (its working directory)
    /app/evaluation_script/ EvalAI: the package, imported as a package (read-only)
    /app/input/ref/         the phase's answer key: the reference data (read-only)
    /app/input/res/         the submission, unzipped when it is a zip (read-only)
    /app/output/            where scores.json or scores.txt are written (writable, bounded)
    /app/shared/            Codabench's shared folder (writable, small)

A code submission to a phase with an ingestion program runs :func:`run_ingestion` first
(Codabench's prediction step), in a jail of its own that holds no reference data::

    /app/program/           the ingestion program, writable (its working directory)
    /app/ingested_program/  the participant's code, writable
    /app/input_data/        the task's input data (read-only)
    /app/output/            what it writes: sent back as a zip, then the scoring step's input/res

The metadata command's ``$program``, ``$input``, ``$output``, ``$shared``... are these paths, and
programs that hard-code ``/app/input/ref`` find it there. Only the runner
(:mod:`app.programs.inside`) and these folders are bound in: no server file, no other phase's key.
The program's output (stdout and stderr) is the host's only: it may print the reference data.
"""

import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.bundles.archive import Limits
from app.bundles.errors import BundleError
from app.bundles.model import BundleFile, Ingestion, Program
from app.bundles.runner import MAX_SCORES_BYTES, coda_layout, ingestion_layout, materialise
from app.jail.bwrap import (
    APP_ROOT,
    CODE_DIR,
    RUNNER_CODE,
    TMP_BYTES,
    check_jail,
)
from app.jail.cgroups import run_cgroup
from app.jail.runner import JailSpec, RunLog, limits_for_job, run_jailed

MIB = 1024**2
ROOT = "/app"
PACKAGE = "evaluation_script"  # EvalAI-Starters' name for the package, and its local tests'
MAX_PROCESSES = 256
_STATUS_BYTES = 8 * MIB  # evaluate()'s whole return value comes back this way
_SHARED_BYTES = 16 * MIB
_RUNNER = f"{CODE_DIR}/program.py"
_CODE = ((str(APP_ROOT / "app" / "programs" / "inside.py"), _RUNNER), *RUNNER_CODE)
_PROGRAM_SOURCE = f"{CODE_DIR}/program-source"
_CODE_SOURCE = f"{CODE_DIR}/code-source"  # the participant's code, before it is copied
_BARE_PYTHON = re.compile(r"python(3(\.\d+)?)?")


@dataclass(frozen=True)
class ProgramLimits:
    """What one run of a scoring program may use (``PODIUM_PROGRAM_*``)."""

    wall_seconds: float = 600.0
    memory_mb: int = 2048
    cpus: float = 1.0
    output_mb: int = 64
    max_processes: int = MAX_PROCESSES


@dataclass(frozen=True)
class JailedRun:
    """What came back: the runner's status (None when it reported nothing: killed, crashed), the
    program's output as it interleaved, and what the host saw of the end."""

    status: dict[str, Any] | None
    log: RunLog
    timed_out: bool
    oom_kills: int
    returncode: int | None
    seconds: float
    # The ingestion step's output folder as a zip: the bytes received (None: past its limit).
    output_bytes: int | None = None


class SubmissionUnreadable(Exception):
    """The submission cannot be laid out for the program (a zip that escapes, too large...)."""


def run_program(
    program: Program,
    reference: Sequence[BundleFile],
    submission: bytes,
    *,
    submission_name: str,
    limits: ProgramLimits,
    phase_codename: str = "",
    submission_metadata: Mapping[str, Any] | None = None,
    unzip_limits: Limits | None = None,
) -> JailedRun:
    """Run ``program`` on ``submission`` against ``reference`` in the jail. Raises
    :class:`~app.jail.bwrap.JailUnavailable` where the jail cannot run here, and
    :class:`SubmissionUnreadable` for a submission zip that cannot be unpacked safely."""
    check_jail()
    with tempfile.TemporaryDirectory(prefix="podium-program-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp)
        work.chmod(0o711)  # searchable, not listable: the jail's user binds its parts by name
        if program.kind == "evalai":
            return _evalai(
                program,
                reference,
                submission,
                work=work,
                name=submission_name,
                limits=limits,
                phase_codename=phase_codename,
                metadata=dict(submission_metadata or {}),
            )
        return _coda(program, reference, submission, work, submission_name, limits, unzip_limits)


def _coda(
    program: Program,
    reference: Sequence[BundleFile],
    submission: bytes,
    work: Path,
    name: str,
    limits: ProgramLimits,
    unzip_limits: Limits | None,
) -> JailedRun:
    try:
        layout = coda_layout(
            program, reference, submission, submission_name=name, root=ROOT, limits=unzip_limits
        )
    except BundleError as exc:
        raise SubmissionUnreadable(exc.detail) from None
    materialise(layout, work)
    _open_up(work)
    size = sum(len(f.data) for f in program.files)
    argv = _python_first(layout.argv)
    job = {
        "kind": "coda",
        "argv": argv,
        "program_source": _PROGRAM_SOURCE,
        "program_dir": f"{ROOT}/program",
        "output_dir": f"{ROOT}/output",
        "max_scores_bytes": MAX_SCORES_BYTES,
        "env": _env(),
    }
    return _jailed(
        job,
        files={
            _PROGRAM_SOURCE: work / "program",
            f"{ROOT}/input/ref": work / "input" / "ref",
            f"{ROOT}/input/res": work / "input" / "res",
        },
        writable={
            f"{ROOT}/program": size + 64 * MIB,  # the program writes beside itself at times
            f"{ROOT}/output": limits.output_mb * MIB,
            f"{ROOT}/shared": _SHARED_BYTES,
        },
        chdir=f"{ROOT}/program",
        limits=limits,
    )


def run_ingestion(
    ingestion: Ingestion,
    code: Mapping[str, bytes],
    *,
    limits: ProgramLimits,
    output: Path,
) -> JailedRun:
    """Codabench's prediction step in the jail: the ingestion program runs the participant's
    ``code`` (a code submission's files) on the input data; what it writes to ``/app/output``
    comes back as a zip in ``output`` (``output_bytes``; None past ``output_mb``). The reference
    data is not in this jail at all. Raises :class:`~app.jail.bwrap.JailUnavailable` where the
    jail cannot run here."""
    check_jail()
    with tempfile.TemporaryDirectory(prefix="podium-ingestion-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp)
        work.chmod(0o711)
        layout = ingestion_layout(ingestion, code, root=ROOT)
        materialise(layout, work)
        _open_up(work)
        job = {
            "kind": "ingestion",
            "argv": _python_first(layout.argv),
            "program_source": _PROGRAM_SOURCE,
            "program_dir": f"{ROOT}/program",
            "code_source": _CODE_SOURCE,
            "code_dir": f"{ROOT}/ingested_program",
            "output_dir": f"{ROOT}/output",
            "max_output_bytes": limits.output_mb * MIB,
            "env": _env(),
        }
        program_size = sum(len(f.data) for f in ingestion.files)
        code_size = sum(len(data) for data in code.values())
        return _jailed(
            job,
            files={
                _PROGRAM_SOURCE: work / "program",
                _CODE_SOURCE: work / "ingested_program",
                f"{ROOT}/input_data": work / "input_data",
            },
            writable={
                f"{ROOT}/program": program_size + 64 * MIB,
                # Participants' code writes beside itself at times (a fitted model, a cache).
                f"{ROOT}/ingested_program": code_size + 64 * MIB,
                f"{ROOT}/output": limits.output_mb * MIB,
            },
            chdir=f"{ROOT}/program",
            limits=limits,
            # The zip's own headers on top of the folder's bytes.
            sink=(output, limits.output_mb * MIB + 16 * MIB),
        )


def _python_first(argv: Sequence[str]) -> list[str]:
    out = list(argv)
    if out and _BARE_PYTHON.fullmatch(out[0]):
        # The images these programs ran in answered to `python` and `python3`: both are the
        # scorer runtime's Python here, whatever the install names its executables.
        out[0] = sys.executable
    return out


def _evalai(
    program: Program,
    reference: Sequence[BundleFile],
    submission: bytes,
    *,
    work: Path,
    name: str,
    limits: ProgramLimits,
    phase_codename: str,
    metadata: dict[str, Any],
) -> JailedRun:
    if not reference:
        raise SubmissionUnreadable("the phase has no annotation file to score against")
    annotation = reference[0]
    files = {f"program/{f.path}": f.data for f in program.files}
    files[f"input/ref/{annotation.path}"] = annotation.data
    # EvalAI hands the file over as uploaded: a zip stays a zip.
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = base if base not in ("", ".", "..") else "submission"
    files[f"input/res/{base}"] = submission
    for path, data in files.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for sub in ("program", "input/ref", "input/res"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    _open_up(work)
    job = {
        "kind": "evalai",
        "package_parent": ROOT,
        "package": PACKAGE,
        "annotation": f"{ROOT}/input/ref/{annotation.path}",
        "submission": f"{ROOT}/input/res/{base}",
        "phase_codename": phase_codename,
        "submission_metadata": metadata,
    }
    return _jailed(
        job,
        files={
            f"{ROOT}/{PACKAGE}": work / "program",
            f"{ROOT}/input/ref": work / "input" / "ref",
            f"{ROOT}/input/res": work / "input" / "res",
        },
        writable={f"{ROOT}/output": limits.output_mb * MIB},
        chdir="/tmp",
        limits=limits,
    )


def _open_up(work: Path) -> None:
    """Folders searchable and files readable by the jail's user (it binds them by name)."""
    for dirpath, dirnames, filenames in os.walk(work):
        for d in dirnames:
            os.chmod(os.path.join(dirpath, d), 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)


def _env() -> dict[str, str]:
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",  # so a killed program's last prints still reach the host
        # One thread per BLAS pool: a many-core server would start one per core, each a process
        # against the jail's process limit.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def _jailed(
    job: dict[str, Any],
    *,
    files: dict[str, Path],
    writable: dict[str, int],
    chdir: str,
    limits: ProgramLimits,
    sink: tuple[Path, int] | None = None,
) -> JailedRun:
    """The program's run in the shared runner's terms (:func:`app.jail.runner.run_jailed`)."""
    # The writable folders, /tmp and /dev/shm are in memory and charged to the run's group.
    group = run_cgroup(
        memory_bytes=limits.memory_mb * MIB + sum(writable.values()) + 2 * TMP_BYTES,
        cpus=limits.cpus,
        processes=limits.max_processes + 8,  # bubblewrap and the shells that start it count too
    )
    ran = run_jailed(
        JailSpec(
            command=[sys.executable, "-I", _RUNNER],
            job={
                **job,
                # The run's own pids group where there is one (RLIMIT_NPROC counts every process
                # of uid 65534 on the machine); the address space where no memory group holds.
                **limits_for_job(
                    group, max_processes=limits.max_processes, address_space=limits.memory_mb * MIB
                ),
            },
            env=_env(),
            wall_seconds=limits.wall_seconds,
            code=_CODE,
            files=files,
            writable=writable,
            chdir=chdir,
            hostname="podium-program",
            group=group,
            status_bytes=_STATUS_BYTES,
            output=sink,
        )
    )
    return JailedRun(
        status=ran.status,
        log=ran.log,
        timed_out=ran.timed_out,
        oom_kills=ran.oom_kills,
        returncode=ran.exit,
        seconds=ran.seconds,
        output_bytes=ran.output_bytes,
    )
