"""``podium verify``: check a competition's record offline, with no account.

Given the record's lines (``ledger.jsonl``: a header, then the entries), the receipts a
participant kept and the boards as published, :func:`check` says whether the chain holds
together, whether its head carries the server's signature, whether every receipt is in the chain
unchanged, whether every opened seal opens, whether each board is the one the chain's scores
give by the phase's rules (:mod:`app.ledger.boards`), and, from a host's export holding the key
and the submissions, recomputes every score from the files (:mod:`app.ledger.recompute`). It
reads only what it is given; :func:`from_archive` and :func:`from_url` gather that from a host's
export or a server.
"""

import csv
import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app.ledger.boards import check_boards
from app.ledger.chain import GENESIS, canonical, link, opens, sha256_hex
from app.ledger.recompute import recompute
from app.ledger.report import Report
from app.ledger.signing import verifies


@dataclass
class Material:
    """What a verification reads: the record's header and entries, receipts, boards."""

    header: dict[str, Any]
    entries: list[dict[str, Any]]
    receipts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # (phase, board) -> the board CSV's rows
    boards: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)
    source: str = ""
    # A host's export: its answer keys and submissions, to recompute the scores from.
    archive: Path | None = None


def _unsigned(signed: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in signed.items() if k != "signature"}


def _signed_by(key: str, signed: Any) -> bool:
    return (
        isinstance(signed, dict)
        and isinstance(signed.get("signature"), str)
        and verifies(key, _unsigned(signed), signed["signature"])
    )


def check(material: Material, *, pinned_key: str | None = None) -> Report:
    header = material.header
    report = Report(
        competition=str(header.get("competition", "")),
        public_key=str(header.get("public_key", "")),
        key_id=str(header.get("key_id", "")),
    )
    problems = report.problems
    key = report.public_key
    if pinned_key is not None and pinned_key != key:
        problems.append(f"the record is signed with key {key}, not the expected {pinned_key}")
    by_seq = _check_chain(material.entries, report)
    _check_heads(header, by_seq, key, report)
    for name, receipt in material.receipts:
        _check_receipt(name, receipt, by_seq, key, report)
    check_boards(material.boards, by_seq, report)
    _note_reproductions(by_seq, report)
    if material.archive is not None:
        recompute(material.archive, by_seq, report)
    return report


def _note_reproductions(by_seq: dict[int, dict[str, Any]], report: Report) -> None:
    """What the hosts' reproductions of the winners found (the latest of each submission)."""
    latest: dict[Any, str] = {}
    for seq in sorted(by_seq):
        entry = by_seq[seq]
        if entry.get("kind") == "reproduced":
            body = entry.get("body") or {}
            latest[body.get("submission")] = str(body.get("outcome"))
    if latest:
        equal = sum(1 for outcome in latest.values() if outcome == "equal")
        others = sorted(f"{sub} {outcome}" for sub, outcome in latest.items() if outcome != "equal")
        report.notes.append(
            f"winners reproduced: {equal} of {len(latest)} equal"
            + (f" (not: {', '.join(others)})" if others else "")
        )


def _check_chain(entries: list[dict[str, Any]], report: Report) -> dict[int, dict[str, Any]]:
    problems = report.problems
    by_seq: dict[int, dict[str, Any]] = {}
    prev, expected = GENESIS, 1
    for entry in entries:
        seq = entry.get("seq")
        if not isinstance(seq, int) or seq != expected:
            problems.append(
                f"entry {seq}: expected position {expected} (an entry is missing, added or moved)"
            )
            if isinstance(seq, int):
                expected = seq
        if entry.get("prev_hash") != prev:
            problems.append(f"entry {seq}: it does not follow the entry before it")
        body = entry.get("body")
        digest = sha256_hex(canonical(body))
        if link(str(entry.get("prev_hash")), int(seq or 0), digest) != entry.get("entry_hash"):
            problems.append(f"entry {seq}: its hash does not cover its content (changed)")
        if isinstance(body, dict) and body.get("kind") != entry.get("kind"):
            problems.append(f"entry {seq}: its kind differs from the one it was hashed with")
        opening = entry.get("opening")
        if opening is not None:
            if isinstance(body, dict) and opens(str(body.get("sealed")), opening):
                report.opened += 1
            else:
                problems.append(f"entry {seq}: its opened values are not the ones sealed")
        by_seq[int(seq or 0)] = entry
        prev = str(entry.get("entry_hash"))
        expected += 1
    report.entries = len(entries)
    return by_seq


def _check_heads(
    header: dict[str, Any], by_seq: dict[int, dict[str, Any]], key: str, report: Report
) -> None:
    problems = report.problems
    head = header.get("head") or {}
    report.head = f"{head.get('seq')}:{head.get('hash')}"
    if not _signed_by(key, head):
        problems.append("the chain's head is not signed by the server's key")
    seq = head.get("seq")
    last = max(by_seq) if by_seq else 0
    if seq and (seq not in by_seq or by_seq[seq].get("entry_hash") != head.get("hash")):
        problems.append(f"the signed head {report.head} is not in the chain (changed or cut)")
    elif not seq and last:
        problems.append("the signed head is of an empty chain, yet it has entries")
    for signed in header.get("phase_heads") or []:
        moment = signed.get("moment") if isinstance(signed, dict) else None
        if not _signed_by(key, signed):
            problems.append(f"the head signed at {moment} is not signed by the server's key")
            continue
        seq = signed.get("seq")
        if seq and (seq not in by_seq or by_seq[seq].get("entry_hash") != signed.get("hash")):
            problems.append(f"the head signed at {moment} ({seq}) is not in the chain")


def _check_receipt(
    name: str,
    receipt: dict[str, Any],
    by_seq: dict[int, dict[str, Any]],
    key: str,
    report: Report,
) -> None:
    report.receipts += 1
    problems = report.problems
    if not _signed_by(key, receipt):
        problems.append(f"receipt {name}: not signed by the server's key")
        return
    seq = receipt.get("seq")
    entry = by_seq.get(seq) if isinstance(seq, int) else None
    if entry is None:
        problems.append(f"receipt {name}: its entry {seq} is not in the chain")
        return
    if entry.get("entry_hash") != receipt.get("entry_hash") or canonical(
        entry.get("body")
    ) != canonical(receipt.get("body")):
        problems.append(
            f"receipt {name}: the chain's entry {seq} is not the one the server signed then "
            "(the record was changed after it)"
        )


# --- gathering the material -------------------------------------------------------------------


def parse_lines(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header: dict[str, Any] = {}
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise VerifyError(f"line {number} of the record is not JSON") from None
        if not isinstance(value, dict):
            raise VerifyError(f"line {number} of the record is not an object")
        if "ledger" in value:
            header = header or value
        else:
            entries.append(value)
    if not header:
        raise VerifyError("the record has no header line (its public key and signed head)")
    return header, entries


def parse_board(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


class VerifyError(Exception):
    """The material cannot be read at all."""


def read_receipts(directory: Path) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(directory.rglob("*.json")):
        try:
            value = json.loads(path.read_text())
        except (OSError, ValueError):
            raise VerifyError(f"{path} is not a JSON receipt") from None
        if isinstance(value, dict) and "receipt" in value:
            found.append((path.name, value))
    return found


def from_archive(path: Path) -> Material:
    """A host's export (a zip holding ``ledger.jsonl`` and ``boards/<phase>-<board>.csv``), or
    a ``ledger.jsonl`` on its own."""
    try:
        return _from_archive(path)
    except (OSError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        raise VerifyError(f"cannot read {path}: {exc}") from None


def _from_archive(path: Path) -> Material:
    if not zipfile.is_zipfile(path):
        header, entries = parse_lines(path.read_text())
        return Material(header, entries, source=str(path))
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        ledger = next((n for n in names if n.rsplit("/", 1)[-1] == "ledger.jsonl"), None)
        if ledger is None:
            raise VerifyError(f"{path} holds no ledger.jsonl")
        header, entries = parse_lines(archive.read(ledger).decode())
        boards = {}
        for name in names:
            parts = name.split("/")
            if len(parts) >= 2 and parts[-2] == "boards" and name.endswith(".csv"):
                phase, _, board = parts[-1].removesuffix(".csv").rpartition("-")
                boards[(phase, board)] = parse_board(archive.read(name).decode())
    return Material(header, entries, boards=boards, source=str(path), archive=path)


def split_url(url: str) -> tuple[str, str]:
    """The server's base URL and the competition's slug, from the competition's page
    (``…/c/<slug>``) or any API URL under ``…/competitions/<slug>``."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    at = next((i for i, s in enumerate(segments) if s in ("c", "competitions")), None)
    if at is None or at + 1 >= len(segments):
        raise VerifyError(f"{url} names no competition (…/c/<slug> or …/competitions/<slug>)")
    prefix = "/".join(s for s in segments[:at] if s not in ("api", "v1"))
    base = f"{parts.scheme}://{parts.netloc}" + (f"/{prefix}" if prefix else "")
    return base, segments[at + 1]


def from_url(url: str, *, get: Any) -> Material:
    """The record of the competition at ``url`` as the server serves it to anyone, and its
    boards. ``get(url) -> (status, text)`` fetches. The record is read again after the boards,
    so that it is at least as new as they are (a score settled in between is in it)."""
    base, slug = split_url(url)
    api = f"{base}/api/v1/competitions/{slug}"
    header, entries = _read_record(api, get, {}, [])
    boards: dict[tuple[str, str], list[dict[str, str]]] = {}
    phases = sorted({e["body"].get("phase") for e in entries if e.get("kind") == "key_published"})
    for phase in phases:
        for board in ("public", "private"):
            status, text = get(f"{api}/leaderboard.csv?board={board}&phase={phase}")
            if status == 200:
                boards[(phase, board)] = parse_board(text)
    header, entries = _read_record(api, get, header, entries)
    return Material(header, entries, boards=boards, source=url)


def _read_record(
    api: str, get: Any, header: dict[str, Any], entries: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The record's entries after those in ``entries``, page by page, and the newest header."""
    while True:
        after = entries[-1].get("seq", 0) if entries else 0
        status, text = get(f"{api}/ledger?after={after}")
        if status != 200:
            raise VerifyError(f"{api}/ledger answered {status}")
        header, page = parse_lines(text)
        entries = entries + page
        if not header.get("more") or not page:
            return header, entries


def iter_problems(reports: Iterable[Report]) -> list[str]:
    return [p for r in reports for p in r.problems]
