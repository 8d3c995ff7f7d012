"""The half of the one runner (:mod:`app.jail.runner`) that lives inside the jail, shared by each
kind of untrusted code (custom metrics, imported scoring programs, participants' code runs,
simulation agents and host environments): reading the job, lowering its own limits before any of
that code runs, hiding its pipes, and writing a whole answer to a pipe (:func:`serve` for a run,
:func:`converse` for an episode's worth of answers).

Each kind's runner is a small adapter around these (``app/coderun/inside.py``,
``app/programs/inside.py``, ``app/custom_metrics/child.py``, ``app/simulation/inside.py``,
``app/simulation/env_inside.py``); the jail binds this file beside each of them
(:data:`app.jail.bwrap.RUNNER_CODE`), so a hardening made here lands for every kind at once.

Standard library only, and only ``os`` and ``resource`` at import: a code run pays for every
import at each start.
"""

from __future__ import annotations

import os
import resource

# typing imports re and collections: the checker's names only, never imported at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Job = dict[str, Any]

# (resource, soft, hard) triples for :func:`lower`.
Limit = tuple[int, int, int]


def lower(limits: list[Limit]) -> None:
    """Set each limit, the hard one too (the code cannot raise the soft one again), never above
    what the server itself runs under (its hard limit is the ceiling)."""
    for which, soft, hard in limits:
        _, ceiling = resource.getrlimit(which)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(which, (soft, hard))


def job_limits(job: Job) -> list[Limit]:
    """The limits every runner takes from its job: no core files, and where the caller asks for
    them (no control group holds them), ``max_processes`` and ``address_space``."""
    limits: list[Limit] = [(resource.RLIMIT_CORE, 0, 0)]
    if job.get("max_processes"):
        limits.append((resource.RLIMIT_NPROC, job["max_processes"], job["max_processes"]))
    if job.get("address_space"):
        limits.append((resource.RLIMIT_AS, job["address_space"], job["address_space"]))
    return limits


def undumpable() -> None:
    """Untrusted code that runs as this process's user could otherwise open this process's pipes
    through ``/proc/<pid>/fd`` and speak for the runner."""
    try:
        import ctypes

        pr_set_dumpable = 4
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def write_all(fd: int, data: bytes) -> None:
    """The whole of ``data`` to ``fd`` (a pipe takes it in pieces)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# --- the one runner's skeleton, inside ---------------------------------------------------------
# A one-shot kind (custom metric, scoring program, code run) is :func:`serve` with its ``run``; a
# kind that answers for a whole episode (an agent, a host's environment) is :func:`converse`.

_MESSAGE_CHARS = 2000


def _json_load(text: str) -> Job:
    import json

    job: Job = json.loads(text)
    return job


def _json_dump(result: Job) -> bytes:
    import json

    return json.dumps(result).encode("utf-8")


def _runner_error(exc: BaseException) -> Job:
    return {"status": "runner_error", "message": f"{type(exc).__name__}: {exc}"[:_MESSAGE_CHARS]}


def serve(
    argv: list[str],
    run: Callable[[Job], Job],
    *,
    load: Callable[[str], Job] = _json_load,
    dump: Callable[[Job], bytes] = _json_dump,
    hide: Callable[[Job], bool] | None = None,
    limits: Callable[[Job], list[Limit]] | None = None,
    on_error: Callable[[BaseException], Job] = _runner_error,
) -> int:
    """The inside of every one-shot run: read the job from ``argv[1]`` (``load``), keep its pipes
    from what the code starts, hide this process's ``/proc`` entries where ``hide(job)`` says so
    (the code runs as this process's user), lower the job's limits (and ``limits(job)``'s), then
    ``run(job)`` and write its report, one object (``dump``), to the status pipe. Whatever goes
    wrong becomes ``on_error(exc)``'s report: the host always hears how it ended."""
    job = load(argv[1])
    status_fd, output_fd = job["status_fd"], job.get("output_fd")
    for fd in (status_fd, output_fd):
        if fd is not None:
            os.set_inheritable(fd, False)
    if hide is not None and hide(job):
        undumpable()
    lower(job_limits(job) + (limits(job) if limits is not None else []))
    try:
        result = run(job)
    except BaseException as exc:  # noqa: BLE001 - a failure here must still reach the host
        result = on_error(exc)
    if output_fd is not None:
        os.close(output_fd)
    write_all(status_fd, dump(result))
    os.close(status_fd)
    return 0


def send_line(fd: int, message: Job, *, default: Callable[[Any], Any], unsendable: str) -> None:
    """One JSON line to ``fd``; what cannot be written as JSON (``default`` failed, NaN) is sent
    as ``{"error": unsendable + why}``."""
    import json

    try:
        data = (json.dumps(message, default=default, allow_nan=False) + "\n").encode()
    except (TypeError, ValueError) as exc:
        error = f"{unsendable}: {exc}"[:_MESSAGE_CHARS]
        data = (json.dumps({"error": error}) + "\n").encode()
    write_all(fd, data)


def converse(
    argv: list[str],
    setup: Callable[[Job], tuple[Any, Job]],
    answer: Callable[[Any, Job], Job],
    *,
    send: Callable[[int, Job], None],
) -> int:
    """The inside of a run that answers for a whole episode: read the job (JSON) from
    ``argv[1]``, lower its limits, ``setup(job)`` (-> the state and the first line: ready, or an
    error that ends it), then answer each JSON line from the observation pipe with
    ``answer(state, request)`` on the action pipe (``send`` writes one line)."""
    import json

    job = json.loads(argv[1])
    inbox, outbox = job["observation_fd"], job["action_fd"]
    for fd in (inbox, outbox):
        os.set_inheritable(fd, False)
    lower(job_limits(job))
    state, hello = setup(job)
    send(outbox, hello)
    if "error" in hello:
        return 0
    with os.fdopen(inbox, "rb") as lines:
        for line in lines:
            send(outbox, answer(state, json.loads(line)))
    return 0


def exit_now(code: int) -> None:
    """End the process: what the code left behind (threads, atexit hooks) must not delay it."""
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
