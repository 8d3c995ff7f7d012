"""Reading the record: a competition's entries as a caller may see them, its signed heads, and
receipts. Sealed values are opened for the hosts, and for everyone once their phase has ended
(the moment the private board is revealed, as ``app/submissions/visibility.py`` has it)."""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.ledger import facts
from app.ledger.chain import GENESIS
from app.ledger.record import Appended
from app.ledger.signing import Signer
from app.models import Competition, LedgerEntry, Phase, Submission

# The response header of every board CSV naming the record's head ("<seq>:<hash>").
LEDGER_HEAD = "Podium-Ledger-Head"
# Entries a page of ``GET …/ledger`` carries at most.
PAGE_ENTRIES = 10_000
FORMAT = 1


@dataclass(frozen=True)
class Head:
    seq: int
    hash: str
    at: datetime | None


def head(session: Session, competition_id: int, *, until: datetime | None = None) -> Head:
    """The chain's head: its last entry (before ``until``), or the genesis of an empty chain."""
    query = select(LedgerEntry.seq, LedgerEntry.entry_hash, LedgerEntry.created_at).where(
        LedgerEntry.competition_id == competition_id
    )
    if until is not None:
        query = query.where(LedgerEntry.created_at <= until)
    row = session.execute(query.order_by(LedgerEntry.seq.desc()).limit(1)).first()
    return Head(0, GENESIS, None) if row is None else Head(row[0], row[1], row[2])


def head_text(found: Head) -> str:
    """The head as the competition page and the board CSV's header show it."""
    return f"{found.seq}:{found.hash}"


def signed_head(signer: Signer, slug: str, found: Head, moment: str) -> dict[str, Any]:
    """The head signed; ``moment`` says which (``now``, ``phase_end:<name>``, ``reveal``). The
    signature is deterministic: the same head signed twice is the same statement."""
    return signer.signed(
        {
            "competition": slug,
            "seq": found.seq,
            "hash": found.hash,
            "at": found.at.isoformat() if found.at else None,
            "moment": moment,
        }
    )


def receipt(signer: Signer, slug: str, entry: Appended | LedgerEntry) -> dict[str, Any]:
    """The signed receipt of an entry: the entry, its position and the chain's head then (the
    entry's own hash). The same entry always gives the same receipt."""
    body = entry.body
    seq = entry.seq
    prev = entry.prev_hash
    this = entry.entry_hash
    return signer.signed(
        {
            "receipt": FORMAT,
            "competition": slug,
            "key_id": signer.key_id,
            "seq": seq,
            "kind": entry.kind,
            "body": json.loads(body),
            "prev_hash": prev,
            "entry_hash": this,
            "head": this,
        }
    )


def submission_receipt(
    session: Session, signer: Signer, competition: Competition, submission_id: int
) -> dict[str, Any] | None:
    """The receipt of a submission's upload, found in the chain (for its page)."""
    rows = session.scalars(
        select(LedgerEntry)
        .where(
            LedgerEntry.competition_id == competition.id,
            LedgerEntry.kind.in_(("received", "refused")),
            LedgerEntry.body.contains(f'"submission":{submission_id},'),
        )
        .order_by(LedgerEntry.seq)
    )
    for row in rows:
        if json.loads(row.body).get("submission") == submission_id:
            return receipt(signer, competition.slug, row)
    return None


def revealed_phases(competition: Competition, *, now: datetime, host: bool) -> set[int] | None:
    """The phases whose sealed values the caller may open (None: every phase, for hosts)."""
    if host:
        return None
    return {p.id for p in competition.phases if p.has_ended(now)}


def lines(
    session: Session,
    *,
    competition: Competition,
    signer: Signer,
    host: bool,
    after: int = 0,
    limit: int = PAGE_ENTRIES,
    now: datetime | None = None,
) -> Iterator[str]:
    """``ledger.jsonl``: a header (the public key, the signed head, the heads signed at each
    ended phase), then the entries after ``after``, each with its opening where revealed."""
    now = now or datetime.now(UTC)
    current = head(session, competition.id)
    phase_heads = [
        signed_head(signer, competition.slug, head(session, competition.id, until=p.end), moment)
        for p in competition.phases
        if p.end is not None and p.has_ended(now)
        for moment in [f"phase_end:{p.name}"]
    ]
    yield _line(
        {
            "ledger": FORMAT,
            "competition": competition.slug,
            "public_key": signer.public_key,
            "key_id": signer.key_id,
            "head": signed_head(signer, competition.slug, current, "now"),
            "phase_heads": phase_heads,
            "after": after,
            "more": current.seq > after + limit,
        }
    )
    revealed = revealed_phases(competition, now=now, host=host)
    phase_of = dict(
        session.execute(
            select(Submission.id, Submission.phase_id).where(
                Submission.competition_id == competition.id
            )
        ).all()
    )
    rows = session.scalars(
        select(LedgerEntry)
        .where(LedgerEntry.competition_id == competition.id, LedgerEntry.seq > after)
        .order_by(LedgerEntry.seq)
        .limit(limit)
    )
    for row in rows:
        body = json.loads(row.body)
        out: dict[str, Any] = {
            "seq": row.seq,
            "kind": row.kind,
            "body": body,
            "prev_hash": row.prev_hash,
            "entry_hash": row.entry_hash,
        }
        if row.opening is not None and (
            revealed is None or phase_of.get(body.get("submission")) in revealed
        ):
            out["opening"] = json.loads(row.opening)
        yield _line(out)


def _line(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":")) + "\n"


def entry_count(session: Session, competition_id: int) -> int:
    return (
        session.scalar(
            select(func.count(LedgerEntry.id)).where(LedgerEntry.competition_id == competition_id)
        )
        or 0
    )


def reveal_ended(session: Session, *, now: datetime) -> int:
    """Append a ``revealed`` entry for each phase that has ended since its record last said so
    (the sweep's pass: written once by whichever process sees the moment first; a second one
    racing it writes a duplicate, which says nothing new). How many were appended."""
    ended = session.execute(
        select(Phase.competition_id, Phase.name, Phase.end)
        .where(Phase.end.is_not(None), Phase.end <= now)
        .where(
            select(LedgerEntry.id)
            .where(LedgerEntry.competition_id == Phase.competition_id)
            .exists()
        )
    ).all()
    appended = 0
    for competition_id, name, end in ended:
        said = session.scalar(
            select(LedgerEntry.id).where(
                LedgerEntry.competition_id == competition_id,
                LedgerEntry.kind == facts.REVEALED,
                LedgerEntry.body.contains(f'"phase":{json.dumps(name)}'),
            )
        )
        if said is not None:
            continue
        at_end = head(session, competition_id, until=end)
        facts.revealed(
            session,
            competition_id=competition_id,
            phase=name,
            end=end,
            seq=at_end.seq,
            head=at_end.hash,
        )
        appended += 1
    return appended
