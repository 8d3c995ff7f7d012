"""The facts the record keeps, each built from plain values and appended through
:func:`app.ledger.record.append`. Ids name things (a team's name may change, its id does not);
a team's name at the time rides along for people reading the chain.

Which values are sealed follows the board rules of ``app/submissions/visibility.py``: a private
value and the whole-key score always, until the phase ends; a public value too when its phase's
board is not public or the Ladder releases public scores in steps.
"""

from typing import Any

from sqlalchemy.orm import Session

from app.evaluation.columns import columns_for
from app.evaluation.metric import metric_for
from app.ledger.chain import canonical, sha256_hex
from app.ledger.record import Appended, append
from app.metrics import MetricParamsError, UnknownMetric
from app.models.phase import BOARD_PUBLIC
from app.scoring.columns import ColumnError

RECEIVED, REFUSED, SCORED, FAILED, RESCORED = "received", "refused", "scored", "failed", "rescored"
SELECTED, UNSELECTED = "selected", "unselected"
KEY_PUBLISHED, PHASE_CHANGED, REVEALED = "key_published", "phase_changed", "revealed"
TEAM_MERGED, TEAM_BANNED, TEAM_UNBANNED = "team_merged", "team_banned", "team_unbanned"
HIDDEN, UNHIDDEN, DELETED = "hidden", "unhidden", "deleted"
RERUN, CODE_ATTACHED, REPRODUCED = "rerun", "code_attached", "reproduced"


def public_in_clear(board: str | None, public_board_mode: str | None) -> bool:
    """Whether a phase's public values may be read by anyone as soon as they are scored."""
    return (board or BOARD_PUBLIC) == BOARD_PUBLIC and (public_board_mode or "exact") == "exact"


def received(
    session: Session,
    *,
    competition_id: int,
    submission: Any,
    team_name: str,
    phase: str,
    refusal: str | None = None,
    migrated_from: int | None = None,
) -> Appended:
    fact = {
        "submission": submission.id,
        "team": submission.team_id,
        "team_name": team_name,
        "phase": phase,
        "sha256": submission.sha256,
        "size": submission.size_bytes,
        "details_sha256": sha256_hex(canonical(submission.details)) if submission.details else None,
        "late": bool(submission.late),
        "baseline": bool(submission.baseline),
    }
    if refusal is not None:
        fact["reason"] = refusal[:500]
    if migrated_from is not None:  # carried into a new phase (app.competitions.migration)
        fact["migrated_from"] = migrated_from
    return append(
        session,
        competition_id=competition_id,
        kind=REFUSED if refusal is not None else RECEIVED,
        fact=fact,
        at=submission.created_at,
    )


def scored(
    session: Session,
    *,
    competition_id: int,
    submission_id: int,
    key_id: int,
    values: dict[str, Any],
    clear_public: bool,
    kind: str = SCORED,
) -> Appended:
    """A score row's values (``values``: a score row's ``score``, ``public_score``,
    ``private_score`` and ``columns``), the ones not yet public sealed."""
    columns = values.get("columns") or {
        "score": {
            "score": values.get("score"),
            "public": values.get("public_score"),
            "private": values.get("private_score"),
        }
    }
    clear: dict[str, Any] = {}
    hidden: dict[str, Any] = {}
    for name, cell in columns.items():
        cell = cell or {}
        hidden[name] = {"score": cell.get("score"), "private": cell.get("private")}
        if clear_public:
            clear[name] = {"public": cell.get("public")}
        else:
            hidden[name]["public"] = cell.get("public")
    return append(
        session,
        competition_id=competition_id,
        kind=kind,
        fact={"submission": submission_id, "key": key_id, "columns": clear},
        sealed=hidden,
    )


def failed(
    session: Session,
    *,
    competition_id: int,
    submission_id: int,
    key_id: int | None,
    error: str | None,
    kind: str = FAILED,
) -> Appended:
    return append(
        session,
        competition_id=competition_id,
        kind=kind,
        fact={"submission": submission_id, "key": key_id, "error": (error or "")[:500]},
    )


def fact(session: Session, *, competition_id: int, kind: str, **values: Any) -> Appended:
    """Any other fact: its values as they are."""
    return append(session, competition_id=competition_id, kind=kind, fact=values)


def rules(phase: Any) -> dict[str, Any]:
    """What ``podium verify`` needs to replay a phase's boards from the chain's scores: which
    submission of a team counts, how many a team's auto-choice takes, and the column that ranks
    and its direction (canonical JSON sorts a score's columns by name, so the chain cannot tell
    which came first)."""
    out: dict[str, Any] = {
        "counts": phase.counts,
        "selection_limit": phase.final_selection_limit,
    }
    try:
        ranking = columns_for(phase.competition, phase)[0]
        # The standings rank by the competition's metric's direction (app.leaderboard.standings).
        maximize = metric_for(phase.competition).greater_is_better
    except (ColumnError, UnknownMetric, MetricParamsError, ValueError):
        return out  # a phase being set up: its boards are replayed with what is known
    out.update(rank_by=ranking.key, direction="maximize" if maximize else "minimize")
    return out


def key_published(session: Session, *, competition_id: int, phase: Any, key: Any) -> Appended:
    """A key version now decides a phase's board: its id, version and the file's SHA-256, and
    the phase's rules then. ``phase``: the Phase (or, from a caller that has only its name, the
    name: the rules then come from the phase's last ``phase_changed``)."""
    named = isinstance(phase, str)
    return fact(
        session,
        competition_id=competition_id,
        kind=KEY_PUBLISHED,
        phase=phase if named else phase.name,
        key=key.id,
        version=key.version,
        sha256=key.sha256,
        **({} if named else {"rules": rules(phase)}),
    )


def phase_changed(session: Session, *, competition_id: int, phase: Any) -> Appended:
    """A phase's window and rules as they now stand."""
    return fact(
        session,
        competition_id=competition_id,
        kind=PHASE_CHANGED,
        phase=phase.name,
        start=phase.start.isoformat() if phase.start else None,
        end=phase.end.isoformat() if phase.end else None,
        board=phase.board,
        counts=phase.counts,
        rules=rules(phase),
    )


def revealed(
    session: Session, *, competition_id: int, phase: str, end: Any, seq: int, head: str
) -> Appended:
    """A phase's sealed values are open from now on; the head as the phase ended is chained."""
    return fact(
        session,
        competition_id=competition_id,
        kind=REVEALED,
        phase=phase,
        end=end.isoformat(),
        head_at_end={"seq": seq, "hash": head},
    )
