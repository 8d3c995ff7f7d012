"""The boards follow from the chain: ``podium verify`` replays what the chain says about every
submission (its team, phase, time, selections, hides, bans, merges and scores) and computes each
team's standing by the phase's counting rule, as app/leaderboard/standings.py does in SQL, then
compares it with the board as published. Plain Python, nothing of the app's database."""

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.ledger.report import Report


@dataclass
class Facts:
    """What the chain says about submissions, replayed in order."""

    team: dict[int, int] = field(default_factory=dict)
    phase: dict[int, str] = field(default_factory=dict)
    at: dict[int, str] = field(default_factory=dict)
    late: dict[int, bool] = field(default_factory=dict)
    refused: dict[int, bool] = field(default_factory=dict)
    baseline: dict[int, bool] = field(default_factory=dict)
    hidden: dict[int, bool] = field(default_factory=dict)
    selected: dict[int, bool] = field(default_factory=dict)
    # (submission, key) -> {"public": {col: v}, "private": {col: v}}
    values: dict[tuple[int, int], dict[str, dict[str, Any]]] = field(default_factory=dict)
    board_key: dict[str, int] = field(default_factory=dict)
    # key id -> the SHA-256 of its file, submission -> the SHA-256 of the file received
    key_sha256: dict[int, str] = field(default_factory=dict)
    sha256: dict[int, str] = field(default_factory=dict)
    # phase -> its rules as last chained (app.ledger.facts.rules)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    team_name: dict[int, str] = field(default_factory=dict)
    merged_into: dict[int, int] = field(default_factory=dict)
    banned: dict[int, bool] = field(default_factory=dict)


def replay(by_seq: dict[int, dict[str, Any]]) -> Facts:
    facts = Facts()
    ends: dict[str, str | None] = {}
    for seq in sorted(by_seq):
        entry = by_seq[seq]
        body = entry.get("body") or {}
        kind = entry.get("kind")
        sub = body.get("submission")
        if kind in ("received", "refused"):
            facts.team[sub] = body.get("team")
            facts.phase[sub] = body.get("phase")
            facts.at[sub] = str(body.get("at") or "")
            facts.sha256[sub] = str(body.get("sha256") or "")
            facts.late[sub] = bool(body.get("late")) or kind == "refused"
            facts.refused[sub] = kind == "refused"
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
            facts.key_sha256[body.get("key")] = str(body.get("sha256") or "")
            if isinstance(body.get("rules"), dict):
                facts.rules[body.get("phase")] = body["rules"]
        elif kind == "phase_changed":
            ends[body.get("phase")] = body.get("end")
            _relabel_late(facts, ends)
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
            for sub in body.get("unselected") or []:
                facts.selected[sub] = False  # more selections together than the limit
    return facts


def _relabel_late(facts: Facts, ends: dict[str, str | None]) -> None:
    """A moved end moves what counts as late, as the server relabels it: every submission made
    at or after the competition's deadline (its last phase's end; none while a phase is
    open-ended). A refused upload stays out of the boards whatever its time."""
    if any(end is None for end in ends.values()):
        deadline = None
    else:
        deadline = max(datetime.fromisoformat(str(end)) for end in ends.values())
    for sub, at in facts.at.items():
        if facts.refused.get(sub):
            continue
        try:
            made = datetime.fromisoformat(at)
        except ValueError:
            continue
        facts.late[sub] = deadline is not None and made >= deadline


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
    facts: Facts, phase: str, board: str, rank_by: str, maximize: bool
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


def _rank_by(facts: Facts, phase: str, key: int) -> str | None:
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


def _direction(facts: Facts, phase: str, rows: list[dict[str, str]]) -> list[bool]:
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


def check_boards(
    boards: dict[tuple[str, str], list[dict[str, str]]],
    by_seq: dict[int, dict[str, Any]],
    report: Report,
) -> None:
    """Each board against the one the chain's scores and the phase's rules give."""
    facts = replay(by_seq)
    names: dict[str, int] = {}
    for team, name in facts.team_name.items():
        if name:
            names[name] = team
    for (phase, board), rows in boards.items():
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
    facts: Facts,
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
    facts: Facts,
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


def _final_team(facts: Facts, team: int | None) -> int | None:
    seen = set()
    while team in facts.merged_into and team not in seen:
        seen.add(team)
        team = facts.merged_into[team]
    return team
