"""Download my data: everything Podium keeps about a user, as a participant may see it (a
submission's scores through the same visibility rules as its pages)."""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.models import Competition, OidcIdentity, Submission, Team, TeamMember, User, WebSession
from app.submissions import visibility

# A user's submissions come in pages of this many per competition read (bounded memory).
MAX_SUBMISSIONS_PER_COMPETITION = 10_000


def my_data(session: Session, *, user: User) -> dict[str, Any]:
    memberships = session.execute(
        select(TeamMember, Team, Competition)
        .join(Team, Team.id == TeamMember.team_id)
        .join(Competition, Competition.id == TeamMember.competition_id)
        .where(TeamMember.user_id == user.id)
        .order_by(TeamMember.joined_at)
    ).all()
    teams = []
    for member, team, competition in memberships:
        submissions = list(
            session.scalars(
                select(Submission)
                .options(selectinload(Submission.phase))
                .where(Submission.team_id == team.id, Submission.user_id == user.id)
                .order_by(Submission.id)
                .limit(MAX_SUBMISSIONS_PER_COMPETITION)
            )
        )
        views = visibility.views(
            session, submissions=submissions, competition=competition, user=user
        )
        teams.append(
            {
                "competition": competition.slug,
                "team": team.name,
                "joined_at": member.joined_at.isoformat(),
                "submissions": [view.model_dump(mode="json") for view in views],
            }
        )
    identities = session.scalars(select(OidcIdentity).where(OidcIdentity.user_id == user.id))
    sessions = session.scalars(select(WebSession).where(WebSession.user_id == user.id))
    return {
        "exported_at": datetime.now(UTC).isoformat(),
        "profile": {
            "name": user.name,
            "email": user.email,
            "email_verified_at": user.email_verified_at.isoformat()
            if user.email_verified_at
            else None,
            "pending_email": user.pending_email,
            "role": user.role.value,
            "created_at": user.created_at.isoformat(),
            "has_password": user.password_hash is not None,
        },
        "linked_sign_ins": [
            {"provider": i.provider, "issuer": i.issuer, "email": i.email} for i in identities
        ],
        "browser_sessions": [
            {"created_at": s.created_at.isoformat(), "last_seen_at": s.last_seen_at.isoformat()}
            for s in sessions
        ],
        "api_tokens": [
            {
                "prefix": t.prefix,
                "created_at": t.created_at.isoformat(),
                "revoked": t.revoked_at is not None,
            }
            for t in user.tokens
        ],
        "teams": teams,
    }
