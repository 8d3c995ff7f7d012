"""Competition data files: what hosts publish for participants to train on (never answer keys)."""

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base
from app.models.types import UTCDateTime, utcnow


class DataFile(Base):
    __tablename__ = "data_files"
    __table_args__ = (UniqueConstraint("competition_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    # Where the storage layer keeps the bytes (a key relative to the data directory or bucket).
    storage_key: Mapped[str] = mapped_column(String(500))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    uploaded_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # "hidden": an input of code runs only (a code competition's test set), never shown to
    # participants by any route; "public": listed and downloadable by participants.
    visibility: Mapped[str] = mapped_column(String(8), default="public", server_default="public")
    # A public file held back until this phase starts (a final phase's test set): hidden like a
    # hidden file before, public from then on. None: public as soon as the competition starts.
    release_phase_id: Mapped[int | None] = mapped_column(
        ForeignKey("phases.id", ondelete="SET NULL"), default=None
    )
    release_phase: Mapped["Phase | None"] = relationship(lazy="joined")  # noqa: F821

    @property
    def release_with(self) -> str | None:
        """The name of the phase whose start makes the file public, if any."""
        return self.release_phase.name if self.release_phase is not None else None

    @property
    def releases_at(self) -> datetime | None:
        return self.release_phase.start if self.release_phase is not None else None
