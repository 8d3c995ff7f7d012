"""The server's scheduled backups (``PODIUM_BACKUP_TO``): one row a schedule, its lease taken by
the one process that runs the next backup, and the last one's result (app.backup.schedule)."""

from datetime import datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.types import UTCDateTime


class BackupSchedule(Base):
    __tablename__ = "backup_schedule"

    # The destination backed up to (a folder or s3:// URL): a new destination, a new schedule.
    destination: Mapped[str] = mapped_column(String(500), primary_key=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    last_started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    last_finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    # The last backup's name, or why it failed.
    last_result: Mapped[str | None] = mapped_column(Text, default=None)
    last_ok: Mapped[bool | None] = mapped_column(default=None)
