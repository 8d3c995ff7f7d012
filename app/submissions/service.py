"""Accepting submissions (cheap checks at upload, the rest when scored) and showing them."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.competitions.metric import is_custom
from app.config import Settings
from app.db import after_commit
from app.errors import Conflict, NotFound, TooManyRequests, Unprocessable
from app.models import Competition, Score, Submission, Team, TeamMember, User
from app.scoring.intake import IntakeError, check_submission_header, read_header
from app.scoring.queue import ScoringQueue
from app.storage import store_stream
from app.submissions.schemas import (
    SubmissionHost,
    SubmissionPublic,
    SubmissionRevealed,
)


def team_for(session: Session, *, competition: Competition, user: User) -> Team:
    """The user's team in this competition, made as a one-person team on first need."""
    team = session.scalar(
        select(Team)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .where(TeamMember.competition_id == competition.id, TeamMember.user_id == user.id)
    )
    if team is not None:
        return team
    name = user.name
    taken = set(
        session.scalars(
            select(Team.name).where(
                Team.competition_id == competition.id, Team.name.startswith(user.name)
            )
        )
    )
    suffix = 2
    while name in taken:
        name, suffix = f"{user.name}-{suffix}", suffix + 1
    team = Team(competition_id=competition.id, name=name)
    session.add(team)
    session.flush()
    session.add(TeamMember(team_id=team.id, competition_id=competition.id, user_id=user.id))
    session.flush()
    return team


def start_of_utc_day(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _lock_team(session: Session, team: Team) -> None:
    # Serialises one team's concurrent uploads so the daily count cannot be raced past
    # (SQLite's BEGIN IMMEDIATE already serialises every writer).
    session.execute(select(Team.id).where(Team.id == team.id).with_for_update())


def used_today(session: Session, *, team: Team, now: datetime) -> int:
    return session.scalar(
        select(func.count(Submission.id)).where(
            Submission.team_id == team.id, Submission.created_at >= start_of_utc_day(now)
        )
    ) or 0


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
) -> Submission:
    key = competition.board_key
    if key is None:
        raise Conflict("this competition does not accept submissions yet: it has no answer key")
    if is_custom(competition) and not competition.custom_metric_path:
        raise Conflict("this competition does not accept submissions yet: its metric file is missing")
    now = datetime.now(UTC)
    team = team_for(session, competition=competition, user=user)
    _lock_team(session, team)
    used = used_today(session, team=team, now=now)
    if used >= competition.daily_submission_limit:
        resets = start_of_utc_day(now) + timedelta(days=1)
        raise TooManyRequests(
            f"your team has used all {competition.daily_submission_limit} submissions for today; "
            f"the count resets at {resets.isoformat()}"
        )
    directory = Path(settings.data_dir) / "submissions" / str(competition.id) / str(team.id)
    stored = store_stream(source, directory=directory, max_bytes=settings.max_upload_bytes)
    try:
        # The key row carries the same id_column / target_columns the parsed table would.
        check_submission_header(read_header(stored.path), key)  # type: ignore[arg-type]
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
    if user.is_organiser:
        return submission
    on_team = session.scalar(
        select(TeamMember.id).where(
            TeamMember.team_id == submission.team_id, TeamMember.user_id == user.id
        )
    )
    if on_team is None:
        raise NotFound(f"no submission {submission_id}")
    return submission


def team_submissions(session: Session, *, competition: Competition, user: User) -> list[Submission]:
    query = select(Submission).where(Submission.competition_id == competition.id)
    if not user.is_organiser:
        team_ids = select(TeamMember.team_id).where(
            TeamMember.competition_id == competition.id, TeamMember.user_id == user.id
        )
        query = query.where(Submission.team_id.in_(team_ids))
    return list(session.scalars(query.order_by(Submission.created_at.desc(), Submission.id.desc())))


def board_score(session: Session, submission: Submission, competition: Competition) -> Score | None:
    key = competition.board_key
    if key is None:
        return None
    return session.scalar(
        select(Score).where(Score.submission_id == submission.id, Score.answer_key_id == key.id)
    )


def view(
    session: Session, *, submission: Submission, competition: Competition, user: User
) -> SubmissionPublic:
    """The view of a submission this user is entitled to: host, revealed, or public."""
    score = board_score(session, submission, competition)
    base = dict(
        id=submission.id,
        status=submission.status,
        public_score=score.public_score if score else None,
        error=submission.error,
        created_at=submission.created_at,
        description=submission.description,
        selected=submission.selected,
    )
    private = score.private_score if score else None
    if user.is_organiser:
        return SubmissionHost(
            **base,
            private_score=private,
            team=submission.team.name,
            user=submission.user.name,
            score=score.score if score else None,
            host_error=submission.host_error,
            details=score.details if score else None,
            filename=submission.filename,
            size_bytes=submission.size_bytes,
            started_at=submission.started_at,
            finished_at=submission.finished_at,
        )
    if competition.is_past_deadline(datetime.now(UTC)):
        return SubmissionRevealed(**base, private_score=private)
    return SubmissionPublic(**base)
