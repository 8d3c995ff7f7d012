"""The half of every runner that lives inside the jail, shared by each kind of untrusted code
(custom metrics, imported scoring programs, participants' code runs, simulation agents and host
environments): lowering its own limits before any of that code runs, hiding its pipes, and
writing a whole answer to a pipe.

Each kind's runner is a small adapter around these (``app/coderun/inside.py``,
``app/programs/inside.py``, ``app/custom_metrics/child.py``, ``app/simulation/inside.py``,
``app/simulation/env_inside.py``); the jail binds this file beside each of them
(:data:`app.jail.bwrap.RUNNER_CODE`), so a hardening made here lands for every kind at once.

Standard library only, and only ``os`` and ``resource`` at import: a code run pays for every
import at each start.
"""

import os
import resource

# (resource, soft, hard) triples for :func:`lower`.
Limit = tuple[int, int, int]


def lower(limits: "list[Limit]") -> None:
    """Set each limit, the hard one too (the code cannot raise the soft one again), never above
    what the server itself runs under (its hard limit is the ceiling)."""
    for which, soft, hard in limits:
        _, ceiling = resource.getrlimit(which)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(which, (soft, hard))


def job_limits(job: dict) -> "list[Limit]":  # type: ignore[type-arg]
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
