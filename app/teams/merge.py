"""Accepting an invitation: the invitee's team merges into the inviting team, under Kaggle's rules.

Checked when the invitee accepts, each refusal a 409 with its reason: before the merge deadline
and the deadline; neither team banned; the invitee leads the team they bring; the merged team fits
``max_team_size``; and the two teams' non-refunded submissions together are no more than one team
could have made by now (``daily_submission_limit`` for every day since ``start``'s UTC date,
today included, and at most ``total_submission_limit``).

The inviting team survives with its name and leader. The absorbed team's members, submissions
and notices move to it, its invitations are cancelled, and the team row is removed. Both teams'
final selections are kept when together they fit ``final_selection_limit``; otherwise all of them
are cleared, for the merged team to choose again. Either way the merged team gets a notice (on its
team view, and so in the accept response) and the audit log an entry.
"""

from datetime import UTC, datetime

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.audit.service import record
from app.auth.hosts import FormerHostRefused, team_has_host
from app.auth.service import require_may_take_part
from app.db import lock_standings
from app.errors import Conflict
from app.ledger.facts import TEAM_MERGED, fact
from app.models import (
    Competition,
    InvitationStatus,
    Submission,
    Team,
    TeamInvitation,
    TeamMember,
    TeamNotice,
    User,
)
from app.teams.notices import notify
from app.teams.service import (
    check_merge_window,
    check_not_host,
    check_pending,
    find_team,
    leader_id,
    lock_invitation,
    lock_teams,
    member_count,
    own_invitation,
)


def merge_allowance(competition: Competition, now: datetime) -> int:
    """How many submissions one team could have made by ``now`` (Kaggle's merge rule)."""
    days = (now.astimezone(UTC).date() - competition.start.astimezone(UTC).date()).days + 1
    allowance = competition.daily_submission_limit * max(days, 0)
    if competition.total_submission_limit is not None:
        allowance = min(allowance, competition.total_submission_limit)
    return allowance


def accept(session: Session, *, invitation_id: int, user: User) -> Team:
    """Accept an invitation addressed to ``user``; returns the team they are now on."""
    invitation = own_invitation(session, invitation_id=invitation_id, user=user)
    check_pending(invitation)
    require_may_take_part(user)  # joining a team is joining: a verified address first
    # One accept at a time per invitee: two accepted invitations would otherwise each add the
    # invitee and cancel the other's invitation, a deadlock on PostgreSQL. NO KEY UPDATE, so rows
    # that merely reference the user (submissions, tokens) are not held up.
    session.execute(select(User.id).where(User.id == user.id).with_for_update(key_share=True))
    competition = session.get_one(Competition, invitation.competition_id)
    check_not_host(session, competition, user)
    if team_has_host(session, competition, invitation.team_id):
        raise FormerHostRefused(
            "that team has a host or former host of this competition: it cannot grow"
        )
    survivor = session.get_one(Team, invitation.team_id)
    absorbed = find_team(session, competition=competition, user=user)
    # The standings lock before the teams' (the merge rewrites both teams' standings at commit
    # and deletes the absorbed team): the order every standings writer takes them in.
    lock_standings(session, competition.id)
    lock_teams(session, [survivor] if absorbed is None else [survivor, absorbed])
    # The locks may have waited for another merge: the invitee's team must still be the same.
    now_on = find_team(session, competition=competition, user=user)
    if (now_on.id if now_on else None) != (absorbed.id if absorbed else None):
        raise Conflict("your team changed while accepting; please try again")
    lock_invitation(session, invitation)
    check_pending(invitation)

    now = datetime.now(UTC)
    _check_rules(
        session, competition=competition, survivor=survivor, absorbed=absorbed, user=user, now=now
    )
    if absorbed is None:
        _add_member(session, competition=competition, team=survivor, user=user)
        moved = [user.id]
    else:
        moved = list(
            session.scalars(select(TeamMember.user_id).where(TeamMember.team_id == absorbed.id))
        )
        _merge_selections(
            session, competition=competition, survivor=survivor, absorbed=absorbed, user=user
        )
        _absorb(session, survivor=survivor, absorbed=absorbed, now=now)
    invitation.status = InvitationStatus.accepted
    invitation.responded_at = now
    # Invitations still addressed to the people who just moved were about the teams they left.
    session.execute(
        update(TeamInvitation)
        .where(
            TeamInvitation.competition_id == competition.id,
            TeamInvitation.invitee_id.in_(moved),
            TeamInvitation.status == InvitationStatus.pending,
            TeamInvitation.id != invitation.id,
        )
        .values(status=InvitationStatus.cancelled, responded_at=now)
    )
    if survivor.leader_id is None:
        survivor.leader_id = leader_id(session, survivor)
    session.flush()
    session.expire(survivor)
    return survivor


def _check_rules(
    session: Session,
    *,
    competition: Competition,
    survivor: Team,
    absorbed: Team | None,
    user: User,
    now: datetime,
) -> None:
    if absorbed is not None and absorbed.id == survivor.id:
        raise Conflict(f"you are already on team '{survivor.name}'")
    check_merge_window(competition, now)
    if survivor.banned_at is not None or (absorbed is not None and absorbed.banned_at is not None):
        raise Conflict("a banned team cannot merge")
    if absorbed is not None and leader_id(session, absorbed) != user.id:
        raise Conflict(f"only the leader of team '{absorbed.name}' can merge it into another team")

    members = member_count(session, survivor)
    joining = member_count(session, absorbed) if absorbed is not None else 1
    if members + joining > competition.max_team_size:
        raise Conflict(
            f"teams are limited to {competition.max_team_size} members: '{survivor.name}' has "
            f"{members} and you would bring {joining}",
            extra={"max_team_size": competition.max_team_size},
        )

    if absorbed is None:
        return  # someone without a team has no submissions to add
    used = (
        session.scalar(
            select(func.count(Submission.id)).where(
                Submission.team_id.in_([survivor.id, absorbed.id]),
                Submission.refunded.is_(False),
            )
        )
        or 0
    )
    allowance = merge_allowance(competition, now)
    if used > allowance:
        raise Conflict(
            f"the two teams have made {used} submissions together, more than one team could "
            f"have made by now ({allowance}): teams may merge only while their combined count "
            f"is within one team's quota",
            extra={"combined_submissions": used, "allowed_submissions": allowance},
        )


def _add_member(session: Session, *, competition: Competition, team: Team, user: User) -> None:
    try:
        with session.begin_nested():
            session.add(TeamMember(team_id=team.id, competition_id=competition.id, user_id=user.id))
            session.flush()
    except IntegrityError:
        # UNIQUE(competition_id, user_id): a concurrent join put the user on a team first.
        raise Conflict("you are already on a team in this competition") from None


def _merge_selections(
    session: Session, *, competition: Competition, survivor: Team, absorbed: Team, user: User
) -> None:
    """Keep both teams' selections when they fit the limit together, else clear them all; say
    which on the merged team's notices and in the audit log."""
    rows = session.execute(
        select(Submission.id, Submission.team_id)
        .where(Submission.team_id.in_([survivor.id, absorbed.id]), Submission.selected.is_(True))
        .order_by(Submission.id)
    ).all()
    chosen = {
        team.name: [id_ for id_, team_id in rows if team_id == team.id]
        for team in (survivor, absorbed)
    }
    ids = [id_ for id_, _team_id in rows]
    limit = competition.final_selection_limit
    kept = len(ids) <= limit
    merged = f"Team '{absorbed.name}' merged into '{survivor.name}'"
    if ids and kept:
        notify(
            session,
            team_id=survivor.id,
            kind="selections_kept",
            message=f"{merged}: both teams' final selections are kept, {len(ids)} of the "
            f"limit of {limit} (submission(s) {_listed(ids)}).",
        )
    elif ids:
        session.execute(update(Submission).where(Submission.id.in_(ids)).values(selected=False))
        notify(
            session,
            team_id=survivor.id,
            kind="selections_cleared",
            message=f"{merged}: together the teams had {len(ids)} final selections, more than "
            f"the limit of {limit}, so all were cleared (submission(s) {_listed(ids)}). Select "
            f"up to {limit} again before the deadline.",
        )
    record(
        session,
        competition=competition,
        actor=user,
        action="team_merge",
        target=survivor.name,
        before={"teams": [survivor.name, absorbed.name], "selected": chosen},
        after={
            "team": survivor.name,
            "selected": ids if kept else [],
            "selections": "kept" if kept else "cleared",
        },
    )
    fact(
        session,
        competition_id=competition.id,
        kind=TEAM_MERGED,
        team=survivor.id,
        team_name=survivor.name,
        absorbed=absorbed.id,
        absorbed_name=absorbed.name,
        unselected=[] if kept else ids,
    )


def _listed(ids: list[int]) -> str:
    return ", ".join(f"#{id_}" for id_ in ids)


def _absorb(session: Session, *, survivor: Team, absorbed: Team, now: datetime) -> None:
    # Order matters: submissions, members, notices and invitations cascade with the team row, so
    # they move before it is deleted.
    session.execute(
        update(Submission).where(Submission.team_id == absorbed.id).values(team_id=survivor.id)
    )
    session.execute(
        update(TeamNotice).where(TeamNotice.team_id == absorbed.id).values(team_id=survivor.id)
    )
    session.execute(
        update(TeamMember).where(TeamMember.team_id == absorbed.id).values(team_id=survivor.id)
    )
    session.execute(
        update(TeamInvitation)
        .where(
            TeamInvitation.team_id == absorbed.id,
            TeamInvitation.status == InvitationStatus.pending,
        )
        .values(status=InvitationStatus.cancelled, responded_at=now)
    )
    # The invitee still sees what they were sent, now under the merged team's name.
    session.execute(
        update(TeamInvitation)
        .where(TeamInvitation.team_id == absorbed.id)
        .values(team_id=survivor.id)
    )
    session.execute(delete(Team).where(Team.id == absorbed.id))
