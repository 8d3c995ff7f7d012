"""A multi-task phase's answer key uploaded by its host: one zip holding each task's own file
(``{task}.csv``, or the one file under ``{task}/``), the same layout a submission has.

Each task's file is checked by the task's own catalogue metric, as a single-task phase's key
is, and the whole zip becomes one key version: a new version replaces every task's part
together, so a board never compares rows scored against different parts. Tasks scored by an
imported program take their reference data from the bundle (import it again instead).
"""

import hashlib
import tempfile
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.config import Settings
from app.errors import Conflict, Unprocessable
from app.evaluation.keys import cached_key
from app.ledger.facts import key_published
from app.models import AnswerKey, Competition, Phase, User
from app.scoring.columns import reading_metric, resolve_columns
from app.scoring.core import ScoringError
from app.scoring.tasks import TaskFileError, task_member
from app.storage import local_file, remove_stored, store_stream


def upload_task_key(
    session: Session,
    *,
    competition: Competition,
    phase: Phase,
    source: BinaryIO,
    uploader: User,
    settings: Settings,
) -> AnswerKey:
    """Check and store a new key version of a multi-task phase; its first goes live at once."""
    programs = [t["key"] for t in phase.tasks or () if _program_task(t)]
    if programs:
        raise Conflict(
            f"phase '{phase.name}': task '{programs[0]}' is scored by the program imported with "
            "its bundle, whose reference data comes with the bundle: import the corrected "
            "bundle instead"
        )
    stored = store_stream(
        source,
        prefix=f"answer-keys/{competition.id}",
        settings=settings,
        max_bytes=settings.max_upload_bytes,
    )
    try:
        rows = _checked(competition, phase, local_file(stored.ref, settings=settings), settings)
    except Unprocessable:
        if session.scalar(select(AnswerKey.id).where(AnswerKey.path == stored.ref)) is None:
            remove_stored(stored.ref, settings=settings)
        raise
    latest = session.scalar(
        select(func.max(AnswerKey.version)).where(AnswerKey.phase_id == phase.id)
    )
    previous = phase.board_key
    key = AnswerKey(
        competition_id=competition.id,
        phase_id=phase.id,
        version=(latest or 0) + 1,
        path=stored.ref,
        sha256=stored.sha256,
        # Not one table: each task's file is read by its own metric.
        id_column="",
        target_columns=[],
        n_rows=rows,
        n_public=0,
        n_private=0,
        uploaded_by_id=uploader.id,
        published_at=datetime.now(UTC) if previous is None else None,
    )
    session.add(key)
    session.flush()
    session.refresh(phase, ["answer_keys"])
    record(
        session,
        competition=competition,
        actor=uploader,
        action="answer_key_upload",
        target=f"phase {phase.name} version {key.version}",
        before={"board_version": previous.version if previous else None},
        after={
            "version": key.version,
            "sha256": key.sha256,
            "rows": rows,
            "published": key.published_at is not None,
        },
    )
    if key.published_at is not None:
        key_published(session, competition_id=competition.id, phase=phase, key=key)
    return key


def _program_task(task: dict) -> bool:  # type: ignore[type-arg]
    return bool(task.get("scorer")) or any(c.get("scorer") == "program" for c in task["columns"])


def _checked(competition: Competition, phase: Phase, path: Path, settings: Settings) -> int:
    """Every task's file parsed by its metric (the key against itself, as at any upload); the
    rows they hold together, or Unprocessable naming the task."""
    rows = 0
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise Unprocessable(
            f"phase '{phase.name}' has tasks: its answer key is a zip holding each task's file "
            f"({', '.join(f'{k}.csv' for k in phase.task_keys)})"
        ) from None
    with archive, tempfile.TemporaryDirectory(prefix="podium-task-key-") as tmp:
        for task in phase.tasks or ():
            name = str(task["key"])
            try:
                filename, data = task_member(
                    archive, name, max_bytes=settings.max_decompressed_bytes
                )
            except TaskFileError as exc:
                raise Unprocessable(str(exc), extra={"task": name}) from None
            file = Path(tmp) / name / filename
            file.parent.mkdir()
            file.write_bytes(data)
            reading = reading_metric(resolve_columns(task["columns"]))
            assert reading.metric is not None and reading.params is not None
            try:
                table = cached_key(
                    path=file,
                    sha256=_sha256(data),
                    metric=reading.metric,
                    params=reading.params,
                    id_column=competition.id_column,
                    settings=settings,
                )
            except ScoringError as exc:
                raise Unprocessable(f"task '{name}': {exc.message}", extra={"task": name}) from None
            rows += table.n_rows
    return rows


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
