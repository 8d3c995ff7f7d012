"""Checking an uploaded metric file, and scoring a submission with it in a jailed child process.

The organiser's code never runs in the server process: each scoring starts a fresh Python
(:mod:`app.custom_metrics.child`) under bubblewrap (:mod:`app.jail`): its own
user, PID, network, IPC and mount namespaces, an unprivileged uid, an empty environment, a
read-only system, and only the metric file, the answer key and the submission to read. It has an
address-space, CPU-time and file-size limit and a wall-clock deadline, after which the whole PID
namespace is killed. Where the jail cannot start, custom metrics are refused, unless the host set
the development-only opt-out (:attr:`SandboxLimits.allow_unjailed`).
"""

import ast
import json
import logging
import math
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.jail.bwrap import (
    APP_ROOT,
    CODE_DIR,
    JOB_DIR,
    RUNNER_CODE,
    JailUnavailable,
    base_env,
    check_jail,
    pids_cgroup,
    visible_to_jail,
)
from app.jail.runner import JailSpec, run_jailed
from app.scoring.core import ScoreResult, ScoringError

log = logging.getLogger(__name__)

PARTICIPANT_MESSAGE_LIMIT = 280
GENERIC_FAILURE = "the scoring function failed; the host has been notified"
_OUTPUT_SHOWN = 4000  # characters of the metric's own output kept in a host message
_CHILD_ENV_PASSED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
_APP_ROOT = APP_ROOT
# The child's own code, read-only in the jail: the package file and this package, nothing else.
_CODE = (
    *RUNNER_CODE,  # app/__init__.py and the runners' shared half, app.jail.inside
    (str(_APP_ROOT / "app" / "custom_metrics"), f"{CODE_DIR}/app/custom_metrics"),
)
_RESULT_BYTES = 1 << 20  # the child's result is a few KB; more than this is not a result
# Where the child finds its files inside the jail; nothing else of the server is there.
_INSIDE = {
    "metric_path": f"{JOB_DIR}/metric.py",
    "answer_key": f"{JOB_DIR}/answer_key",
    "submission": f"{JOB_DIR}/submission",
    "job": f"{JOB_DIR}/job.json",
}


@dataclass(frozen=True)
class SandboxLimits:
    """What one scoring run may use.

    ``memory_bytes`` bounds the child's address space, which includes roughly 350 MB for Python,
    numpy, pandas and pyarrow themselves. ``timeout_seconds`` is wall-clock time for the whole run,
    starting the interpreter and reading both files included. ``output_bytes`` bounds each file
    the metric writes; what it prints goes to the run's log, of which the host keeps the first
    and last bytes (:class:`app.jail.runner.RunLog`).
    """

    timeout_seconds: float = 60.0
    memory_bytes: int = 2 * 1024**3
    output_bytes: int = 16 * 1024**2
    # Processes and threads at once inside the jail (RLIMIT_NPROC, counted per jail).
    max_processes: int = 256
    # The host's development-only opt-out: where the jail cannot start, run unjailed anyway.
    allow_unjailed: bool = False

    def __post_init__(self) -> None:
        if not self.timeout_seconds > 0:
            raise ValueError("timeout_seconds must be positive")
        if self.memory_bytes <= 0 or self.output_bytes <= 0 or self.max_processes <= 0:
            raise ValueError("memory_bytes, output_bytes and max_processes must be positive")


class InvalidMetricSource(ValueError):
    """An uploaded metric file cannot be used; the message tells the organiser what to fix."""


class CustomMetricFailure(ScoringError):
    """Scoring with a custom metric failed.

    ``participant_message`` is safe to show to the participant (it is also ``message`` and
    ``str(exc)``, as for any :class:`~app.scoring.core.ScoringError`); ``host_message`` is for the
    organiser and the logs only and may hold a traceback and the metric's output.

    ``kind`` is one of ``"submission"`` (the submission does not match the key),
    ``"participant_error"`` (the metric raised ``ParticipantVisibleError``), ``"error"``,
    ``"timeout"``, ``"memory"``, ``"processes"`` (the jail's process limit), ``"invalid_result"``,
    ``"answer_key"``, ``"crash"`` or ``"jail"`` (the jail cannot start on this server).
    ``source`` is ``"submission"`` for the first two, ``"answer_key"`` for a key the metric cannot
    use, else ``"metric"``.
    """

    def __init__(self, participant_message: str, host_message: str, *, kind: str = "error") -> None:
        if kind in ("submission", "participant_error"):
            source = "submission"
        elif kind == "answer_key":
            source = "answer_key"
        else:
            source = "metric"
        super().__init__(participant_message, source=source, kind=kind)
        self.participant_message = participant_message
        self.host_message = host_message


def validate_metric_source(source: bytes) -> None:
    """Check, without running it, that ``source`` is a Python file defining ``score``.

    Raises :class:`InvalidMetricSource` naming the problem: not UTF-8, a syntax error and its line,
    no top-level ``def score``, or a ``score`` that cannot take
    ``(solution, submission, row_id_column_name)``.
    """
    try:
        text = source.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = source[: exc.start].count(b"\n") + 1
        raise InvalidMetricSource(f"the metric file is not UTF-8 text (line {line})") from None
    if "\x00" in text:
        raise InvalidMetricSource("the metric file contains NUL bytes; it is not Python source")
    try:
        tree = ast.parse(text, filename="metric.py")
        # compile() finds what the parser lets through ('return' outside a function, ...).
        compile(tree, "metric.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" on line {exc.lineno}" if exc.lineno else ""
        raise InvalidMetricSource(f"the metric file has a syntax error{where}: {exc.msg}") from None
    definition = _last_top_level_score(tree)
    if definition is None:
        raise InvalidMetricSource(
            "the metric file must define a top-level function "
            "'def score(solution, submission, row_id_column_name, **params)'"
        )
    if isinstance(definition, ast.AsyncFunctionDef):
        raise InvalidMetricSource("'score' must be a plain function, not 'async def'")
    if not isinstance(definition, ast.FunctionDef):
        raise InvalidMetricSource(
            f"'score' is last bound on line {definition.lineno} by something other than 'def'; "
            "define it as 'def score(solution, submission, row_id_column_name, **params)'"
        )
    args = definition.args
    positional = len(args.posonlyargs) + len(args.args)
    if positional < 3 and args.vararg is None:
        raise InvalidMetricSource(
            f"'score' (line {definition.lineno}) takes {positional} positional argument(s); it "
            "must take (solution, submission, row_id_column_name), then any params by keyword"
        )


def _last_top_level_score(tree: ast.Module) -> ast.stmt | None:
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "score":
            found = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "score" for t in targets):
                found = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((alias.asname or alias.name) == "score" for alias in node.names):
                found = node
    return found


def run_custom_metric(
    *,
    metric_path: Path,
    answer_key: Path,
    submission: Path,
    id_column: str | None,
    params: dict[str, Any],
    limits: SandboxLimits,
    solution_only_columns: Sequence[str] = (),
) -> ScoreResult:
    """Score ``submission`` against ``answer_key`` with the organiser's ``score``, in a child.

    The answer key's columns are the id column (``id_column``, or its first column), the targets,
    an optional ``Usage`` column and ``solution_only_columns`` (e.g. weights the participant does
    not submit); the submission must have exactly the id and target columns and the key's ids.
    ``score`` is called with ``(solution, submission, id_column, **params)`` on the non-Ignored rows
    (the score), the Public rows and the Private rows; without ``Usage``, once on every row.

    Raises :class:`CustomMetricFailure` when the submission is rejected or the metric fails.
    """
    return _score_in_child(
        metric_path=metric_path,
        answer_key=answer_key,
        submission=submission,
        id_column=id_column,
        params=params,
        limits=limits,
        solution_only_columns=solution_only_columns,
    )


def check_custom_metric(
    *,
    metric_path: Path,
    answer_key: Path,
    id_column: str | None,
    params: dict[str, Any],
    limits: SandboxLimits,
    solution_only_columns: Sequence[str] = (),
) -> ScoreResult:
    """Score the answer key against itself, to prove at upload that the metric can use it.

    Raises :class:`CustomMetricFailure`; every message in it is for the organiser.
    """
    return _score_in_child(
        metric_path=metric_path,
        answer_key=answer_key,
        submission=None,
        id_column=id_column,
        params=params,
        limits=limits,
        solution_only_columns=solution_only_columns,
    )


def jail_problem(limits: SandboxLimits) -> str | None:
    """Why custom metrics cannot run here, or None: the jail works, or the host opted out."""
    try:
        _jailed(limits)
    except CustomMetricFailure as exc:
        return exc.host_message
    return None


def _jailed(limits: SandboxLimits) -> bool:
    """True to run in the jail, False to run without it (the opt-out); else refuse."""
    try:
        check_jail()
    except JailUnavailable as exc:
        if not limits.allow_unjailed:
            raise CustomMetricFailure(
                GENERIC_FAILURE,
                "custom metrics are disabled on this server: they run only in a bubblewrap "
                f"jail, and {exc}. Install bubblewrap (see the README, 'Custom metrics').",
                kind="jail",
            ) from None
        log.warning("custom metrics run WITHOUT a jail (development only): %s", exc)
        return False
    return True


def _score_in_child(
    *,
    metric_path: Path,
    answer_key: Path,
    submission: Path | None,
    id_column: str | None,
    params: dict[str, Any],
    limits: SandboxLimits,
    solution_only_columns: Sequence[str],
) -> ScoreResult:
    jailed = _jailed(limits)
    with tempfile.TemporaryDirectory(prefix="podium-metric-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp)
        job_path = work / "job.json"
        # Host path -> the path the child opens: under /job in the jail, the same one outside.
        inputs = {"metric_path": metric_path, "answer_key": answer_key, "submission": submission}
        seen = {
            name: (_INSIDE[name] if jailed else str(Path(path).resolve()))
            for name, path in inputs.items()
            if path is not None
        }
        job = {
            **seen,
            "submission": seen.get("submission"),
            "id_column": id_column,
            "params": params,
            "solution_only_columns": list(solution_only_columns),
            "parent_pid": None if jailed else os.getpid(),  # bwrap's --die-with-parent instead
            "memory_bytes": limits.memory_bytes,
            # A backstop for a child whose parent died; the wall clock normally stops it first.
            "cpu_seconds": math.ceil(limits.timeout_seconds) + 2,
            "output_bytes": limits.output_bytes,
            # Unjailed, the count would be the whole user's on this machine: jailed, the jail's.
            "max_processes": limits.max_processes if jailed else None,
        }
        job_path.write_text(json.dumps(job), encoding="utf-8")
        if jailed:
            files = {
                _INSIDE[name]: _visible_copy(Path(path), work, name)
                for name, path in inputs.items()
                if path is not None
            }
            files[_INSIDE["job"]] = _visible_copy(job_path, work, "job")
        # A root-made jail's limit: bubblewrap and the shell that starts it count as well.
        cgroup = pids_cgroup(limits.max_processes + 4) if jailed else None
        ran = run_jailed(
            JailSpec(
                command=_child_command(),
                # The job file holds the job; the runner adds its pipe's number beside its path.
                job={"job_file": _INSIDE["job"] if jailed else str(job_path)},
                env=_jail_env() if jailed else _child_env(work),
                wall_seconds=limits.timeout_seconds,
                code=_CODE,
                files=files if jailed else {},
                group=cgroup,
                hostname="podium-metric",
                status_bytes=_RESULT_BYTES,
                jailed=jailed,
                cwd=None if jailed else work,
            )
        )
    output = ran.log.text()[-_OUTPUT_SHOWN:]
    return _interpret(ran.status, ran.exit, ran.timed_out, output, limits)


def _visible_copy(path: Path, work: Path, name: str) -> Path:
    """``path``, or a copy the unprivileged jail may read (stored files are the server's only)."""
    if visible_to_jail(path):
        return path.resolve()
    work.chmod(0o711)  # searchable, not listable: bubblewrap binds the copy by its name
    copy = work / f"jail-{name}"
    shutil.copyfile(path, copy)
    copy.chmod(0o644)
    return copy


def _child_command() -> list[str]:
    return [sys.executable, "-s", "-P", "-m", "app.custom_metrics.child"]


# One thread per library, and no allocator that reserves a gigabyte of address space up front
# (pyarrow's jemalloc/mimalloc): both would eat the RLIMIT_AS budget for nothing.
_LEAN = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MALLOC_ARENA_MAX": "2",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}


def _jail_env() -> dict[str, str]:
    return {**base_env(), **_LEAN}


def _child_env(work: Path) -> dict[str, str]:
    # Unjailed (development only): the server's environment minus everything but a few basics.
    env = {name: os.environ[name] for name in _CHILD_ENV_PASSED if name in os.environ}
    env.update(
        HOME=str(work),
        TMPDIR=str(work),
        PYTHONPATH=str(_APP_ROOT),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        **_LEAN,
    )
    return env


def _failure(
    host: str, output: str, *, kind: str, participant: str = GENERIC_FAILURE
) -> CustomMetricFailure:
    if output.strip():
        host += f"\n\nOutput of the metric (its last {_OUTPUT_SHOWN} characters at most):\n{output}"
    return CustomMetricFailure(participant, host, kind=kind)


def _interpret(
    result: dict[str, Any] | None,
    returncode: int | None,
    timed_out: bool,
    output: str,
    limits: SandboxLimits,
) -> ScoreResult:
    if result is not None and result.get("status") == "ok":
        # Complete and written atomically: a late kill (lingering threads) does not undo it.
        return ScoreResult(
            score=float(result["score"]),
            public=_optional_float(result.get("public")),
            private=_optional_float(result.get("private")),
            has_usage=bool(result.get("has_usage", True)),
        )
    if timed_out:
        raise _failure(
            f"the scoring function exceeded the {limits.timeout_seconds:g} s time limit "
            "and was stopped",
            output,
            kind="timeout",
        )
    if result is None:
        raise _failure_without_result(returncode, output, limits)
    status, message = result.get("status"), str(result.get("message", ""))
    during = result.get("during", "scoring")
    trace = result.get("traceback", "")
    if status == "submission_rejected":
        raise _failure(
            f"submission rejected: {message}", output, kind="submission", participant=message
        )
    if status == "answer_key_rejected":
        raise _failure(f"the answer key cannot be used: {message}", output, kind="answer_key")
    if status == "participant_error":
        raise _failure(
            f"the scoring function raised ParticipantVisibleError while {during} "
            f"(its message is shown to the participant, cut at {PARTICIPANT_MESSAGE_LIMIT} "
            f"characters):\n{trace}",
            output,
            kind="participant_error",
            participant=message[:PARTICIPANT_MESSAGE_LIMIT],
        )
    if status == "memory":
        raise _failure(
            f"the scoring function exceeded the memory limit ({_mib(limits.memory_bytes)}) "
            f"while {during}:\n{trace}",
            output,
            kind="memory",
        )
    if status == "processes":
        raise _failure(
            f"the scoring function reached the limit of {limits.max_processes} processes and "
            f"threads at once while {during}, and could not start another:\n{trace}",
            output,
            kind="processes",
        )
    if status == "invalid_result":
        raise _failure(
            f"the scoring function returned {message} while {during}; "
            "a score must be a finite number",
            output,
            kind="invalid_result",
        )
    raise _failure(f"the scoring function failed while {during}:\n{trace}", output, kind="error")


def _failure_without_result(
    returncode: int | None, output: str, limits: SandboxLimits
) -> CustomMetricFailure:
    if "MemoryError" in output or "bad_alloc" in output:
        return _failure(
            f"the scoring process died (exit status {returncode}) after exceeding the memory "
            f"limit ({_mib(limits.memory_bytes)})",
            output,
            kind="memory",
        )
    if returncode is not None and returncode < 0:
        number = -returncode
        name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
        if number == signal.SIGXCPU:
            return _failure(
                f"the scoring process exceeded its CPU time limit "
                f"({math.ceil(limits.timeout_seconds) + 2} s) and was killed by {name}",
                output,
                kind="timeout",
            )
        # Before the deadline only the kernel sends SIGKILL: the CPU hard limit or the OOM killer.
        return _failure(f"the scoring process was killed by {name}", output, kind="crash")
    return _failure(
        f"the scoring process exited with code {returncode} without a result", output, kind="crash"
    )


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _mib(n: int) -> str:
    return f"{n / 1024**2:g} MiB"
