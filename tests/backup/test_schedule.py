"""Scheduled backups (issue 43): with PODIUM_BACKUP_TO set, the server backs up every
PODIUM_BACKUP_EVERY_HOURS and keeps PODIUM_BACKUP_KEEP there; of several processes one takes
each backup (the schedule's lease); a failure is kept, logged and tried again an hour later. On
both databases."""

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import update

from app.backup.schedule import last_run, run_scheduled
from app.config import Settings
from app.db import make_engine, make_session_factory, unit_of_work
from app.main import create_app
from app.models import BackupSchedule
from tests.asgi_client import TestClient

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def _settings(url: str, tmp_path: Path, to: Path, **more: object) -> Settings:
    return Settings(
        env="test",
        database_url=url,
        data_dir=tmp_path / "data",
        secret_key="s" * 40,
        backup_to=str(to),
        backup_every_hours=24,
        backup_keep=2,
        **more,  # type: ignore[arg-type]
    )


def _finished(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if (p / "manifest.json").is_file())


def test_a_backup_is_taken_when_due_and_the_oldest_pruned(fresh_database_url, tmp_path):
    to = tmp_path / "backups"
    settings = _settings(fresh_database_url, tmp_path, to)
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    try:
        first = run_scheduled(factory, settings, now=T0)
        assert first is not None and first.ok, first
        assert _finished(to) == [first.result]
        # Not due again within the day, and due after it.
        assert run_scheduled(factory, settings, now=T0 + timedelta(hours=23)) is None
        second = run_scheduled(factory, settings, now=T0 + timedelta(hours=24))
        third = run_scheduled(factory, settings, now=T0 + timedelta(hours=48))
        assert second is not None and third is not None and second.ok and third.ok
        # Two kept: the first was pruned.
        assert _finished(to) == [second.result, third.result]
        with factory() as session:
            row = last_run(session, str(to))
            assert row is not None and row.last_ok and row.last_result == third.result
            assert row.lease_expires_at is None
    finally:
        engine.dispose()


def test_a_backup_held_by_another_process_is_not_taken_twice(fresh_database_url, tmp_path):
    to = tmp_path / "backups"
    settings = _settings(fresh_database_url, tmp_path, to)
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    try:
        assert run_scheduled(factory, settings, now=T0) is not None
        # Another process took the next one and is still at it (its lease runs).
        with unit_of_work(factory) as session:
            session.execute(
                update(BackupSchedule).values(
                    lease_expires_at=T0 + timedelta(hours=30),
                    last_started_at=T0 + timedelta(hours=24),
                )
            )
        assert run_scheduled(factory, settings, now=T0 + timedelta(hours=25)) is None
        # It died: once its lease lapses and the backup is due, this one takes it.
        assert run_scheduled(factory, settings, now=T0 + timedelta(hours=49)) is not None
        assert len(_finished(to)) == 2
    finally:
        engine.dispose()


def test_a_failed_backup_is_kept_and_tried_again_an_hour_later(fresh_database_url, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the backups should go")
    settings = _settings(fresh_database_url, tmp_path, blocked)
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    try:
        failed = run_scheduled(factory, settings, now=T0)
        assert failed is not None and not failed.ok and failed.result.startswith("failed: ")
        with factory() as session:
            row = last_run(session, str(blocked))
            assert row is not None and row.last_ok is False and row.lease_expires_at is None
        assert run_scheduled(factory, settings, now=T0 + timedelta(minutes=59)) is None
        again = run_scheduled(factory, settings, now=T0 + timedelta(hours=1))
        assert again is not None and not again.ok
    finally:
        engine.dispose()


def test_the_server_takes_the_scheduled_backup_itself(tmp_path):
    url = f"sqlite:///{tmp_path / 'podium.db'}"
    from tests.databases import migrated

    migrated(url)
    to = tmp_path / "backups"
    engine = make_engine(url)
    settings = _settings(url, tmp_path, to, scoring_backend="eager")
    with TestClient(create_app(settings, session_factory=make_session_factory(engine))):
        # Its first look is at start-up: nothing was ever backed up there, so it is due.
        for _ in range(600):
            if to.is_dir() and _finished(to):
                break
            time.sleep(0.1)
    assert len(_finished(to)) == 1
    engine.dispose()
