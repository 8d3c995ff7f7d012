"""The sandboxed side of a custom metric: one fresh process scores one submission, then exits.

Started only by :func:`app.custom_metrics.sandbox.run_custom_metric` as
``python -s -P -m app.custom_metrics.child JOB`` (JOB: the job file's path and the status pipe's
number), inside the jail. It limits itself before it imports pandas or loads the organiser's
file, and writes exactly one JSON object to its status pipe, so whatever the organiser's code
prints (to the run's log) cannot corrupt the result. The skeleton (job in, limits, status out) is
every kind's (:func:`app.jail.inside.serve`); this file is the metric's adapter.
"""

import errno
import json
import math
import numbers
import os
import resource
import sys
import traceback
from pathlib import Path
from typing import Any

# The runners' shared half (app.jail.bwrap.RUNNER_CODE binds it beside this package in the jail).
from app.jail import inside as jail

PARTICIPANT_ERROR_NAME = "ParticipantVisibleError"
_MESSAGE_CAP = 10_000  # the parent cuts further; this only bounds the result file
_reserve: bytearray | None = None  # freed on MemoryError so the failure can still be reported
_limited_processes: list[int] = []  # the process limit, once set


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this process if the server dies mid-scoring (best effort)."""
    try:
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # it died before the request took effect
        os._exit(1)


def _load_job(text: str) -> dict[str, Any]:
    """The job file's job, with the pipe numbers the runner added beside its path."""
    given = json.loads(text)
    job: dict[str, Any] = json.loads(Path(given.pop("job_file")).read_text(encoding="utf-8"))
    return {**job, **given}


def _limits(job: dict[str, Any]) -> list[jail.Limit]:
    # RLIMIT_CPU's hard limit is one second later: SIGXCPU first, then SIGKILL. RLIMIT_NPROC
    # and RLIMIT_CORE are every kind's (jail.job_limits); the process limit is enforced because
    # the jail's uid is not root outside it (app.jail.bwrap.jail_user).
    return [
        (resource.RLIMIT_AS, job["memory_bytes"], job["memory_bytes"]),
        (resource.RLIMIT_CPU, job["cpu_seconds"], job["cpu_seconds"] + 1),
        (resource.RLIMIT_FSIZE, job["output_bytes"], job["output_bytes"]),
    ]


def _prepare(job: dict[str, Any]) -> None:
    global _reserve
    if job["parent_pid"] is not None:  # in the jail, bubblewrap's --die-with-parent does this
        _die_with_parent(job["parent_pid"])
    if job.get("max_processes"):
        _limited_processes.append(job["max_processes"])
    _reserve = bytearray(8 * 1024 * 1024)


def _hit_process_limit(exc: BaseException) -> bool:
    if not _limited_processes:
        return False
    if isinstance(exc, OSError) and exc.errno == errno.EAGAIN:  # fork, spawn, clone
        return True
    return isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)


def _is_participant_visible(exc: BaseException) -> bool:
    # By class name anywhere in the MRO, as Kaggle does: metric files define their own class.
    return any(cls.__name__ == PARTICIPANT_ERROR_NAME for cls in type(exc).__mro__)


def _describe_failure(exc: BaseException, *, during: str) -> dict[str, Any]:
    global _reserve
    if isinstance(exc, MemoryError):
        _reserve = None
        status = "memory"
    elif _hit_process_limit(exc):
        status = "processes"
    elif _is_participant_visible(exc):
        status = "participant_error"
    else:
        status = "error"
    try:
        message = str(exc)
    except Exception:  # a user exception whose __str__ fails still fails the submission cleanly
        message = f"<{type(exc).__name__} whose message could not be read>"
    return {
        "status": status,
        "during": during,
        "message": message[:_MESSAGE_CAP],
        "traceback": _format_traceback(exc)[-_MESSAGE_CAP:],
    }


def _format_traceback(exc: BaseException) -> str:
    # The organiser debugs their file, not this one: drop the leading frames that are ours.
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__ and tb.tb_next is not None:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _load_score(metric_path: Path) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("podium_custom_metric", metric_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {metric_path}")
    module = importlib.util.module_from_spec(spec)
    # Registered like an imported module, so dataclasses and pickling inside it work.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    score = getattr(module, "score", None)
    if not callable(score):
        raise TypeError("the metric file does not define a function named 'score'")
    return score


def _as_score(value: Any) -> float | str:
    """The value as a float, or a description of why it is not a usable score."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        text = repr(value)
        if len(text) > 200:
            text = text[:199] + "…"
        return f"a {type(value).__module__}.{type(value).__qualname__}, not a number: {text}"
    number = float(value)
    if not math.isfinite(number):
        return f"a non-finite number: {number}"
    return number


def run(job: dict[str, Any]) -> dict[str, Any]:
    from app.custom_metrics import frames

    try:
        inputs = frames.load_inputs(
            answer_key=Path(job["answer_key"]),
            submission=Path(job["submission"]) if job["submission"] else None,
            id_column=job["id_column"],
            solution_only_columns=job["solution_only_columns"],
        )
    except frames.SubmissionRejected as exc:
        return {"status": "submission_rejected", "message": str(exc)}
    except frames.AnswerKeyRejected as exc:
        return {"status": "answer_key_rejected", "message": str(exc)}
    except MemoryError as exc:
        return _describe_failure(exc, during="reading the answer key and the submission")

    try:
        score = _load_score(Path(job["metric_path"]))
    except BaseException as exc:  # noqa: BLE001 - the organiser's SystemExit fails it too
        return _describe_failure(exc, during="loading the metric file")

    scores: dict[str, float] = {}
    for part, mask in inputs.parts().items():
        solution, submission = inputs.frames(mask)
        during = f"calling score() on the {'scored' if part == 'score' else part} rows"
        try:
            value = score(solution, submission, inputs.id_column, **job["params"])
        except BaseException as exc:  # noqa: BLE001
            return _describe_failure(exc, during=during)
        checked = _as_score(value)
        if isinstance(checked, str):
            return {"status": "invalid_result", "during": during, "message": checked}
        scores[part] = checked
    if inputs.usage is None:
        scores["public"] = scores["private"] = scores["score"]
    return {"status": "ok", "has_usage": inputs.usage is not None, **scores}


def _run(job: dict[str, Any]) -> dict[str, Any]:
    _prepare(job)
    return run(job)


def main(argv: list[str]) -> int:
    return jail.serve(
        argv,
        _run,
        load=_load_job,
        limits=_limits,
        on_error=lambda exc: _describe_failure(exc, during="preparing the inputs"),
    )


if __name__ == "__main__":
    jail.exit_now(main(sys.argv))
