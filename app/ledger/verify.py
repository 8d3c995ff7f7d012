"""``podium verify``: check a competition's record offline, with no account.

Given the record's lines (``ledger.jsonl``: a header, then the entries), the receipts a
participant kept and the boards as published, :func:`check` says whether the chain holds
together, whether its head carries the server's signature, whether every receipt is in the chain
unchanged, whether every opened seal opens, and whether every score on the boards comes from a
score in the chain. It reads only what it is given; :func:`from_archive` and :func:`from_url`
gather that from a host's export or a server.
"""

import csv
import io
import json
import math
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app.ledger.chain import GENESIS, canonical, link, opens, sha256_hex
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


@dataclass
class Report:
    competition: str = ""
    public_key: str = ""
    key_id: str = ""
    entries: int = 0
    head: str = ""
    opened: int = 0
    receipts: int = 0
    boards: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        out = [
            f"competition: {self.competition}",
            f"server key: {self.public_key} (id {self.key_id})",
            f"chain: {self.entries} entries, head {self.head}",
            f"sealed values opened and checked: {self.opened}",
            f"receipts checked: {self.receipts}",
            f"boards checked: {self.boards}",
        ]
        out += [f"note: {n}" for n in self.notes]
        out += [f"BROKEN: {p}" for p in self.problems]
        out.append("verdict: " + ("OK" if self.ok else f"{len(self.problems)} problem(s)"))
        return out


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
    _check_boards(material, by_seq, report)
    return report


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


# --- the boards follow from the chain's scores ------------------------------------------------


@dataclass
class _Facts:
    """What the chain says about submissions, replayed in order."""

    team: dict[int, int] = field(default_factory=dict)
    phase: dict[int, str] = field(default_factory=dict)
    at: dict[int, str] = field(default_factory=dict)
    late: dict[int, bool] = field(default_factory=dict)
    baseline: dict[int, bool] = field(default_factory=dict)
    hidden: dict[int, bool] = field(default_factory=dict)
    selected: dict[int, bool] = field(default_factory=dict)
    # (submission, key) -> {"public": {col: v}, "private": {col: v}}
    values: dict[tuple[int, int], dict[str, dict[str, Any]]] = field(default_factory=dict)
    board_key: dict[str, int] = field(default_factory=dict)
    # phase -> its rules as last chained (app.ledger.facts.rules)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    team_name: dict[int, str] = field(default_factory=dict)
    merged_into: dict[int, int] = field(default_factory=dict)
    banned: dict[int, bool] = field(default_factory=dict)


def _replay(by_seq: dict[int, dict[str, Any]]) -> _Facts:
    facts = _Facts()
    for seq in sorted(by_seq):
        entry = by_seq[seq]
        body = entry.get("body") or {}
        kind = entry.get("kind")
        sub = body.get("submission")
        if kind in ("received", "refused"):
            facts.team[sub] = body.get("team")
            facts.phase[sub] = body.get("phase")
            facts.at[sub] = str(body.get("at") or "")
            facts.late[sub] = bool(body.get("late")) or kind == "refused"
            facts.baseline[sub] = bool(body.get("baseline"))
            facts.team_name.setdefault(body.get("team"), body.get("team_name"))
        elif kind in ("scored", "rescored") and "columns" in body:
            values: dict[str, dict[str, Any]] = {"public": {}, "private": {}}
            for col, cell in (body.get("columns") or {}).items():
                values["public"][col] = cell.get("public")
            opened = (entry.get("opening") or {}).get("values") or {}
            for col, cell in opened.items():
                for split in ("public", "private"):
                    if split in cell:
                        values[split][col] = cell[split]
            facts.values[(sub, body.get("key"))] = values
        elif kind == "rerun":
            facts.values.pop((sub, body.get("key")), None)
        elif kind == "key_published":
            facts.board_key[body.get("phase")] = body.get("key")
            if isinstance(body.get("rules"), dict):
                facts.rules[body.get("phase")] = body["rules"]
        elif kind == "phase_changed":
            known = facts.rules.setdefault(body.get("phase"), {})
            if isinstance(body.get("rules"), dict):
                known.update(body["rules"])
            elif body.get("counts"):
                known["counts"] = body["counts"]
        elif kind in ("selected", "unselected"):
            facts.selected[sub] = kind == "selected"
        elif kind in ("hidden", "unhidden"):
            facts.hidden[sub] = kind == "hidden"
        elif kind in ("team_banned", "team_unbanned"):
            facts.banned[body.get("team")] = kind == "team_banned"
        elif kind == "team_merged":
            facts.merged_into[body.get("absorbed")] = body.get("team")
            facts.team_name[body.get("team")] = body.get("team_name")
    return facts


def _close(shown: float, value: Any) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    if math.isclose(shown, value, rel_tol=1e-12, abs_tol=1e-12):
        return True
    # The board rounds for participants: any rounding of the chain's value will do.
    return any(math.isclose(round(value, d), shown, abs_tol=1e-12) for d in range(16))


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


@dataclass(frozen=True)
class _Candidate:
    submission: int
    at: str
    public: float | None
    private: float | None
    selected: bool


def expected_board(
    facts: _Facts, phase: str, board: str, rank_by: str, maximize: bool
) -> dict[int, float]:
    """Each team's score on a phase's board as the phase's counting rule picks it from the
    chain's scores (the rules of app/leaderboard/standings.py): the team's eligible submissions
    (scored against the board's key, not hidden, not late, team not banned); public, its best
    public score (``last``: its latest's); private, ``best``: its best private score, ``last``:
    its latest's, ``chosen``: the best among those it selected, or with none selected among
    its best ``selection_limit`` by public score. Baselines stand apart and are left out."""
    key = facts.board_key[phase]
    rules = facts.rules.get(phase, {})
    counts = rules.get("counts") or "chosen"
    limit = int(rules.get("selection_limit") or 2)
    sign = -1.0 if maximize else 1.0
    by_team: dict[int, list[_Candidate]] = {}
    for (sub, k), values in facts.values.items():
        team = _final_team(facts, facts.team.get(sub))
        if (
            k != key
            or team is None
            or facts.phase.get(sub) != phase
            or facts.hidden.get(sub)
            or facts.late.get(sub)
            or facts.baseline.get(sub)
            or facts.banned.get(team)
        ):
            continue
        by_team.setdefault(team, []).append(
            _Candidate(
                sub,
                facts.at.get(sub, ""),
                _number(values["public"].get(rank_by)),
                _number(values["private"].get(rank_by)),
                bool(facts.selected.get(sub)),
            )
        )
    out: dict[int, float] = {}
    for team, rows in by_team.items():
        newest = sorted(rows, key=lambda r: (r.at, r.submission), reverse=True)
        if board == "public":
            with_public = [r for r in rows if r.public is not None]
            if not with_public:
                continue
            if counts == "last":
                out[team] = next(r.public for r in newest if r.public is not None)  # type: ignore[misc]
            else:
                out[team] = min(sign * r.public for r in with_public) * sign  # type: ignore[operator]
            continue
        with_private = [r for r in rows if r.private is not None]
        if counts == "last":
            pool = [r for r in newest if r.private is not None][:1]
        elif counts == "best":
            pool = with_private
        elif any(r.selected for r in rows):
            pool = [r for r in with_private if r.selected]
        else:
            by_public = sorted(
                (r for r in rows if r.public is not None),
                key=lambda r: (sign * r.public, r.at, r.submission),  # type: ignore[operator]
            )[:limit]
            pool = [r for r in by_public if r.private is not None]
        if pool:
            out[team] = min(sign * r.private for r in pool) * sign  # type: ignore[operator]
    return out


def _rank_by(facts: _Facts, phase: str, key: int) -> str | None:
    """The ranking column: as chained, or a score's only column."""
    rank_by = facts.rules.get(phase, {}).get("rank_by")
    if rank_by:
        return str(rank_by)
    names = {
        col
        for (_sub, k), values in facts.values.items()
        if k == key
        for split in values.values()
        for col in split
    }
    return names.pop() if len(names) == 1 else None


def _direction(facts: _Facts, phase: str, rows: list[dict[str, str]]) -> list[bool]:
    """Whether the board maximizes: as chained, else as the board's order says (both when it
    cannot tell)."""
    direction = facts.rules.get(phase, {}).get("direction")
    if direction in ("maximize", "minimize"):
        return [direction == "maximize"]
    scores = [_number(_float(r.get("score"))) for r in rows if r.get("baseline") != "true"]
    steps = [
        b - a for a, b in zip(scores, scores[1:], strict=False) if a is not None and b is not None
    ]
    if any(d < 0 for d in steps):
        return [True]
    if any(d > 0 for d in steps):
        return [False]
    return [True, False]


def _float(text: str | None) -> float | None:
    try:
        return float(text or "")
    except ValueError:
        return None


def _check_boards(material: Material, by_seq: dict[int, dict[str, Any]], report: Report) -> None:
    facts = _replay(by_seq)
    names: dict[str, int] = {}
    for team, name in facts.team_name.items():
        if name:
            names[name] = team
    for (phase, board), rows in material.boards.items():
        key = facts.board_key.get(phase)
        if key is None:
            if rows:
                report.problems.append(f"board {phase}/{board}: rows, but no key was published")
            continue
        report.boards += 1
        _check_order(phase, board, rows, report)
        if rows and not any(
            value is not None
            for (_sub, k), values in facts.values.items()
            if k == key
            for value in values[board].values()
        ):
            # Sealed still (a private board before the reveal, a Ladder's public one).
            report.notes.append(f"board {phase}/{board}: its values are still sealed")
            continue
        rank_by = _rank_by(facts, phase, key)
        if rank_by is None:
            report.notes.append(
                f"board {phase}/{board}: the chain does not say which column ranks; each score "
                "is checked to be one the chain holds for its team, not replayed"
            )
            _check_membership(facts, names, phase, board, key, rows, report)
            continue
        attempts = [
            _replay_problems(facts, names, phase, board, rows, rank_by, maximize)
            for maximize in _direction(facts, phase, rows)
        ]
        report.problems.extend(min(attempts, key=len))


def _replay_problems(
    facts: _Facts,
    names: dict[str, int],
    phase: str,
    board: str,
    rows: list[dict[str, str]],
    rank_by: str,
    maximize: bool,
) -> list[str]:
    """How the board differs from the one the chain's scores and the phase's rules give."""
    where = f"board {phase}/{board}"
    expected = expected_board(facts, phase, board, rank_by, maximize)
    problems = []
    shown_teams: set[int] = set()
    for row in rows:
        if row.get("baseline") == "true":
            continue
        team_name, shown_text = row.get("team", ""), row.get("score", "")
        team = names.get(team_name.removeprefix("'"))
        shown = _float(shown_text)
        if shown is None:
            problems.append(f"{where}: {team_name}'s score is not a number")
            continue
        if team is None:
            problems.append(f"{where}: team {team_name} is not in the chain")
            continue
        shown_teams.add(team)
        if facts.banned.get(team):
            problems.append(f"{where}: team {team_name} is banned")
            continue
        if team not in expected:
            problems.append(
                f"{where}: team {team_name} is ranked, but by the chain it has no submission "
                "that counts"
            )
        elif not _close(shown, expected[team]):
            problems.append(
                f"{where}: team {team_name}'s score {shown_text} is not the {expected[team]!r} "
                f"the chain's scores give it by the phase's rules"
            )
    for team in sorted(set(expected) - shown_teams):
        name = facts.team_name.get(team) or str(team)
        problems.append(
            f"{where}: team {name} is missing (by the chain it scores {expected[team]!r})"
        )
    return problems


def _check_membership(
    facts: _Facts,
    names: dict[str, int],
    phase: str,
    board: str,
    key: int,
    rows: list[dict[str, str]],
    report: Report,
) -> None:
    """Each score on the board is one the chain holds for its team (any column)."""
    for row in rows:
        if row.get("baseline") == "true":
            continue
        team_name, shown_text = row.get("team", ""), row.get("score", "")
        team = names.get(team_name.removeprefix("'"))
        shown = _float(shown_text)
        if shown is None:
            report.problems.append(f"board {phase}/{board}: {team_name}'s score is not a number")
            continue
        if team is None:
            report.problems.append(f"board {phase}/{board}: team {team_name} is not in the chain")
            continue
        if facts.banned.get(team):
            report.problems.append(f"board {phase}/{board}: team {team_name} is banned")
        candidates = [
            cell
            for (sub, k), values in facts.values.items()
            if k == key
            and _final_team(facts, facts.team.get(sub)) == team
            and facts.phase.get(sub) == phase
            and not facts.hidden.get(sub)
            and not facts.late.get(sub)
            for cell in values[board].values()
        ]
        if not any(_close(shown, value) for value in candidates):
            report.problems.append(
                f"board {phase}/{board}: team {team_name}'s score {shown_text} is not a "
                "score the chain holds for it"
            )


def _check_order(phase: str, board: str, rows: list[dict[str, str]], report: Report) -> None:
    """Each team once, ranked 1, 2, 3, … and its scores in one direction down the board (ties
    keep their order by the tie-breaking columns and time, which the chain does not hold)."""
    ranked = [r for r in rows if r.get("baseline") != "true"]
    names = [r.get("team", "") for r in ranked]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        report.problems.append(f"board {phase}/{board}: teams listed twice: {', '.join(twice)}")
    try:
        ranks = [int(r.get("rank", "")) for r in ranked]
    except ValueError:
        ranks = []
    if len(ranks) != len(ranked) or any(b < a for a, b in zip(ranks, ranks[1:], strict=False)):
        report.problems.append(f"board {phase}/{board}: its ranks are not in order")
    try:
        scores = [float(r.get("score", "")) for r in ranked]
    except ValueError:
        return  # named row by row
    steps = [b - a for a, b in zip(scores, scores[1:], strict=False)]
    if any(d > 0 for d in steps) and any(d < 0 for d in steps):
        report.problems.append(f"board {phase}/{board}: its scores are not in rank order")


def _final_team(facts: _Facts, team: int | None) -> int | None:
    seen = set()
    while team in facts.merged_into and team not in seen:
        seen.add(team)
        team = facts.merged_into[team]
    return team


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
    return Material(header, entries, boards=boards, source=str(path))


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
