"""What a delivery says: ``{"type", "timestamp", "data"}`` as Standard Webhooks suggests. The
data follow the boards' rules for the hosts who read them, and stricter: never a private score,
and nothing of a blind phase's scores (they exist only in the sealed record until it ends)."""

import json
from typing import Any

from sqlalchemy.orm import Session

from app.events import stream as ev
from app.models import Competition, Event, Phase, Submission, Team
from app.models.phase import BOARD_BLIND
from app.submissions.visibility import board_score


def build(session: Session, event: Event, competition: Competition) -> str:
    data: dict[str, Any] = {"competition": competition.slug}
    payload = event.payload or {}
    if event.kind in (ev.SUBMISSION_SCORED, ev.SUBMISSION_FAILED):
        data.update(_submission(session, event))
    elif event.kind in (ev.PHASE_OPENED, ev.PHASE_CLOSED, ev.BOARD_REVEALED):
        data.update(phase=payload.get("phase"), start=payload.get("start"), end=payload.get("end"))
    elif event.kind == ev.REGISTRATION_REQUESTED:
        data.update(user=payload.get("user"))
    body = {"type": event.kind, "timestamp": event.created_at.isoformat(), "data": data}
    return json.dumps(body, separators=(",", ":"), sort_keys=True)


def _submission(session: Session, event: Event) -> dict[str, Any]:
    submission = session.get(Submission, event.submission_id or 0)
    if submission is None:
        return {"submission_id": event.submission_id}
    phase: Phase = submission.phase
    team = session.get(Team, submission.team_id)
    data: dict[str, Any] = {
        "submission_id": submission.id,
        "phase": phase.name,
        "team": team.name if team else None,
        "status": submission.status.value,
        "created_at": submission.created_at.isoformat(),
    }
    if event.kind == ev.SUBMISSION_FAILED:
        data["error"] = submission.error
        return data
    if phase.board == BOARD_BLIND:
        return data  # scored, and nothing of its score
    score = board_score(session, submission, submission.competition)
    if score is not None and score.public_score is not None:
        data["public_score"] = score.public_score
    return data
