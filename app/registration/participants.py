"""The hosts' list of everyone who asked to take part: registrations, and the teams' members
from before registrations (an open competition's participants who never needed one), each with
their status, team, address (hosts only), when they joined and how many submissions they made.
A page costs a fixed number of queries."""

import csv
import io
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.leaderboard.spreadsheet import safe_row
from app.models import Competition, Registration, Submission, Team, TeamMember, User
from app.pagination import Page, Paged


@dataclass
class Participant:
    user_id: int
    name: str
    email: str | None
    status: str
    team: str | None
    joined_at: datetime
    message: str
    rules_version: int | None
    rules_accepted_at: datetime | None
    decided_at: datetime | None
    submissions: int = 0


def participants(
    session: Session, *, competition: Competition, status: str | None = None
) -> list[Participant]:
    """Everyone, oldest first (four queries whatever their number)."""
    teams = {
        user_id: (team_name, banned)
        for user_id, team_name, banned in session.execute(
            select(TeamMember.user_id, Team.name, Team.banned_at.is_not(None))
            .join(Team, Team.id == TeamMember.team_id)
            .where(TeamMember.competition_id == competition.id)
        )
    }
    found: dict[int, Participant] = {}
    for registration, user in session.execute(
        select(Registration, User)
        .join(User, User.id == Registration.user_id)
        .where(Registration.competition_id == competition.id)
    ):
        team = teams.get(user.id)
        found[user.id] = Participant(
            user_id=user.id,
            name=user.name,
            email=user.email,
            status="banned" if team and team[1] else registration.status.value,
            team=team[0] if team else None,
            joined_at=registration.requested_at,
            message=registration.message,
            rules_version=registration.rules_version,
            rules_accepted_at=registration.rules_accepted_at,
            decided_at=registration.decided_at,
        )
    unregistered = [uid for uid in teams if uid not in found]
    if unregistered:
        for user, joined_at in session.execute(
            select(User, TeamMember.joined_at)
            .join(TeamMember, TeamMember.user_id == User.id)
            .where(TeamMember.competition_id == competition.id, User.id.in_(unregistered))
        ):
            team = teams[user.id]
            found[user.id] = Participant(
                user_id=user.id,
                name=user.name,
                email=user.email,
                status="banned" if team[1] else "approved",
                team=team[0],
                joined_at=joined_at,
                message="",
                rules_version=None,
                rules_accepted_at=None,
                decided_at=None,
            )
    counts = dict(
        session.execute(
            select(Submission.user_id, func.count())
            .where(Submission.competition_id == competition.id, Submission.baseline.is_(False))
            .group_by(Submission.user_id)
        ).all()
    )
    rows = sorted(found.values(), key=lambda p: (p.joined_at, p.name))
    for row in rows:
        row.submissions = int(counts.get(row.user_id, 0))
    if status is not None:
        rows = [row for row in rows if row.status == status]
    return rows


def participants_page(
    session: Session, *, competition: Competition, page: Page, status: str | None = None
) -> Paged[Participant]:
    rows = participants(session, competition=competition, status=status)
    return Paged(items=rows[page.offset : page.offset + page.limit], total=len(rows), page=page)


CSV_HEADER = [
    "name",
    "email",
    "status",
    "team",
    "joined_at",
    "submissions",
    "rules_version",
    "rules_accepted_at",
    "message",
]


def participants_csv(session: Session, *, competition: Competition) -> str:
    """Every participant as CSV, each text cell neutralised for spreadsheets (a name or a
    message starting with ``=`` is not run as a formula)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for p in participants(session, competition=competition):
        writer.writerow(
            safe_row(
                [
                    p.name,
                    p.email or "",
                    p.status,
                    p.team or "",
                    p.joined_at.isoformat(),
                    p.submissions,
                    "" if p.rules_version is None else p.rules_version,
                    p.rules_accepted_at.isoformat() if p.rules_accepted_at else "",
                    p.message,
                ]
            )
        )
    return out.getvalue()
