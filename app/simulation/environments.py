"""A simulation phase's environment: one of ``kaggle-environments``' own, unchanged, with the
host's configuration, checked by the environment's own schema and bounded by the server.

``kaggle_environments`` is imported on first use only: it loads every environment it ships (half a
second), which no server start, worker start or command should pay for.
"""

import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# The environments a phase may name: those of the package that need nothing beyond it (the Lux AI
# ones need packages of their own) and that two or more agents play.
BUILT_IN = ("connectx", "tictactoe", "rps", "halite", "hungry_geese", "kore_fleets", "mab")
MAX_ACT_TIMEOUT = 60.0
MAX_RUN_TIMEOUT = 3600.0
MAX_EPISODE_STEPS = 10_000

# kaggle_environments' interpreter swaps sys.stdout and sys.stderr (contextlib.redirect_stdout)
# while it runs: process-wide, so two episodes stepping at once in two threads would restore each
# other's streams. Every call that steps or builds an environment holds this lock.
ENVIRONMENT_LOCK = threading.Lock()


class EnvironmentConfig(BaseModel):
    """A phase's ``environment``: ``{"name": "connectx", "configuration": {...}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    configuration: dict[str, Any] = Field(default_factory=dict)


class EnvironmentError_(ValueError):
    """The environment cannot be made as configured; the message says why (a 422 for the host)."""


def kaggle_environments() -> Any:
    import kaggle_environments

    return kaggle_environments


def make(config: EnvironmentConfig) -> Any:
    """A fresh ``kaggle_environments`` Environment for one episode."""
    if config.name not in BUILT_IN:
        raise EnvironmentError_(
            f"environment '{config.name[:64]}' is not one this server runs; choose one of "
            f"{', '.join(BUILT_IN)}"
        )
    package = kaggle_environments()
    with ENVIRONMENT_LOCK:
        try:
            return package.make(config.name, configuration=dict(config.configuration))
        except package.errors.InvalidArgument as exc:
            raise EnvironmentError_(f"environment '{config.name}': {exc}") from None


def check(config: EnvironmentConfig) -> dict[str, Any]:
    """The environment's full configuration (its defaults filled in), or
    :class:`EnvironmentError_` naming what is wrong or past the server's bounds."""
    env = make(config)
    configuration = dict(env.configuration)
    check_bounds(config.name, configuration)
    return configuration


def check_bounds(name: str, configuration: dict[str, Any]) -> None:
    """:class:`EnvironmentError_` naming each setting past the server's bounds."""
    problems = []
    if float(configuration.get("actTimeout", 0)) > MAX_ACT_TIMEOUT:
        problems.append(f"actTimeout may be at most {MAX_ACT_TIMEOUT:g} s")
    if float(configuration.get("runTimeout", 0)) > MAX_RUN_TIMEOUT:
        problems.append(f"runTimeout may be at most {MAX_RUN_TIMEOUT:g} s")
    if int(configuration.get("episodeSteps", 0)) > MAX_EPISODE_STEPS:
        problems.append(f"episodeSteps may be at most {MAX_EPISODE_STEPS}")
    if problems:
        raise EnvironmentError_(f"environment '{name}': " + "; ".join(problems))


def players(env: Any) -> int:
    """How many agents play one episode: the most the environment's specification allows (2 for
    ConnectX; 4 for Halite, as Kaggle's ladder plays it)."""
    counts = [int(n) for n in env.specification.agents]
    return max(counts)


def stored_config(stored: dict[str, Any]) -> EnvironmentConfig:
    """A phase's stored environment as the config it was made from (a host's upload's own
    fields, ``upload`` and ``players``, left aside)."""
    return EnvironmentConfig(
        name=str(stored.get("name", "")), configuration=dict(stored.get("configuration") or {})
    )


def upload_of(stored: dict[str, Any]) -> dict[str, Any] | None:
    """A host's own environment: ``{"ref", "sha256", "filename"}`` of its stored zip, else None."""
    upload = stored.get("upload")
    return dict(upload) if isinstance(upload, dict) else None
