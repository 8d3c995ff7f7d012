"""A host's rerun of a submission: its code run again (or its file scored again) on the same
inputs, to check that a result stands (the same code gives the same score) or after a run the
platform lost or a limit raised since.

The submission goes back to the queue as it is: no new submission, so nothing more is charged to
its team's quota (and a refund it had is kept, :func:`app.jobs.score._settle`). Its score against
the published key is taken back, so that the run writes the one it gets; until then the boards
leave it out, as they leave out any submission still in the queue.
"""

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.config import Settings
from app.db import after_commit
from app.errors import Conflict, NotFound
from app.jobs.queue import ScoringQueue
from app.ledger.facts import RERUN, fact
from app.models import Score, Submission, SubmissionStatus, User
from app.models.submission import PENDING_STATUSES
from app.storage import open_stored


def rerun_submission(
    session: Session,
    *,
    submission: Submission,
    actor: User,
    queue: ScoringQueue,
    settings: Settings,
) -> Submission:
    """Queue a finished submission again, audited with what it had before."""
    if submission.status in PENDING_STATUSES:
        raise Conflict(
            f"submission {submission.id} is {submission.status.value}: it will be "
            "scored without a rerun"
        )
    if not _kept(submission, settings):
        raise Conflict(
            f"submission {submission.id} was refused at upload: its file was not kept, "
            "there is nothing to run again"
        )
    key = submission.phase.board_key
    score = (
        session.scalar(
            select(Score).where(Score.submission_id == submission.id, Score.answer_key_id == key.id)
        )
        if key is not None
        else None
    )
    before = {
        "status": submission.status.value,
        "failure": submission.run_failure,
        "public_score": score.public_score if score else None,
        "private_score": score.private_score if score else None,
    }
    if score is not None:
        session.delete(score)  # its interval goes with it (ON DELETE CASCADE)
    submission.status = SubmissionStatus.queued
    submission.attempts = 0
    submission.lease_expires_at = submission.started_at = submission.finished_at = None
    submission.error = submission.host_error = submission.run_failure = None
    submission.log_head = submission.log_tail = None
    submission.log_bytes = None
    # The run starts from the code again, not from the file the last run wrote.
    submission.output_path = None
    session.flush()
    record(
        session,
        competition=submission.competition,
        actor=actor,
        action="submission_rerun",
        target=str(submission.id),
        before=before,
        after={"status": "queued"},
    )
    fact(
        session,
        competition_id=submission.competition_id,
        kind=RERUN,
        submission=submission.id,
        key=key.id if key is not None else None,
    )
    submission_id, code = submission.id, submission.phase.takes_code
    after_commit(session, lambda: queue.enqueue(submission_id, code=code))
    return submission


def _kept(submission: Submission, settings: Settings) -> bool:
    """Whether the submission's file is still stored (a file refused at upload is not)."""
    if not submission.path:
        return False
    try:
        open_stored(submission.path, settings=settings).close()
    except NotFound:
        return False
    return True
