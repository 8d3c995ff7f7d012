"""A team's turn: at most one code run per team at a time.

A code submission is claimed as ``running`` only while no other submission of its team is
running under a live lease; the check is part of the claim's own UPDATE (and, on PostgreSQL, the
team's claims take an advisory lock first, so two workers cannot both see the team free). A
submission that has to wait is not failed and uses no attempt: it stays ``queued``. When a run
settles, the job that ran it hands the team's next waiting code submission to the queue
(:func:`next_in_line`); should that hand-over be lost, the sweep delivers it like any other
queued submission. A run whose lease lapsed (its worker died) holds no turn.
"""

from sqlalchemy import exists, select, text
from sqlalchemy.orm import Session, aliased, sessionmaker

from app.jobs.lease import Lease, now, try_claim
from app.models import Phase, Submission, SubmissionStatus
from app.models.phase import KIND_CODE, KIND_SIMULATION

# pg_advisory_xact_lock(key, team id): the key names this lock among the app's.
_TURN_LOCK = 0x434F  # "CO"
_LOCK = text(f"SELECT pg_advisory_xact_lock({_TURN_LOCK}, :team_id)")
_FINAL = (SubmissionStatus.scored, SubmissionStatus.failed)


def _team_free(team_id: int, submission_id: int):  # type: ignore[no-untyped-def]
    """No other submission of the team is running under a lease that still holds."""
    other = aliased(Submission)
    return ~exists(
        select(other.id).where(
            other.team_id == team_id,
            other.id != submission_id,
            other.status == SubmissionStatus.running,
            other.lease_expires_at >= now(),
        )
    )


def claim_run(session: Session, submission: Submission, *, seconds: float) -> Lease | None:
    """Claim a code submission for its run, when it is claimable and its team's turn is free."""
    bind = session.get_bind()
    if bind.dialect.name == "postgresql":
        # Two claims of one team on two workers would each see the other's row still queued.
        session.execute(_LOCK, {"team_id": submission.team_id})
    return try_claim(
        session,
        submission.id,
        seconds=seconds,
        status=SubmissionStatus.running,
        also=_team_free(submission.team_id, submission.id),
    )


def next_in_line(factory: sessionmaker[Session], submission_id: int) -> int | None:
    """The team's oldest code submission waiting for its turn, once ``submission_id`` is final
    (a job that only found its team busy hands nothing over: it would wake the others in turn)."""
    with factory() as session:
        done = session.get(Submission, submission_id)
        if done is None or done.status not in _FINAL:
            return None
        return session.scalar(
            select(Submission.id)
            .join(Phase, Phase.id == Submission.phase_id)
            .where(
                Submission.team_id == done.team_id,
                Submission.id != submission_id,
                Submission.status == SubmissionStatus.queued,
                Phase.submission_kind.in_((KIND_CODE, KIND_SIMULATION)),
            )
            .order_by(Submission.id)
            .limit(1)
        )
