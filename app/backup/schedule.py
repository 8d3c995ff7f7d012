"""Scheduled backups: with ``PODIUM_BACKUP_TO`` set, the server takes a backup every
``PODIUM_BACKUP_EVERY_HOURS`` and keeps the newest ``PODIUM_BACKUP_KEEP`` there. Every process
of the install runs the loop; the one whose conditional UPDATE takes the schedule's lease (its
row in ``backup_schedule``) takes the backup, the others find it taken or not yet due. A failed
backup is tried again an hour later (or at the next interval, when that is sooner), and its
reason is kept on the row and logged.
"""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.backup.snapshot import BackupError, Taken, take
from app.config import Settings
from app.db import unit_of_work
from app.jobs.woken import WokenLoop
from app.models import BackupSchedule

log = logging.getLogger(__name__)

# Longer than any backup takes: a process that died mid-backup gives the schedule up then.
LEASE = timedelta(hours=6)
RETRY = timedelta(hours=1)


@dataclass(frozen=True)
class Ran:
    ok: bool
    result: str
    taken: Taken | None = None


def run_scheduled(
    factory: sessionmaker[Session], settings: Settings, *, now: datetime
) -> Ran | None:
    """Take the scheduled backup if it is due and no other process holds it; what came of
    it, or None (not due, not configured, or taken elsewhere)."""
    destination = settings.backup_to
    if not destination:
        return None
    every = timedelta(hours=settings.backup_every_hours)
    if not _take_lease(factory, destination, now=now, due_before=now - every):
        return None
    try:
        taken = take(settings, destination, keep=settings.backup_keep)
    except (BackupError, OSError) as exc:
        ran = Ran(False, f"failed: {exc}")
        log.error("scheduled backup to %s failed: %s", destination, exc)
        # Tried again after RETRY, not a whole interval later.
        retry_from = now - every + min(RETRY, every)
        _release(factory, destination, ran, now=now, started=retry_from)
        return ran
    ran = Ran(True, taken.name, taken)
    log.info("scheduled backup %s written to %s", taken.name, taken.where)
    _release(factory, destination, ran, now=now)
    return ran


def _take_lease(
    factory: sessionmaker[Session], destination: str, *, now: datetime, due_before: datetime
) -> bool:
    with unit_of_work(factory) as session:
        if session.get(BackupSchedule, destination) is None:
            try:
                with session.begin_nested():
                    session.execute(insert(BackupSchedule).values(destination=destination))
            except IntegrityError:
                pass  # another process made it first
        taken = session.execute(
            update(BackupSchedule)
            .where(
                BackupSchedule.destination == destination,
                or_(
                    BackupSchedule.lease_expires_at.is_(None),
                    BackupSchedule.lease_expires_at < now,
                ),
                or_(
                    BackupSchedule.last_started_at.is_(None),
                    BackupSchedule.last_started_at <= due_before,
                ),
            )
            .values(lease_expires_at=now + LEASE, last_started_at=now)
        )
        return bool(taken.rowcount)  # type: ignore[attr-defined]


def _release(
    factory: sessionmaker[Session],
    destination: str,
    ran: Ran,
    *,
    now: datetime,
    started: datetime | None = None,
) -> None:
    values: dict[str, object] = {
        "lease_expires_at": None,
        "last_finished_at": now,
        "last_result": ran.result[:2000],
        "last_ok": ran.ok,
    }
    if started is not None:
        values["last_started_at"] = started
    with unit_of_work(factory) as session:
        session.execute(
            update(BackupSchedule).where(BackupSchedule.destination == destination).values(**values)
        )


def last_run(session: Session, destination: str) -> BackupSchedule | None:
    return session.scalar(select(BackupSchedule).where(BackupSchedule.destination == destination))


class BackupLoop(WokenLoop):
    """The server's scheduled backups: a look every ``interval`` seconds whether one is due."""

    def __init__(
        self, factory: sessionmaker[Session], settings: Settings, *, interval: float = 60.0
    ) -> None:
        super().__init__(
            "podium-backup",
            lambda: run_scheduled(factory, settings, now=datetime.now(UTC)),
            interval=interval,
        )
