"""The record: each competition's hash chain of the facts that decide its ranks (app.ledger).

Rows are only ever inserted (no code path updates or deletes one); ``podium verify`` finds a row
changed behind the code's back, since every entry's hash covers its body and its predecessor's.
"""

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.types import UTCDateTime, utcnow


class LedgerEntry(Base):
    __tablename__ = "ledger_entries"
    # Two appends can never take one position: a fork of the chain fails instead.
    __table_args__ = (UniqueConstraint("competition_id", "seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), index=True
    )
    # Its position in the competition's chain, from 1.
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    # The fact as canonical JSON (app.ledger.chain.canonical): hashed exactly as stored.
    body: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64))
    # sha256("<prev_hash>:<seq>:<sha256 of body>"): the chain's head once this entry is appended.
    entry_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The sealed values and the key of their commitment (JSON), outside the hash: served only
    # once the values are revealed (app.ledger.service).
    opening: Mapped[str | None] = mapped_column(Text, default=None)


class LedgerHead(Base):
    """A competition's chain head. On PostgreSQL every append updates it in the statement that
    inserts the entry, so concurrent appends to one chain queue on its row lock (SQLite's one
    writer queues them already, and appends there read the last entry instead)."""

    __tablename__ = "ledger_heads"

    competition_id: Mapped[int] = mapped_column(
        ForeignKey("competitions.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer)
    head: Mapped[str] = mapped_column(String(64))
    prev: Mapped[str] = mapped_column(String(64))
