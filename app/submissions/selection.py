"""Final selections: a team picks up to ``final_selection_limit`` of its own scored, on-time
submissions for the private board, until the deadline."""

from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth.hosts import is_host
from app.competitions.visibility import require_writable
from app.errors import Conflict, Forbidden, NotFound
from app.ledger.facts import SELECTED, UNSELECTED, fact
from app.models import Submission, SubmissionStatus, User
from app.models.phase import COUNTS_CHOSEN
from app.submissions.service import is_member
from app.teams.service import lock_teams


def set_selected(session: Session, *, submission_id: int, user: User, selected: bool) -> Submission:
    submission = session.get(Submission, submission_id)
    if submission is None or not is_member(session, team_id=submission.team_id, user=user):
        # Hosts see every submission but select none: selection is the team's choice.
        if submission is not None and is_host(session, submission.competition, user):
            raise Forbidden("only the team's own members select its submissions")
        raise NotFound(f"no submission {submission_id}")
    # An archived competition is read-only: its final boards stand as they were (409 archived).
    require_writable(submission.competition)
    # Each phase's selections close when it ends (a one-phase competition's at its deadline).
    if submission.phase.has_ended(datetime.now(UTC)):
        raise Forbidden("final selections closed at the deadline")
    if submission.selected == selected:
        return submission
    if selected:
        if submission.phase.counts != COUNTS_CHOSEN:
            # A phase that counts each team's best or latest submission has no choices to make.
            raise Conflict(
                f"phase '{submission.phase.name}' counts each team's {submission.phase.counts} "
                "submission: there is nothing to select"
            )
        if submission.late:
            raise Conflict("a late submission cannot be selected")
        if submission.status != SubmissionStatus.scored:
            raise Conflict(
                f"only scored submissions can be selected; this one is {submission.status}"
            )
        lock_teams(session, [submission.team])
        # Selections are per phase, each with its own limit.
        limit = submission.phase.final_selection_limit
        chosen = session.scalar(
            select(func.count(Submission.id)).where(
                Submission.team_id == submission.team_id,
                Submission.phase_id == submission.phase_id,
                Submission.selected.is_(True),
            )
        )
        if (chosen or 0) >= limit:
            raise Conflict(
                f"your team has already selected {limit} submission(s), the limit; "
                "unselect one first"
            )
    submission.selected = selected
    session.flush()
    fact(
        session,
        competition_id=submission.competition_id,
        kind=SELECTED if selected else UNSELECTED,
        submission=submission.id,
        team=submission.team_id,
    )
    return submission
