"""Who may see a competition and whether it may still change: the one rule every loader of a
competition applies (the API's ``CompetitionDep``, the pages, the ``kaggle`` routes, the lists).

A draft is seen by its hosts only; to anyone else it does not exist (404, unlisted), so a host can
try the scoring before anyone sees it. An archived competition is read-only for everyone.
"""

import functools
from typing import Any

from sqlalchemy import ColumnElement, Select, String, bindparam, or_, select, true
from sqlalchemy.orm import Session, joinedload

from app.auth.hosts import asks_host_columns, host_columns, is_host, remember_host_columns
from app.errors import Conflict, NotFound
from app.models import Competition, CompetitionHost, Phase, User
from app.models.competition import ARCHIVED, DRAFT

# Methods that only read: anything else is a write, refused on an archived competition.
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Archived(Conflict):
    code = "archived"


def is_visible(session: Session, competition: Competition, viewer: User | None) -> bool:
    if competition.status != DRAFT:
        return True
    return viewer is not None and is_host(session, competition, viewer)


def visible_to(viewer: User | None) -> ColumnElement[bool]:
    """The same rule as :func:`is_visible`, as a filter for list queries."""
    if viewer is not None and viewer.is_admin:
        return true()
    published = Competition.status != DRAFT
    if viewer is None or viewer.id is None:
        return published
    hosted = select(CompetitionHost.competition_id).where(CompetitionHost.user_id == viewer.id)
    return or_(published, Competition.id.in_(hosted))


def visible_competitions(viewer: User | None) -> Select[tuple[Competition]]:
    return select(Competition).where(visible_to(viewer))


def require_writable(competition: Competition) -> None:
    if competition.status == ARCHIVED:
        raise Archived(f"'{competition.slug}' is archived: it is read-only")


@functools.cache
def _competition_by_slug(hosts: bool, with_phases: bool) -> Select[Any]:
    """Built once per shape (parameters ``slug`` and ``host_user_id``): building a statement
    this size cost a request about as much as running it."""
    query = select(Competition, *(host_columns() if hosts else ())).where(
        Competition.slug == bindparam("slug", type_=String)
    )
    if with_phases:
        query = query.options(joinedload(Competition.phases).joinedload(Phase.answer_keys))
    return query


def load_competition(
    session: Session,
    slug: str,
    viewer: User | None = None,
    *,
    writing: bool = False,
    with_phases: bool = False,
) -> Competition:
    """The competition ``slug`` as ``viewer`` may see it (None: an anonymous visitor), or 404;
    with ``writing``, 409 ``archived`` for an archived one.

    One statement: whether the viewer hosts it (or once did) is selected beside it and kept for
    the request, and ``with_phases`` loads its phases and their keys in the same statement (an
    upload reads all three: the upload path counts its statements).
    """
    hosts = asks_host_columns(viewer)
    params: dict[str, object] = {"slug": slug}
    if hosts:
        params["host_user_id"] = viewer.id  # type: ignore[union-attr]
    row = session.execute(_competition_by_slug(hosts, with_phases), params).unique().first()
    competition = row[0] if row is not None else None
    if competition is not None:
        remember_host_columns(session, competition, viewer, row[1:])  # type: ignore[index]
    if competition is None or not is_visible(session, competition, viewer):
        raise NotFound(f"no competition '{slug[:64]}'")
    if writing:
        require_writable(competition)
    return competition
