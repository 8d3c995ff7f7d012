"""Winners' checks for prediction competitions: a team attaches the code behind one of its
submissions when the hosts ask for it. The attachment is private to the team and the hosts; its
SHA-256 goes into the record, so the code shown later is provably the code given then."""

from typing import BinaryIO

from sqlalchemy.orm import Session

from app.auth.hosts import is_host
from app.competitions.visibility import require_writable
from app.config import Settings
from app.errors import Conflict, NotFound
from app.ledger.facts import CODE_ATTACHED, fact
from app.ledger.record import Appended
from app.models import Competition, Submission, User
from app.storage import open_stored, store_stream
from app.submissions.service import is_member


def attach_code(
    session: Session,
    *,
    competition: Competition,
    submission_id: int,
    user: User,
    source: BinaryIO,
    settings: Settings,
) -> tuple[Submission, Appended]:
    """Store the team's code for its submission (replacing an earlier attachment) and record
    its hash; anyone but a member of the submission's team is told there is no such submission."""
    submission = session.get(Submission, submission_id)
    if (
        submission is None
        or submission.competition_id != competition.id
        or not is_member(session, team_id=submission.team_id, user=user)
    ):
        raise NotFound(f"no submission {submission_id}")
    require_writable(competition)
    if submission.phase.takes_code:
        raise Conflict(f"submission {submission_id} is code already: its file is what ran")
    stored = store_stream(
        source,
        prefix=f"attachments/{competition.id}/{submission.team_id}",
        settings=settings,
        max_bytes=settings.code_max_bytes,
        suffix=".attachment",
    )
    submission.attachment_path, submission.attachment_sha256 = stored.ref, stored.sha256
    session.flush()
    entry = fact(
        session,
        competition_id=competition.id,
        kind=CODE_ATTACHED,
        submission=submission.id,
        team=submission.team_id,
        sha256=stored.sha256,
        size=stored.size,
    )
    return submission, entry


def attached_code(
    session: Session,
    *,
    competition: Competition,
    submission_id: int,
    user: User,
    settings: Settings,
) -> tuple[Submission, BinaryIO]:
    """The attachment, for the hosts and the submission's team."""
    submission = session.get(Submission, submission_id)
    if (
        submission is None
        or submission.competition_id != competition.id
        or not (
            is_host(session, competition, user)
            or is_member(session, team_id=submission.team_id, user=user)
        )
    ):
        raise NotFound(f"no submission {submission_id}")
    if submission.attachment_path is None:
        raise NotFound(f"submission {submission_id} has no code attached")
    return submission, open_stored(submission.attachment_path, settings=settings)
