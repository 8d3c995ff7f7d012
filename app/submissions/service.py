"""Accepting submissions (cheap checks at upload, the rest when scored) and showing them."""

from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.competitions.metric import is_custom
from app.config import Settings
from app.db import after_commit
from app.errors import Conflict, Forbidden, NotFound, Unprocessable
from app.models import Competition, Submission, TeamMember, User
from app.ops.logs import current_request_id
from app.scoring.intake import IntakeError, check_submission_header, read_header
from app.scoring.keys import intake_limits
from app.scoring.queue import ScoringQueue
from app.storage import store_stream
from app.submissions.quota import charge
from app.teams.service import locked_team_for


def create_submission(
    session: Session,
    *,
    competition: Competition,
    user: User,
    source: BinaryIO,
    filename: str,
    description: str,
    settings: Settings,
    queue: ScoringQueue,
    baseline: bool = False,
) -> Submission:
    now = datetime.now(UTC)
    if baseline and not user.is_organiser:
        raise Forbidden("only organisers can make baseline submissions")
    if now < competition.start and not user.is_organiser:
        raise Forbidden(f"submissions open at {competition.start.isoformat()}")
    key = competition.board_key
    if key is None:
        raise Conflict("this competition does not accept submissions yet: it has no answer key")
    if is_custom(competition) and not competition.custom_metric_path:
        raise Conflict(
            "this competition does not accept submissions yet: its metric file is missing"
        )
    # Locked until commit: the quota check below cannot be raced past, nor the team merged away.
    team = locked_team_for(session, competition=competition, user=user)
    if team.banned_at is not None:
        raise Forbidden("your team has been banned from this competition")
    if not baseline:
        charge(session, competition=competition, team=team, now=now)
    directory = Path(settings.data_dir) / "submissions" / str(competition.id) / str(team.id)
    stored = store_stream(source, directory=directory, max_bytes=settings.max_upload_bytes)
    try:
        # The key row carries the same id_column / target_columns the parsed table would.
        header = read_header(stored.path, limits=intake_limits(settings))
        check_submission_header(header, key)  # type: ignore[arg-type]
    except IntakeError as exc:
        _discard(session, stored.path)
        raise Unprocessable(exc.message, extra={"kind": exc.kind}) from None
    submission = Submission(
        competition_id=competition.id,
        team_id=team.id,
        user_id=user.id,
        description=description,
        filename=filename[:255],
        path=str(stored.path),
        size_bytes=stored.size,
        sha256=stored.sha256,
        created_at=now,
        late=competition.is_past_deadline(now),
        baseline=baseline,
        request_id=current_request_id(),
    )
    session.add(submission)
    session.flush()
    submission_id = submission.id
    after_commit(session, lambda: queue.enqueue(submission_id))
    return submission


def _discard(session: Session, path: Path) -> None:
    # The same bytes may already be stored for an earlier submission of this team.
    if session.scalar(select(Submission.id).where(Submission.path == str(path))) is None:
        path.unlink(missing_ok=True)


def visible_submission(session: Session, *, submission_id: int, user: User) -> Submission:
    """Load a submission the user may see; anyone else's is reported as not existing."""
    submission = session.get(Submission, submission_id)
    if submission is None:
        raise NotFound(f"no submission {submission_id}")
    if user.is_organiser or is_member(session, team_id=submission.team_id, user=user):
        return submission
    raise NotFound(f"no submission {submission_id}")


def team_submissions(session: Session, *, competition: Competition, user: User) -> list[Submission]:
    query = select(Submission).where(Submission.competition_id == competition.id)
    if not user.is_organiser:
        team_ids = select(TeamMember.team_id).where(
            TeamMember.competition_id == competition.id, TeamMember.user_id == user.id
        )
        query = query.where(Submission.team_id.in_(team_ids))
    return list(session.scalars(query.order_by(Submission.created_at.desc(), Submission.id.desc())))


def is_member(session: Session, *, team_id: int, user: User) -> bool:
    return (
        session.scalar(
            select(TeamMember.id).where(
                TeamMember.team_id == team_id, TeamMember.user_id == user.id
            )
        )
        is not None
    )
