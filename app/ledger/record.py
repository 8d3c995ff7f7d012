"""Appending to the record: the one helper every fact goes through (:func:`append`).

An entry is written in the transaction of its fact, as the last statement before the commit (a
``before_commit`` hook): on PostgreSQL each append takes its chain's head row lock, and a lock
taken last, in competition order, is held for the commit alone and waits on nothing else, so it
can neither deadlock nor hold up more than the commit. An append is one statement: the chain's
link is computed by the database from the head it finds (PostgreSQL's ``sha256``; on SQLite the
function :func:`register_sqlite` adds), so no round trip reads the head first.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Integer,
    String,
    Text,
    TextClause,
    bindparam,
    event,
    insert,
    text,
    update,
)
from sqlalchemy.orm import Session

from app.ledger.chain import GENESIS, canonical, link, seal, sha256_hex
from app.models.ledger import LedgerEntry, LedgerHead
from app.models.types import UTCDateTime

# session.info: the entries appended in this unit of work, not yet written.
_PENDING = "ledger_pending"


@dataclass
class Appended:
    """An entry appended in this unit of work; its place in the chain once committed."""

    competition_id: int
    kind: str
    body: str
    at: datetime
    opening: str | None = None
    seq: int | None = None
    prev_hash: str | None = None
    entry_hash: str | None = None

    @property
    def fact(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded


def append(
    session: Session,
    *,
    competition_id: int,
    kind: str,
    fact: dict[str, Any],
    sealed: dict[str, Any] | None = None,
    at: datetime | None = None,
) -> Appended:
    """Append ``fact`` (plain JSON values) to the competition's chain at this unit's commit.

    ``sealed``: values nobody may read until their reveal, kept in the entry as a commitment
    (its ``sealed`` field) and opened by the record once revealed."""
    at = at or datetime.now(UTC)
    body = {**fact, "kind": kind, "at": at.isoformat()}
    opening = None
    if sealed:
        body["sealed"], opened = seal(sealed)
        opening = canonical(opened)
    entry = Appended(competition_id, kind, canonical(body), at, opening)
    session.info.setdefault(_PENDING, []).append(entry)
    return entry


@event.listens_for(Session, "before_commit")
def _write_appended(session: Session) -> None:
    if not session.info.get(_PENDING) or session.in_nested_transaction():
        return
    # The fact's own writes first: nothing after the head's lock but the commit.
    session.flush()
    pending: list[Appended] = session.info.pop(_PENDING)
    connection = session.connection()
    chains: dict[int, list[Appended]] = {}
    for entry in pending:
        chains.setdefault(entry.competition_id, []).append(entry)
    for competition_id in sorted(chains):
        entries = chains[competition_id]
        if len(entries) == 1:
            write(connection, entries[0])
        else:
            write_many(connection, competition_id, entries)


@event.listens_for(Session, "after_rollback")
def _forget_appended(session: Session) -> None:
    session.info.pop(_PENDING, None)


def write(connection: Connection, entry: Appended) -> None:
    row = connection.execute(
        _APPEND[connection.dialect.name == "postgresql"],
        {
            "competition_id": entry.competition_id,
            "kind": entry.kind,
            "body": entry.body,
            "digest": sha256_hex(entry.body),
            "genesis": GENESIS,
            "at": entry.at,
            "opening": entry.opening,
        },
    ).one()
    entry.seq, entry.prev_hash, entry.entry_hash = row


def write_many(connection: Connection, competition_id: int, entries: list[Appended]) -> None:
    """Several entries of one chain (a scoring batch's): the head read (and, on PostgreSQL,
    locked) once, the links computed here, the rows inserted in one statement and the head
    moved: three statements for any number, where one each would hold the head's lock for as
    many round trips."""
    postgres = connection.dialect.name == "postgresql"
    found = connection.execute(_HEAD[postgres], {"competition_id": competition_id}).first()
    seq, prev = (found[0], found[1]) if found is not None else (0, GENESIS)
    rows = []
    for entry in entries:
        seq += 1
        entry.seq, entry.prev_hash = seq, prev
        entry.entry_hash = prev = link(prev, seq, sha256_hex(entry.body))
        rows.append(
            {
                "competition_id": competition_id,
                "seq": entry.seq,
                "kind": entry.kind,
                "body": entry.body,
                "prev_hash": entry.prev_hash,
                "entry_hash": entry.entry_hash,
                "created_at": entry.at,
                "opening": entry.opening,
            }
        )
    connection.execute(_INSERT_MANY, rows)
    if postgres:
        connection.execute(
            _MOVE_HEAD,
            {
                "b_competition_id": competition_id,
                "b_seq": seq,
                "b_head": prev,
                "b_prev": entries[-1].prev_hash,
            },
        )


# Built once: a statement built per batch (with its values as literals) cost its construction
# and its cache key every time: a quarter of a 20-entry batch's write (1.0 -> 0.75 ms CPU).
_INSERT_MANY = insert(LedgerEntry)
_MOVE_HEAD = (
    update(LedgerHead)
    .where(LedgerHead.competition_id == bindparam("b_competition_id", type_=Integer))
    .values(
        seq=bindparam("b_seq", type_=Integer),
        head=bindparam("b_head", type_=String),
        prev=bindparam("b_prev", type_=String),
    )
)


_HEAD = {
    # The head row locked (made when the chain is new) and its latest committed values.
    True: text(
        """
        INSERT INTO ledger_heads AS h (competition_id, seq, prev, head)
        VALUES (:competition_id, 0, :genesis, :genesis)
        ON CONFLICT (competition_id) DO UPDATE SET seq = h.seq
        RETURNING seq, head
        """
    ).bindparams(bindparam("competition_id", type_=Integer), genesis=GENESIS),
    False: text(
        "SELECT seq, entry_hash FROM ledger_entries WHERE competition_id = :competition_id "
        "ORDER BY seq DESC LIMIT 1"
    ).bindparams(bindparam("competition_id", type_=Integer)),
}


def _typed(statement: str) -> TextClause:
    return text(statement).bindparams(
        bindparam("competition_id", type_=Integer),
        bindparam("kind", type_=String),
        bindparam("body", type_=Text),
        bindparam("digest", type_=String),
        bindparam("genesis", type_=String),
        bindparam("at", type_=UTCDateTime()),
        bindparam("opening", type_=Text),
    )


_COLUMNS = "competition_id, seq, kind, body, prev_hash, entry_hash, created_at, opening"

# SQLite: its one writer (BEGIN IMMEDIATE) already serialises appends; the head is the last entry.
_SQLITE = f"""
INSERT INTO ledger_entries ({_COLUMNS})
SELECT :competition_id, h.seq + 1, :kind, :body, h.entry_hash,
       podium_sha256(h.entry_hash || ':' || (h.seq + 1) || ':' || :digest), :at, :opening
FROM (
    SELECT seq, entry_hash FROM ledger_entries WHERE competition_id = :competition_id
    UNION ALL SELECT 0, :genesis
    ORDER BY seq DESC LIMIT 1
) AS h
RETURNING seq, prev_hash, entry_hash
"""

# PostgreSQL: the head row's upsert locks it (a concurrent append waits, then sees the new head).
_POSTGRES = f"""
WITH head AS (
    INSERT INTO ledger_heads AS h (competition_id, seq, prev, head)
    VALUES (:competition_id, 1, CAST(:genesis AS TEXT), encode(sha256(convert_to(
        CAST(:genesis AS TEXT) || ':1:' || CAST(:digest AS TEXT), 'UTF8')), 'hex'))
    ON CONFLICT (competition_id) DO UPDATE SET
        seq = h.seq + 1,
        prev = h.head,
        head = encode(sha256(convert_to(
            h.head || ':' || CAST(h.seq + 1 AS TEXT) || ':' || CAST(:digest AS TEXT), 'UTF8')),
            'hex')
    RETURNING seq, prev, head
)
INSERT INTO ledger_entries ({_COLUMNS})
SELECT :competition_id, seq, :kind, :body, prev, head, :at, :opening FROM head
RETURNING seq, prev_hash, entry_hash
"""

_APPEND = {False: _typed(_SQLITE), True: _typed(_POSTGRES)}
