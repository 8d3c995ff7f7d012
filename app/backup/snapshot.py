"""Taking a backup: the database first (SQLite's online backup API, or ``pg_dump``'s
transaction-consistent snapshot), then the stored files. Files are only ever written before the
rows that name them commit, so every file the database snapshot names is there when the files
are copied after it; files added meanwhile are copied too and named by nothing (harmless).

A backup is a folder ``podium-backup-<UTC time>`` holding ``database.sqlite3`` or
``database.pgdump``, ``files/`` (the data directory's or the bucket's layout), ``settings.json``
(no secrets) and ``manifest.json`` (every file's size and SHA-256), written last: a folder
without a manifest is an unfinished backup.
"""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from app.config import Settings
from app.db import sqlite_path

FORMAT = 1
PREFIX = "podium-backup-"
MANIFEST = "manifest.json"
# Under the data directory, what a machine rebuilds by itself: never backed up.
CACHES = frozenset({"store-cache", "resample-cache"})
SECRETS = frozenset(
    {"secret_key", "s3_secret_access_key", "s3_access_key_id", "ledger_signing_key"}
)
CHUNK = 1024 * 1024


class BackupError(Exception):
    """A backup or a restore cannot go on; the message says why, in one line."""


@dataclass(frozen=True)
class Taken:
    name: str
    where: str
    files: int
    bytes: int
    pruned: list[str]


def take(settings: Settings, destination: str, *, keep: int | None = None) -> Taken:
    """Back up the install ``settings`` describe into ``destination`` (a folder, or
    ``s3://bucket/prefix``); with ``keep``, delete the oldest backups there beyond that many."""
    name = PREFIX + datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    if destination.startswith("s3://"):
        with tempfile.TemporaryDirectory(prefix="podium-backup-") as scratch:
            folder = Path(scratch) / name
            files, size = _write(settings, folder)
            target = S3Place(settings, destination)
            target.upload(folder, name)
            pruned = target.prune(keep) if keep else []
        return Taken(name, f"{destination.rstrip('/')}/{name}", files, size, pruned)
    root = Path(destination)
    folder = root / name
    files, size = _write(settings, folder)
    pruned = prune_folder(root, keep) if keep else []
    return Taken(name, str(folder), files, size, pruned)


def _write(settings: Settings, folder: Path) -> tuple[int, int]:
    folder.mkdir(parents=True)
    database = dump_database(settings.database_url, folder)
    # After the database: every file its rows name was stored before they committed.
    copied = copy_files(settings, folder / "files")
    (folder / "settings.json").write_text(json.dumps(public_settings(settings), indent=2))
    listed = manifest_entries(folder)
    manifest = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(),
        "database": database,
        "storage": storage_root(settings),
        "stored_files": copied,
        "files": listed,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return len(listed), sum(f["size"] for f in listed)


def dump_database(url: str, folder: Path) -> dict[str, str]:
    path = sqlite_path(url)
    if path is not None:
        if not path.is_file():
            raise BackupError(f"no database at {path}")
        target = folder / "database.sqlite3"
        source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        copy = sqlite3.connect(target)
        try:
            # One step: a consistent snapshot, while writers go on (WAL mode).
            source.backup(copy)
        finally:
            copy.close()
            source.close()
        return {"kind": "sqlite", "file": target.name}
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise BackupError(f"cannot back up a {parsed.get_backend_name()} database")
    target = folder / "database.pgdump"
    run_pg("pg_dump", url, "--format=custom", "--no-owner", "--no-privileges", f"--file={target}")
    return {"kind": "postgresql", "file": target.name}


def run_pg(program: str, url: str, *args: str) -> None:
    """Run ``pg_dump`` / ``pg_restore`` on ``url``: its password in the environment, never in
    the process list."""
    if shutil.which(program) is None:
        raise BackupError(f"{program} is not installed (Debian: apt-get install postgresql-client)")
    parsed = make_url(url)
    env = {**os.environ}
    if parsed.password:
        env["PGPASSWORD"] = str(parsed.password)
    libpq = parsed.set(drivername="postgresql", password=None).render_as_string(hide_password=False)
    done = subprocess.run(
        [program, *args, f"--dbname={libpq}"], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise BackupError(f"{program} failed: {last}")


def storage_root(settings: Settings) -> str:
    """What the database's file references start with for this install's stored files."""
    if settings.storage == "s3":
        return f"s3://{settings.s3_bucket}/"
    return str(Path(settings.data_dir)) + "/"


def copy_files(settings: Settings, target: Path) -> int:
    """The stored files into ``target`` in the store's layout, and the record's signing key;
    how many stored files."""
    target.mkdir(parents=True)
    data = Path(settings.data_dir)
    count = 0
    if settings.storage == "s3":
        client = s3_client(settings)
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=settings.s3_bucket)
        for page in pages:
            for item in page.get("Contents", []):
                out = target / item["Key"]
                out.parent.mkdir(parents=True, exist_ok=True)
                client.download_file(settings.s3_bucket, item["Key"], str(out))
                count += 1
        key = data / "ledger" / "ed25519.key"
        if key.is_file():
            (target / "ledger").mkdir(exist_ok=True)
            shutil.copy2(key, target / "ledger" / key.name)
        return count
    if not data.is_dir():
        return 0
    for path in sorted(data.rglob("*")):
        relative = path.relative_to(data)
        if relative.parts[0] in CACHES or not path.is_file() or path.name.endswith(".part"):
            continue
        out = target / relative
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(path, out)
        except FileNotFoundError:
            continue  # removed meanwhile (a refused upload's file): nothing names it
        count += relative.parts[0] != "ledger"
    return count


def public_settings(settings: Settings) -> dict[str, Any]:
    """The settings as an operator would write them again, secrets left out."""
    values = settings.model_dump(mode="json", exclude=set(SECRETS))
    values["database_url"] = make_url(settings.database_url).render_as_string(hide_password=True)
    return values


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def manifest_entries(folder: Path) -> list[dict[str, Any]]:
    return [
        {
            "path": path.relative_to(folder).as_posix(),
            "size": path.stat().st_size,
            "sha256": sha256_of(path),
        }
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    ]


def prune_folder(root: Path, keep: int) -> list[str]:
    """Delete the oldest finished backups under ``root`` beyond ``keep``."""
    finished = sorted(
        p.name for p in root.iterdir() if p.name.startswith(PREFIX) and (p / MANIFEST).is_file()
    )
    gone = finished[:-keep] if keep > 0 else []
    for name in gone:
        shutil.rmtree(root / name)
    return gone


def s3_client(settings: Settings) -> Any:
    from app.storage.s3 import client_for

    return client_for(settings)


class S3Place:
    """``s3://bucket/prefix``: where backups are uploaded, with the install's S3 settings."""

    def __init__(self, settings: Settings, url: str) -> None:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        if not bucket:
            raise BackupError(f"{url} names no bucket (s3://bucket/prefix)")
        self.client = s3_client(settings)
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    def _key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def upload(self, folder: Path, name: str) -> None:
        manifest = folder / MANIFEST
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path != manifest:
                key = self._key(name, path.relative_to(folder).as_posix())
                self.client.upload_file(str(path), self.bucket, key)
        # Last: an upload cut short leaves no manifest, and restore refuses it.
        self.client.upload_file(str(manifest), self.bucket, self._key(name, MANIFEST))

    def names(self) -> list[str]:
        found = set()
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self._key() + "/" if self.prefix else ""
        )
        for page in pages:
            for item in page.get("Contents", []):
                rest = item["Key"][len(self._key()) + 1 :] if self.prefix else item["Key"]
                name, _, tail = rest.partition("/")
                if name.startswith(PREFIX) and tail == MANIFEST:
                    found.add(name)
        return sorted(found)

    def prune(self, keep: int) -> list[str]:
        gone = self.names()[:-keep] if keep > 0 else []
        for name in gone:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self._key(name) + "/"
            )
            for page in pages:
                for item in page.get("Contents", []):
                    self.client.delete_object(Bucket=self.bucket, Key=item["Key"])
        return gone

    def download(self, name: str, folder: Path) -> None:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self._key(name) + "/"
        )
        for page in pages:
            for item in page.get("Contents", []):
                relative = item["Key"][len(self._key(name)) + 1 :]
                out = folder / relative
                if ".." in Path(relative).parts:
                    raise BackupError(f"the backup holds a file outside itself: {relative}")
                out.parent.mkdir(parents=True, exist_ok=True)
                self.client.download_file(self.bucket, item["Key"], str(out))


def database_is_empty(url: str) -> bool:
    """Whether ``url`` holds no Podium data: absent, without tables, or migrated with no user
    and no competition."""
    path = sqlite_path(url)
    if path is not None and not path.is_file():
        return True
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            for table in ("users", "competitions"):
                try:
                    if connection.execute(text(f"SELECT 1 FROM {table} LIMIT 1")).first():
                        return False
                except DBAPIError:  # no such table: nothing there
                    connection.rollback()
        return True
    finally:
        engine.dispose()
