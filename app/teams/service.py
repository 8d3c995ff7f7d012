"""Teams: every participant competes as a team, a one-person team until they merge.

Membership is what decides a user's team: ``UNIQUE(competition_id, user_id)`` on ``team_members``
keeps a user on at most one team per competition, and :func:`team_for` turns the constraint's
error, when two first requests race, into reading the team the other request made.
"""

import functools
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, Integer, Select, bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload

from app.auth.hosts import check_not_former_host, is_host, was_host
from app.auth.service import require_may_take_part
from app.entry.gate import OPEN, registration_of
from app.errors import Conflict, Forbidden, NotFound
from app.events.stream import TEAM_INVITED, emit
from app.models import (
    Competition,
    CompetitionHost,
    FormerHost,
    InvitationStatus,
    RegistrationStatus,
    Team,
    TeamInvitation,
    TeamMember,
    User,
)
from app.pagination import Page, Paged, paginate
from app.teams import notices
from app.teams.schemas import InvitationPublic, InvitationSent, TeamPublic

# Each retry follows a lost race for the user's membership or for a team name.
_CREATE_ATTEMPTS = 5


def find_team(
    session: Session, *, competition: Competition, user: User, lock: bool = False
) -> Team | None:
    return session.scalar(
        _team_of_member(lock), {"competition_id": competition.id, "user_id": user.id}
    )


@functools.cache
def _team_of_member(lock: bool) -> Select[tuple[Team]]:
    # Built once per shape (parameters ``competition_id``, ``user_id``): every upload runs it.
    query = (
        select(Team)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .where(
            TeamMember.competition_id == bindparam("competition_id", type_=Integer),
            TeamMember.user_id == bindparam("user_id", type_=Integer),
        )
    )
    if lock:
        # FOR NO KEY UPDATE OF teams (SQLite has no row locks: BEGIN IMMEDIATE serialises its
        # writers), re-read so a ban committed while we waited is seen. NO KEY UPDATE: uploads
        # and merges of the team still wait on each other, while a scorer rewriting the team's
        # standings (whose rows reference the team: a KEY SHARE lock) is not held up (see
        # app.db.lock_standings for the deadlock the stronger lock made).
        query = query.with_for_update(of=Team, key_share=True).execution_options(
            populate_existing=True
        )
    return query


def team_for(session: Session, *, competition: Competition, user: User) -> Team:
    """The user's team in this competition, made as a one-person team led by them on first need."""
    return _team_for(session, competition=competition, user=user)[0]


def locked_team_for(session: Session, *, competition: Competition, user: User) -> Team:
    """:func:`team_for`, row-locked for the rest of the transaction (quota checks, inserts).

    One statement when the team exists (an upload's path counts them): found and locked at
    once. A merge that absorbs it deletes the team row under its own lock, so the locking read
    that waited on it finds no row, and the next finds the user's new team: nothing is written
    against a team row that no longer exists.
    """
    for _attempt in range(_CREATE_ATTEMPTS + 1):
        team = find_team(session, competition=competition, user=user, lock=True)
        if team is not None:
            return team
        team_for(session, competition=competition, user=user)
    raise Conflict("your team could not be found because of concurrent changes; please retry")


def _team_for(session: Session, *, competition: Competition, user: User) -> tuple[Team, bool]:
    for _attempt in range(_CREATE_ATTEMPTS):
        team = find_team(session, competition=competition, user=user)
        if team is not None:
            return team, False
        try:
            # A savepoint, so losing a race undoes only this attempt, not the caller's transaction.
            with session.begin_nested():
                team = Team(
                    competition_id=competition.id,
                    name=_free_name(session, competition=competition, base=user.name),
                    leader_id=user.id,
                )
                session.add(team)
                session.flush()
                session.add(
                    TeamMember(team_id=team.id, competition_id=competition.id, user_id=user.id)
                )
                session.flush()
            return team, True
        except IntegrityError:
            # A concurrent request made this user's team (or took the name) and committed first;
            # PostgreSQL's READ COMMITTED lets the next statement see its rows.
            continue
    raise Conflict("your team could not be created because of concurrent changes; please retry")


def _free_name(session: Session, *, competition: Competition, base: str) -> str:
    taken = set(
        session.scalars(
            select(Team.name).where(
                Team.competition_id == competition.id,
                Team.name.startswith(base, autoescape=True),
            )
        )
    )
    name, suffix = base, 2
    while name in taken:
        name, suffix = f"{base}-{suffix}", suffix + 1
    return name


def join(session: Session, *, competition: Competition, user: User) -> tuple[Team, bool]:
    """Join as a one-person team; joining again returns the team the user is already on."""
    require_may_take_part(user)
    check_not_host(session, competition, user)
    return _team_for(session, competition=competition, user=user)


def refuse_unapproved(session: Session, competition: Competition, invitee: User) -> None:
    """Where the hosts decide who takes part (approval, invite), a team takes in only those they
    approved: an invitation is no way around the registration."""
    if competition.registration == OPEN:
        return
    registration = registration_of(session, competition=competition, user=invitee)
    if registration is None or registration.status != RegistrationStatus.approved:
        raise Conflict(
            f"'{invitee.name}' does not take part in this competition yet: they join first "
            "(the hosts approve or invite each participant)"
        )


def check_not_host(session: Session, competition: Competition, user: User) -> None:
    """Hosts see the private scores: they never join, invite or merge in their competition,
    and neither do its former hosts."""
    if is_host(session, competition, user):
        raise Forbidden(
            f"you host '{competition.slug}': hosts do not compete in their own competition "
            "(baseline submissions aside)"
        )
    check_not_former_host(session, competition, user)


def my_team(session: Session, *, competition: Competition, user: User) -> Team:
    team = find_team(session, competition=competition, user=user)
    if team is None:
        raise NotFound(f"you have not joined '{competition.slug}'")
    return team


def leader_id(session: Session, team: Team) -> int | None:
    """The team's leader; teams made before leaders existed are led by their first member."""
    if team.leader_id is not None:
        return team.leader_id
    return session.scalar(
        select(TeamMember.user_id)
        .where(TeamMember.team_id == team.id)
        .order_by(TeamMember.joined_at, TeamMember.id)
        .limit(1)
    )


def member_count(session: Session, team: Team) -> int:
    return (
        session.scalar(select(func.count(TeamMember.id)).where(TeamMember.team_id == team.id)) or 0
    )


def lock_teams(session: Session, teams: list[Team]) -> None:
    """Row-lock teams in id order (a fixed order, so two merges cannot deadlock); SQLite's
    BEGIN IMMEDIATE already serialises every writer. NO KEY UPDATE, as an upload's lock: rows
    that merely reference a team (standings, submissions) are not held up."""
    ids = sorted({team.id for team in teams})
    session.scalars(
        select(Team)
        .where(Team.id.in_(ids))
        .order_by(Team.id)
        .with_for_update(key_share=True)
        .execution_options(populate_existing=True)
    ).all()


def team_view(session: Session, *, team: Team) -> TeamPublic:
    members = session.execute(
        select(User.id, User.name)
        .join(TeamMember, TeamMember.user_id == User.id)
        .where(TeamMember.team_id == team.id)
        .order_by(TeamMember.joined_at, TeamMember.id)
    ).all()
    leader = leader_id(session, team)
    pending = session.execute(
        select(TeamInvitation.id, User.name, TeamInvitation.created_at)
        .join(User, User.id == TeamInvitation.invitee_id)
        .where(
            TeamInvitation.team_id == team.id,
            TeamInvitation.status == InvitationStatus.pending,
        )
        .order_by(TeamInvitation.created_at, TeamInvitation.id)
    ).all()
    return TeamPublic(
        id=team.id,
        name=team.name,
        leader=next((name for user_id, name in members if user_id == leader), None),
        members=[name for _user_id, name in members],
        pending_invitations=[
            InvitationSent(id=id_, user=name, created_at=created_at)
            for id_, name, created_at in pending
        ],
        notices=notices.recent(session, team_id=team.id),
    )


def check_merge_window(competition: Competition, now: datetime) -> None:
    if competition.team_merge_deadline is not None and now >= competition.team_merge_deadline:
        raise Conflict(
            f"the team merge deadline ({competition.team_merge_deadline.isoformat()}) has passed"
        )
    if competition.is_past_deadline(now):
        raise Conflict("the competition has ended: teams can no longer change")


def invite(
    session: Session, *, competition: Competition, inviter: User, invitee_name: str
) -> TeamInvitation:
    """Invite a participant, as the team's leader, to join the team (merging theirs into it).

    Every pending invitation holds a seat: members + pending invitations + the invitee's own
    team may not exceed ``max_team_size``. Accepting checks the real member count again.
    """
    check_not_host(session, competition, inviter)
    team = find_team(session, competition=competition, user=inviter)
    if team is None or leader_id(session, team) != inviter.id:
        raise Forbidden("only a team's leader can invite")
    lock_teams(session, [team])
    check_merge_window(competition, datetime.now(UTC))
    if team.banned_at is not None:
        raise Conflict("a banned team cannot invite")
    invitee = session.scalar(select(User).where(User.name == invitee_name))
    if invitee is None:
        raise NotFound(f"no user named '{invitee_name}'")
    if is_host(session, competition, invitee):
        raise Conflict(f"'{invitee.name}' hosts this competition: hosts do not compete")
    if was_host(session, competition, invitee):
        raise Conflict(f"'{invitee.name}' hosted this competition: former hosts do not compete")
    refuse_unapproved(session, competition, invitee)
    their_team = find_team(session, competition=competition, user=invitee)
    if their_team is not None and their_team.id == team.id:
        raise Conflict(f"'{invitee.name}' is already on your team")
    if their_team is not None and leader_id(session, their_team) != invitee.id:
        raise Conflict(
            f"'{invitee.name}' is on team '{their_team.name}'; invite its leader to merge teams"
        )
    pending = list(
        session.scalars(
            select(TeamInvitation.invitee_id).where(
                TeamInvitation.team_id == team.id,
                TeamInvitation.status == InvitationStatus.pending,
            )
        )
    )
    if invitee.id in pending:
        raise Conflict(f"'{invitee.name}' already has a pending invitation from your team")
    members = member_count(session, team)
    joining = member_count(session, their_team) if their_team is not None else 1
    if members + len(pending) + joining > competition.max_team_size:
        raise Conflict(
            f"teams are limited to {competition.max_team_size} members: yours has {members} "
            f"and {len(pending)} pending invitation(s), and '{invitee.name}' would bring {joining}",
            extra={"max_team_size": competition.max_team_size},
        )
    invitation = TeamInvitation(
        competition_id=competition.id, team_id=team.id, inviter_id=inviter.id, invitee_id=invitee.id
    )
    session.add(invitation)
    session.flush()
    emit(
        session,
        TEAM_INVITED,
        competition_id=competition.id,
        user_id=invitee.id,
        team_id=team.id,
        payload={"team": team.name, "inviter": inviter.name},
    )
    return invitation


def invitations_for(
    session: Session, *, competition: Competition, user: User, page: Page
) -> Paged[TeamInvitation]:
    """One page of the invitations sent to this user, newest first."""
    query = (
        select(TeamInvitation)
        .where(
            TeamInvitation.competition_id == competition.id,
            TeamInvitation.invitee_id == user.id,
        )
        .order_by(TeamInvitation.created_at.desc(), TeamInvitation.id.desc())
    )
    return paginate(session, query, page, options=[joinedload(TeamInvitation.team)])


def own_invitation(session: Session, *, invitation_id: int, user: User) -> TeamInvitation:
    """An invitation addressed to this user; anyone else's is reported as not existing."""
    invitation = session.get(TeamInvitation, invitation_id)
    if invitation is None or invitation.invitee_id != user.id:
        raise NotFound(f"no invitation {invitation_id}")
    return invitation


def lock_invitation(session: Session, invitation: TeamInvitation) -> None:
    """Row-lock and re-read an invitation. Teams are always locked before invitations."""
    session.scalars(
        select(TeamInvitation)
        .where(TeamInvitation.id == invitation.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).all()


def check_pending(invitation: TeamInvitation) -> None:
    if invitation.status != InvitationStatus.pending:
        raise Conflict(f"this invitation is no longer pending: it was {invitation.status.value}")


def decline(session: Session, *, invitation_id: int, user: User) -> TeamInvitation:
    invitation = own_invitation(session, invitation_id=invitation_id, user=user)
    lock_invitation(session, invitation)
    check_pending(invitation)
    invitation.status = InvitationStatus.declined
    invitation.responded_at = datetime.now(UTC)
    session.flush()
    return invitation


def cancel(
    session: Session, *, competition: Competition, invitation_id: int, user: User
) -> TeamInvitation:
    """Withdraw a pending invitation (the team's leader only), which frees its seat."""
    team = my_team(session, competition=competition, user=user)
    invitation = session.get(TeamInvitation, invitation_id)
    if invitation is None or invitation.team_id != team.id:
        raise NotFound(f"no invitation {invitation_id}")
    if leader_id(session, team) != user.id:
        raise Forbidden("only the team's leader can withdraw its invitations")
    lock_teams(session, [team])
    lock_invitation(session, invitation)
    check_pending(invitation)
    invitation.status = InvitationStatus.cancelled
    invitation.responded_at = datetime.now(UTC)
    session.flush()
    return invitation


def invitation_view(session: Session, *, invitation: TeamInvitation) -> InvitationPublic:
    competition = session.get_one(Competition, invitation.competition_id)
    return invitation_views(session, invitations=[invitation], competition=competition)[0]


def invitation_views(
    session: Session, *, invitations: list[TeamInvitation], competition: Competition
) -> list[InvitationPublic]:
    """Invitations of one competition as their people see them; every name read in one query."""
    people = {i.inviter_id for i in invitations} | {i.invitee_id for i in invitations}
    names: dict[int, str] = {}
    if people:
        rows = session.execute(select(User.id, User.name).where(User.id.in_(people)))
        names = {user_id: name for user_id, name in rows}
    return [
        InvitationPublic(
            id=invitation.id,
            competition=competition.slug,
            team=invitation.team.name,
            inviter=names[invitation.inviter_id],
            invitee=names[invitation.invitee_id],
            status=invitation.status,
            created_at=invitation.created_at,
            responded_at=invitation.responded_at,
        )
        for invitation in invitations
    ]


def competing() -> ColumnElement[bool]:
    """A team that competes: not the team a host's baselines are filed under (hosts, current or
    former, never compete, so a team a host leads holds only baselines). A baseline is not a
    team: it is not counted, listed or banned as one."""
    hosts = select(CompetitionHost.user_id).where(
        CompetitionHost.competition_id == Team.competition_id
    )
    former = select(FormerHost.user_id).where(FormerHost.competition_id == Team.competition_id)
    return Team.leader_id.is_(None) | ~Team.leader_id.in_(hosts.union(former))


def team_counts(session: Session, *, competition_ids: list[int]) -> dict[int, int]:
    """How many teams compete in each competition (for the competitions list)."""
    if not competition_ids:
        return {}
    rows = session.execute(
        select(Team.competition_id, func.count(Team.id))
        .where(Team.competition_id.in_(competition_ids), competing())
        .group_by(Team.competition_id)
    )
    return {competition_id: count for competition_id, count in rows}


def list_teams(session: Session, *, competition: Competition) -> list[tuple[Team, int]]:
    """Every competing team of a competition with its member count, by name (for hosts)."""
    rows = session.execute(
        select(Team, func.count(TeamMember.id))
        .outerjoin(TeamMember, TeamMember.team_id == Team.id)
        .where(Team.competition_id == competition.id, competing())
        .group_by(Team.id)
        .order_by(Team.name)
    )
    return [(team, count) for team, count in rows]
