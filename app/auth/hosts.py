"""Who may run a competition. Its hosts are its owner (the creator) and the co-hosts the owner
adds; a site admin acts as a host everywhere. Everything host-only in Podium asks
:func:`is_host`, and nothing else: the organiser role only means "may create competitions".

A host does not compete in their own competition (baseline submissions aside): they see the
private scores and the answer key. Nor does a co-host the owner removed: what they read stays
read, so they are remembered as a :class:`FormerHost` and :func:`check_not_former_host` refuses
them.
"""

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Integer, bindparam, exists, func, select
from sqlalchemy.orm import Session, joinedload

from app.audit.service import record
from app.errors import Conflict, Forbidden, NotFound
from app.models import (
    Competition,
    CompetitionHost,
    FormerHost,
    HostRole,
    Submission,
    TeamMember,
    User,
)

_CACHE = "podium.is_host"
_FORMER = "podium.was_host"


class FormerHostRefused(Forbidden):
    """A former host of this competition tried to compete in it."""

    code = "former_host"

    @classmethod
    def of(cls, competition: Competition) -> "FormerHostRefused":
        return cls(f"you hosted '{competition.slug}': a former host never competes in it")


def was_host(session: Session, competition: Competition, user: User) -> bool:
    """Whether ``user`` hosted ``competition`` once and was removed (a current host is
    :func:`is_host`)."""
    if user.id is None:
        return False
    return (
        session.scalar(
            select(
                exists().where(
                    FormerHost.competition_id == competition.id, FormerHost.user_id == user.id
                )
            )
        )
        is True
    )


def team_has_host(session: Session, competition: Competition, team_id: int) -> bool:
    """Whether a member of the team hosts or hosted ``competition`` (one who had a team before
    becoming a co-host keeps it)."""
    hosts_here = select(CompetitionHost.user_id).where(
        CompetitionHost.competition_id == competition.id
    )
    former_here = select(FormerHost.user_id).where(FormerHost.competition_id == competition.id)
    return (
        session.scalar(
            select(
                exists().where(
                    TeamMember.team_id == team_id,
                    TeamMember.user_id.in_(hosts_here.union(former_here)),
                )
            )
        )
        is True
    )


def check_not_former_host(session: Session, competition: Competition, user: User) -> None:
    """Refuse a removed co-host: they read the private board and every team's files."""
    if was_host(session, competition, user):
        raise FormerHostRefused.of(competition)


def asks_host_columns(user: User | None) -> bool:
    """Whether :func:`host_columns` has anything to ask of ``user`` (an admin hosts everything)."""
    return user is not None and user.id is not None and not user.is_admin


@functools.cache
def host_columns() -> tuple[ColumnElement[bool], ...]:
    """Whether the user in parameter ``host_user_id`` hosts and whether they once hosted the
    competition of the enclosing query, as two columns to select beside it
    (:func:`remember_host_columns` keeps them), so a request that loads a competition learns
    both without a query of its own. Built once: the enclosing statement can be too."""
    user_id = bindparam("host_user_id", type_=Integer)
    return (
        exists()
        .where(CompetitionHost.competition_id == Competition.id, CompetitionHost.user_id == user_id)
        .correlate(Competition),
        exists()
        .where(FormerHost.competition_id == Competition.id, FormerHost.user_id == user_id)
        .correlate(Competition),
    )


def remember_host_columns(
    session: Session, competition: Competition, user: User | None, values: Sequence[Any]
) -> None:
    """Keep what :func:`host_columns` selected for the rest of the session (one request)."""
    if not values or user is None:
        return
    host, former = values
    session.info.setdefault(_CACHE, {})[(competition.id, user.id)] = bool(host)
    session.info.setdefault(_FORMER, {})[(competition.id, user.id)] = bool(former)


def host_or_refuse_former(session: Session, competition: Competition, user: User) -> bool:
    """:func:`is_host`, after refusing a former host, in one query (every upload asks), or none
    when the competition was loaded with :func:`host_columns`."""
    if user.is_admin:
        return True
    if user.id is None:
        return False
    key = (competition.id, user.id)
    former_known: dict[tuple[int, int], bool] = session.info.get(_FORMER, {})
    if key in former_known and key in session.info.get(_CACHE, {}):
        host, former = session.info[_CACHE][key], former_known[key]
    else:
        host, former = session.execute(
            select(
                exists().where(
                    CompetitionHost.competition_id == competition.id,
                    CompetitionHost.user_id == user.id,
                ),
                exists().where(
                    FormerHost.competition_id == competition.id, FormerHost.user_id == user.id
                ),
            )
        ).one()
        session.info.setdefault(_CACHE, {})[key] = bool(host)
    if former and not host:
        raise FormerHostRefused.of(competition)
    return bool(host)


def is_host(session: Session, competition: Competition, user: User) -> bool:
    """Whether ``user`` may act as a host of ``competition``: an owner, co-host or site admin.

    Remembered for the session (one request), so a list of views costs one query; changing the
    hosts through this module forgets it.
    """
    if user.is_admin:
        return True
    if user.id is None:  # the anonymous visitor of the public pages
        return False
    cache: dict[tuple[int, int], bool] = session.info.setdefault(_CACHE, {})
    key = (competition.id, user.id)
    if key not in cache:
        cache[key] = (
            session.scalar(
                select(
                    exists().where(
                        CompetitionHost.competition_id == competition.id,
                        CompetitionHost.user_id == user.id,
                    )
                )
            )
            is True
        )
    return cache[key]


def is_owner(session: Session, competition: Competition, user: User) -> bool:
    return (
        session.scalar(
            select(CompetitionHost.id).where(
                CompetitionHost.competition_id == competition.id,
                CompetitionHost.user_id == user.id,
                CompetitionHost.role == HostRole.owner,
            )
        )
        is not None
    )


def require_host(session: Session, competition: Competition, user: User) -> None:
    if not is_host(session, competition, user):
        raise Forbidden(f"only the hosts of '{competition.slug}' may do this")


def may_change_hosts(session: Session, competition: Competition, user: User) -> bool:
    """Adding and removing co-hosts is the owner's (or a site admin's) alone."""
    return user.is_admin or is_owner(session, competition, user)


def require_owner(session: Session, competition: Competition, user: User) -> None:
    if not may_change_hosts(session, competition, user):
        raise Forbidden(f"only the owner of '{competition.slug}' may change its hosts")


def _forget(session: Session) -> None:
    session.info.pop(_CACHE, None)
    session.info.pop(_FORMER, None)


def make_owner(session: Session, *, competition: Competition, user: User) -> None:
    session.add(
        CompetitionHost(competition_id=competition.id, user_id=user.id, role=HostRole.owner)
    )
    session.flush()
    _forget(session)


def hosts(session: Session, *, competition: Competition) -> list[CompetitionHost]:
    return list(
        session.scalars(
            select(CompetitionHost)
            .options(joinedload(CompetitionHost.user))
            .where(CompetitionHost.competition_id == competition.id)
            .order_by(CompetitionHost.role != HostRole.owner, CompetitionHost.id)
        )
    )


def _has_competed(session: Session, competition: Competition, user: User) -> bool:
    """On a team here that made a ranked (non-baseline) submission or has other members."""
    team_id = session.scalar(
        select(TeamMember.team_id).where(
            TeamMember.competition_id == competition.id, TeamMember.user_id == user.id
        )
    )
    if team_id is None:
        return False
    members = session.scalar(select(func.count(TeamMember.id)).where(TeamMember.team_id == team_id))
    ranked = session.scalar(
        select(exists().where(Submission.team_id == team_id, Submission.baseline.is_(False)))
    )
    return bool(ranked) or (members or 0) > 1


def add_host(
    session: Session, *, competition: Competition, name: str, actor: User
) -> CompetitionHost:
    """Make ``name`` a co-host. Someone who already competes here cannot become a host: they
    would see the private scores their team is ranked by."""
    require_owner(session, competition, actor)
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise NotFound(f"no user named '{name}'")
    existing = session.scalar(
        select(CompetitionHost).where(
            CompetitionHost.competition_id == competition.id, CompetitionHost.user_id == user.id
        )
    )
    if existing is not None:
        raise Conflict(f"'{name}' is already a host of '{competition.slug}'")
    if _has_competed(session, competition, user):
        raise Conflict(f"'{name}' competes in '{competition.slug}' and cannot become its host")
    host = CompetitionHost(competition_id=competition.id, user_id=user.id, role=HostRole.cohost)
    session.add(host)
    session.flush()
    _forget(session)
    record(
        session,
        competition=competition,
        actor=actor,
        action="host_add",
        target=f"user {user.name}",
        before=None,
        after={"user": user.name, "role": HostRole.cohost.value},
    )
    return host


def remove_host(session: Session, *, competition: Competition, name: str, actor: User) -> None:
    require_owner(session, competition, actor)
    host = session.scalar(
        select(CompetitionHost)
        .join(User, User.id == CompetitionHost.user_id)
        .where(CompetitionHost.competition_id == competition.id, User.name == name)
    )
    if host is None:
        raise NotFound(f"'{name}' is not a host of '{competition.slug}'")
    if host.role == HostRole.owner:
        raise Conflict(f"'{name}' owns '{competition.slug}' and cannot be removed")
    if not was_host(session, competition, host.user):
        session.add(FormerHost(competition_id=competition.id, user_id=host.user_id))
    session.delete(host)
    session.flush()
    _forget(session)
    record(
        session,
        competition=competition,
        actor=actor,
        action="host_remove",
        target=f"user {name}",
        before={"user": name, "role": HostRole.cohost.value},
        after=None,
    )
