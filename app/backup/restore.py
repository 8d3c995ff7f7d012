"""Restoring a backup into an empty install: its checksums checked first, then the database
(the SQLite file put in place, or ``pg_restore``), the stored files into this install's data
directory or bucket, and the file references rewritten when this install keeps its files
elsewhere than the backed-up one did. An install that holds anything is refused: a restore
never merges into, or overwrites, a live competition."""

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, inspect, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from app.backup.snapshot import (
    CACHES,
    MANIFEST,
    PREFIX,
    BackupError,
    S3Place,
    database_is_empty,
    run_pg,
    s3_client,
    sha256_of,
    storage_root,
)
from app.config import Settings
from app.db import sqlite_path


@dataclass(frozen=True)
class Restored:
    source: str
    files: int
    rewritten: bool


def restore(settings: Settings, source: str) -> Restored:
    if source.startswith("s3://"):
        place, name = _s3_backup(settings, source)
        with tempfile.TemporaryDirectory(prefix="podium-restore-") as scratch:
            folder = Path(scratch) / name
            place.download(name, folder)
            return _restore(settings, folder, source)
    folder = Path(source)
    if not folder.is_dir():
        raise BackupError(f"no backup folder at {source}")
    if not (folder / MANIFEST).is_file():
        # A folder of backups (what `podium backup --to` was given): its newest finished one.
        finished = sorted(
            p for p in folder.glob(PREFIX + "*") if p.is_dir() and (p / MANIFEST).is_file()
        )
        folder = finished[-1] if finished else folder
    return _restore(settings, folder, str(folder))


def _s3_backup(settings: Settings, url: str) -> tuple[S3Place, str]:
    """The backup an ``s3://bucket/prefix/podium-backup-…`` URL names (or a prefix's newest)."""
    head, _, last = url.rstrip("/").rpartition("/")
    if last.startswith(PREFIX):
        return S3Place(settings, head), last
    place = S3Place(settings, url)
    names = place.names()
    if not names:
        raise BackupError(f"no finished backup under {url}")
    return place, names[-1]


def _restore(settings: Settings, folder: Path, source: str) -> Restored:
    manifest = check_manifest(folder)
    refuse_unless_empty(settings)
    database = manifest["database"]
    restore_database(settings.database_url, folder / database["file"], database["kind"])
    files = put_files(settings, folder / "files")
    old, new = manifest["storage"], storage_root(settings)
    if old != new:
        rewrite_references(settings.database_url, old, new)
    return Restored(source, files, old != new)


def check_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise BackupError(f"{folder} has no {MANIFEST}: not a backup, or an unfinished one")
    try:
        manifest: dict[str, Any] = json.loads(path.read_text())
    except ValueError:
        raise BackupError(f"{path} is not JSON") from None
    for entry in manifest.get("files", []):
        relative = Path(entry["path"])
        if relative.is_absolute() or ".." in relative.parts:
            raise BackupError(f"the manifest names a file outside the backup: {relative}")
        file = folder / relative
        if not file.is_file():
            raise BackupError(f"the backup lacks {relative}")
        if file.stat().st_size != entry["size"] or sha256_of(file) != entry["sha256"]:
            raise BackupError(f"{relative} does not match its checksum: the backup is damaged")
    return manifest


def refuse_unless_empty(settings: Settings) -> None:
    if not database_is_empty(settings.database_url):
        raise BackupError(
            "this install is not empty (its database has users or competitions): restore only "
            "into a new one (a new PODIUM_DATABASE_URL and data directory)"
        )
    data = Path(settings.data_dir)
    if data.is_dir() and any(
        p.is_file() for p in data.rglob("*") if p.relative_to(data).parts[0] not in CACHES
    ):
        raise BackupError(f"this install is not empty: {data} holds files")
    if settings.storage == "s3":
        listed = s3_client(settings).list_objects_v2(Bucket=settings.s3_bucket, MaxKeys=1)
        if listed.get("KeyCount", 0):
            raise BackupError(f"this install is not empty: bucket {settings.s3_bucket} holds files")


def restore_database(url: str, dump: Path, kind: str) -> None:
    path = sqlite_path(url)
    if kind == "sqlite":
        if path is None:
            raise BackupError("the backup holds a SQLite database; PODIUM_DATABASE_URL is not one")
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            stale.unlink(missing_ok=True)  # an empty install's, refused above otherwise
        shutil.copyfile(dump, path)
        return
    if make_url(url).get_backend_name() != "postgresql":
        raise BackupError("the backup holds a PostgreSQL database; PODIUM_DATABASE_URL is not one")
    engine = create_engine(url)
    try:
        migrated = bool(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    # A database `podium migrate` made (empty, checked above) is replaced table by table.
    extra = ("--clean", "--if-exists") if migrated else ()
    run_pg(
        "pg_restore",
        url,
        "--no-owner",
        "--no-privileges",
        "--single-transaction",
        *extra,
        str(dump),
    )


def put_files(settings: Settings, files: Path) -> int:
    """The backed-up files into this install's store; the signing key into its data dir."""
    data = Path(settings.data_dir)
    count = 0
    if not files.is_dir():
        return 0
    for path in sorted(files.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(files)
        if relative.parts[0] == "ledger" or settings.storage != "s3":
            target = data / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        else:
            s3_client(settings).upload_file(str(path), settings.s3_bucket, relative.as_posix())
        count += relative.parts[0] != "ledger"
    return count


def rewrite_references(url: str, old: str, new: str) -> None:
    """Point every stored file's reference that starts with ``old`` at ``new`` instead (another
    data directory, another bucket, or from one kind of store to the other)."""
    from app.db import make_engine
    from app.models import AnswerKey, Competition, Phase, Submission

    engine = make_engine(url)
    try:
        with Session(engine) as session:
            for column in (
                Submission.path,
                Submission.output_path,
                Submission.attachment_path,
                AnswerKey.path,
                Competition.custom_metric_path,
            ):
                table = column.class_
                rows = session.execute(
                    select(table.id, column).where(column.startswith(old, autoescape=True))
                ).all()
                for row_id, value in rows:
                    session.execute(
                        update(table)
                        .where(table.id == row_id)
                        .values({column.key: new + value[len(old) :]})
                    )
            for phase in session.scalars(select(Phase).where(Phase.scorer.is_not(None))):
                phase.scorer = _moved(phase.scorer, old, new)
            session.commit()
    finally:
        engine.dispose()


def _moved(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str) and value.startswith(old):
        return new + value[len(old) :]
    if isinstance(value, dict):
        return {k: _moved(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, old, new) for v in value]
    return value
