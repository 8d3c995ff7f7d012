"""Hosts' moderation of the boards: hiding a submission, banning a team. Nothing is deleted
and every action is audited."""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.errors import NotFound
from app.ledger.facts import HIDDEN, TEAM_BANNED, TEAM_UNBANNED, UNHIDDEN, fact
from app.models import Competition, Submission, Team, User


def set_hidden(
    session: Session, *, submission: Submission, hidden: bool, reason: str, actor: User
) -> Submission:
    before = submission.hidden
    submission.hidden = hidden
    session.flush()
    record(
        session,
        competition=submission.competition,
        actor=actor,
        action="hide_submission" if hidden else "unhide_submission",
        target=f"submission {submission.id} of team {submission.team.name}",
        before={"hidden": before},
        after={"hidden": hidden, "reason": reason},
    )
    fact(
        session,
        competition_id=submission.competition_id,
        kind=HIDDEN if hidden else UNHIDDEN,
        submission=submission.id,
        team=submission.team_id,
        reason=reason[:500],
    )
    return submission


def set_banned(
    session: Session,
    *,
    competition: Competition,
    team_name: str,
    banned: bool,
    reason: str,
    actor: User,
) -> Team:
    team = session.scalar(
        select(Team).where(Team.competition_id == competition.id, Team.name == team_name)
    )
    if team is None:
        raise NotFound(f"no team '{team_name}' in this competition")
    before = team.banned_at
    if banned and team.banned_at is None:
        team.banned_at = datetime.now(UTC)
    elif not banned:
        team.banned_at = None
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="ban_team" if banned else "unban_team",
        target=f"team {team.name}",
        before={"banned_at": before.isoformat() if before else None},
        after={
            "banned_at": team.banned_at.isoformat() if team.banned_at else None,
            "reason": reason,
        },
    )
    fact(
        session,
        competition_id=competition.id,
        kind=TEAM_BANNED if banned else TEAM_UNBANNED,
        team=team.id,
        team_name=team.name,
        reason=reason[:500],
    )
    return team
