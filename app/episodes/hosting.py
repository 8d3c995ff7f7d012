"""A host's own environment for a simulation phase: uploaded as a zip (:mod:`app.simulation.hosted`),
stored like any host file, and made once in the jail before the phase takes it (its
specification's players, its configuration with the defaults filled in). One that cannot be
made, or fails on its first reset, is a 422 with the environment's own traceback: the phase
keeps what it had, and the server is untouched."""

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy.orm import Session

from app.audit.service import record
from app.config import Settings
from app.errors import Conflict, Unprocessable
from app.jail.bwrap import JailUnavailable
from app.models import Competition, Phase, User
from app.simulation.environments import EnvironmentConfig, EnvironmentError_, check_bounds
from app.simulation.hosted import InvalidEnvironment, read_environment
from app.simulation.tables import EnvironmentFailed, inspect_environment
from app.storage import store_stream

MAX_ENVIRONMENT_BYTES = 8 * 1024**2


def upload_environment(
    session: Session,
    *,
    competition: Competition,
    phase: Phase,
    source: BinaryIO,
    filename: str,
    configuration: str | None,
    actor: User,
    settings: Settings,
) -> Phase:
    if not phase.takes_agents:
        raise Conflict(
            f"phase '{phase.name}' is not a simulation phase (submission_kind: simulation)"
        )
    config = _configuration(configuration)
    stored = store_stream(
        source,
        prefix=f"environments/{competition.id}",
        settings=settings,
        max_bytes=MAX_ENVIRONMENT_BYTES,
        suffix=".zip",
    )
    data = stored.path.read_bytes()
    folder = Path(tempfile.mkdtemp(prefix="podium-environment-"))
    try:
        folder.chmod(0o755)
        try:
            name = read_environment(data, folder)
        except InvalidEnvironment as exc:
            raise Unprocessable(str(exc), extra={"kind": "invalid_environment"}) from None
        try:
            made = inspect_environment(folder, EnvironmentConfig(name=name, configuration=config))
        except EnvironmentFailed as exc:
            raise Unprocessable(
                f"the environment failed in the jail: {exc}"[:4000],
                extra={"kind": "environment_failed"},
            ) from None
        except JailUnavailable as exc:
            raise Conflict(f"the jail cannot run here, so no environment can: {exc}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        check_bounds(name, made["configuration"])
    except EnvironmentError_ as exc:
        raise Unprocessable(str(exc), extra={"field": "configuration"}) from None
    before = {"environment": phase.environment}
    phase.environment = {
        "name": name,
        "configuration": made["configuration"],
        "players": made["players"],
        "upload": {"ref": stored.ref, "sha256": stored.sha256, "filename": filename[:255]},
    }
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="phase_environment",
        target=f"{competition.slug}/{phase.name}",
        before=before,
        after={"environment": {"name": name, "sha256": stored.sha256}},
    )
    return phase


def _configuration(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        raise Unprocessable("configuration is not JSON", extra={"field": "configuration"}) from None
    if not isinstance(value, dict):
        raise Unprocessable("configuration must be a JSON object", extra={"field": "configuration"})
    return value
