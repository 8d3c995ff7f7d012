"""Keeping the materialised standings true.

A team's standing on each board is rewritten in the same transaction as whatever changed it: a
score written, a submission made, selected, hidden, moved to another team or relabelled late, a
team banned, a competition's selection limit or metric direction changed. Session events collect
what changed (ORM objects and ORM-enabled bulk ``update``/``delete``/``insert`` statements alike)
and the affected teams are recomputed in SQL just before the commit; anything that writes those
tables through the session is covered without knowing about boards. Writes that bypass the
session (raw SQL on a bare connection) must call :func:`rebuild` for the competition, or
:func:`recompute_teams` for the teams they touched (the scorer's settle does).

The rules, computed per (answer-key version, team) from the team's eligible submissions (scored
against that version, not hidden, not late, team not banned), by the counting rule of the key's
phase. Equal scores are broken by the tie-breaking columns (``Score.public_tie``), then by time:

- public: the best public score; with ``counts: last``, the latest scored submission's;
- private, ``chosen`` (Kaggle's rule): with submissions selected, the best private score among
  them; with none selected, the best among the team's best ``final_selection_limit`` by public
  score. ``best``: the best private score; ``last``: the latest scored submission's.
"""

import functools
import logging
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    BindParameter,
    Integer,
    and_,
    bindparam,
    case,
    delete,
    event,
    func,
    insert,
    inspect,
    literal,
    or_,
    select,
    union_all,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import ORMExecuteState, Session, SessionTransaction, UOWTransaction

from app.db import lock_standings
from app.evaluation.metric import metric_for
from app.models import (
    AnswerKey,
    BoardRevision,
    Competition,
    Phase,
    Score,
    Standing,
    Submission,
    SubmissionStatus,
    Team,
)
from app.models.phase import COUNTS_BEST, COUNTS_CHOSEN, COUNTS_LAST

log = logging.getLogger(__name__)

_PENDING = "standings_pending"
_WRITTEN = "standings_written"
_SUBMISSION_FIELDS = (
    "selected",
    "hidden",
    "late",
    "team_id",
    "baseline",
    "competition_id",
    "status",
)
_SCORE_FIELDS = ("public_score", "private_score", "submission_id", "answer_key_id")
_COMPETITION_FIELDS = ("custom_metric_direction", "metric_name")
_PHASE_FIELDS = ("final_selection_limit", "counts")
# A bulk statement touching more teams than this rebuilds their competitions in one go.
_MANY_TEAMS = 200
_IDS_PER_QUERY = 10_000


@dataclass
class _Pending:
    teams: set[tuple[int, int]] = field(default_factory=set)  # (competition_id, team_id)
    submissions: set[int] = field(default_factory=set)
    competitions: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.teams or self.submissions or self.competitions)


def _pending(session: Session) -> _Pending:
    return session.info.setdefault(_PENDING, _Pending())


# -- computing -------------------------------------------------------------------------------


@functools.cache
def _standing_rows(maximize: bool, by_team: bool):  # type: ignore[no-untyped-def]
    """SELECT of the standings rows of a competition, or of some of its teams (``by_team``).

    Built once per shape, with parameters ``competition_id``, ``selection_limit`` and
    ``team_ids``: building a statement this size costs more than running it for a few teams.
    """
    competition_id = bindparam("competition_id", type_=Integer)
    sign = literal(-1.0 if maximize else 1.0)

    def best_first(column):  # type: ignore[no-untyped-def]
        return column.desc() if maximize else column.asc()

    teams = [Submission.team_id.in_(bindparam("team_ids", expanding=True))] if by_team else []
    eligible = (
        select(
            Score.answer_key_id.label("key_id"),
            Submission.team_id.label("team_id"),
            Submission.id.label("submission_id"),
            Submission.created_at.label("created_at"),
            Submission.selected.label("selected"),
            Submission.baseline.label("baseline"),
            Score.public_score.label("public"),
            Score.private_score.label("private"),
            Score.public_tie.label("public_tie"),
            Score.private_tie.label("private_tie"),
            # The key's phase decides which submission stands and how many are auto-chosen.
            Phase.counts.label("counts"),
            Phase.final_selection_limit.label("selection_limit"),
            AnswerKey.phase_id.label("phase_id"),
        )
        .join(Score, Score.submission_id == Submission.id)
        .join(AnswerKey, AnswerKey.id == Score.answer_key_id)
        .join(Phase, Phase.id == AnswerKey.phase_id)
        .join(Team, Team.id == Submission.team_id)
        .where(
            Submission.competition_id == competition_id,
            Submission.hidden.is_(False),
            Submission.late.is_(False),
            Team.banned_at.is_(None),
            *teams,
        )
        .cte("eligible")
    )
    e = eligible.c
    # A team's submissions compete for one row; each baseline stands on its own row.
    entry = case((e.baseline.is_(True), e.submission_id), else_=literal(0))
    per_team = (e.key_id, e.team_id, entry)

    def newest_with(column):  # type: ignore[no-untyped-def]
        # The latest submission scored on that split ("last"): unscored rows after the rest.
        return func.row_number().over(
            partition_by=per_team,
            order_by=(
                case((column.is_(None), 1), else_=0),
                e.created_at.desc(),
                e.submission_id.desc(),
            ),
        )

    flagged = select(
        e,
        func.max(case((e.selected.is_(True), 1), else_=0))
        .over(partition_by=per_team)
        .label("any_selected"),
        func.row_number()
        .over(
            partition_by=per_team,
            order_by=(
                best_first(e.public).nulls_last(),
                e.public_tie,
                e.created_at,
                e.submission_id,
            ),
        )
        .label("by_public"),
        newest_with(e.public).label("newest_public"),
        newest_with(e.private).label("newest_private"),
    ).cte("flagged")
    p = flagged.c
    last = p.counts == literal(COUNTS_LAST)
    # The pool a private score is picked from. "chosen" (Kaggle's rule): the selected
    # submissions or, with none selected, the best selection_limit by public score; "best":
    # every scored submission; "last": the latest scored one.
    pool = (
        select(p)
        .where(
            p.private.is_not(None),
            or_(
                p.counts == literal(COUNTS_BEST),
                and_(last, p.newest_private == 1),
                and_(
                    p.counts == literal(COUNTS_CHOSEN),
                    or_(
                        and_(p.any_selected == 1, p.selected.is_(True)),
                        and_(
                            p.any_selected == 0,
                            p.public.is_not(None),
                            p.by_public <= p.selection_limit,
                        ),
                    ),
                ),
            ),
        )
        .cte("pool")
    )
    private = select(
        pool.c,
        func.row_number()
        .over(
            partition_by=(
                pool.c.key_id,
                pool.c.team_id,
                case((pool.c.baseline.is_(True), pool.c.submission_id), else_=literal(0)),
            ),
            order_by=(
                best_first(pool.c.private),
                pool.c.private_tie,
                pool.c.created_at,
                pool.c.submission_id,
            ),
        )
        .label("rn"),
    ).cte("by_private")
    q = private.c

    def history(team_id, phase_id):  # type: ignore[no-untyped-def]
        # The team's entries in the phase: its scored submissions (a failed upload is not an
        # entry), and when the latest of them was made. Both read scored submissions only, so an
        # upload changes no standing until it is scored: the upload path writes none. (A score
        # row is written before its submission is marked scored, in one transaction: the
        # latest submission of any state answers until then.)
        of_team = (Submission.team_id == team_id) & (Submission.phase_id == phase_id)
        scored = of_team & (Submission.status == SubmissionStatus.scored)
        return (
            select(func.count()).where(scored).scalar_subquery(),
            func.coalesce(
                select(func.max(Submission.created_at)).where(scored).scalar_subquery(),
                select(func.max(Submission.created_at)).where(of_team).scalar_subquery(),
            ),
        )

    return union_all(
        select(
            competition_id,
            p.key_id,
            literal("public"),
            p.team_id,
            p.submission_id,
            p.public,
            sign * p.public,
            p.public_tie,
            p.created_at,
            p.baseline,
            *history(p.team_id, p.phase_id),
        ).where(
            or_(and_(last, p.newest_public == 1), and_(~last, p.by_public == 1)),
            p.public.is_not(None),
        ),
        select(
            competition_id,
            q.key_id,
            literal("private"),
            q.team_id,
            q.submission_id,
            q.private,
            sign * q.private,
            q.private_tie,
            q.created_at,
            q.baseline,
            *history(q.team_id, q.phase_id),
        ).where(q.rn == 1),
    )


_COLUMNS = [
    "competition_id",
    "answer_key_id",
    "board",
    "team_id",
    "submission_id",
    "score",
    "order_key",
    "tie_key",
    "submitted_at",
    "baseline",
    "entries",
    "last_submission_at",
]


def _recompute(
    session: Session,
    competition: Competition,
    team_ids: Collection[int] | None,
    *,
    bump_revision: bool = True,
) -> None:
    maximize = metric_for(competition).greater_is_better
    params: dict[str, Any] = {"competition_id": competition.id}
    if team_ids is not None:
        params["team_ids"] = sorted(team_ids)
    # Core statements on the session's connection: no ORM bookkeeping for rows nobody loads.
    connection = session.connection()
    lock_standings(session, competition.id)  # one writer per competition (see app.db)
    connection.execute(_delete(team_ids is not None), params)
    connection.execute(_insert(maximize, team_ids is not None), params)
    # Last, so the row lock it takes on PostgreSQL is held only until the commit: revisions are
    # bumped in commit order, and a reader that sees a revision sees the standings behind it.
    # A row of its own (not the competition's): a host's transaction holding the competition row
    # while it waits on a scorer's submission row cannot deadlock with the scorer's bump.
    if bump_revision:
        bump_board_revision(session, competition.id)
    session.info[_WRITTEN] = True


def bump_board_revision(session: Session, competition_id: int) -> None:
    """Move the competition's board revision on: what its boards show changed (rendered boards
    filed under the old revision are not served again)."""
    connection = session.connection()
    connection.execute(_bump_revision(connection.dialect.name), {"competition_id": competition_id})


@functools.cache
def _bump_revision(dialect: str):  # type: ignore[no-untyped-def]
    upsert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = BoardRevision.__table__
    return (
        upsert(table)
        .values(competition_id=bindparam("competition_id", type_=Integer), revision=1)
        .on_conflict_do_update(
            index_elements=[table.c.competition_id], set_={"revision": table.c.revision + 1}
        )
    )


# An update's execution option, set by statements that move submissions only between unscored
# statuses (a lease's claim, hand-over, put-back): no board can change, so none is recomputed
# (the claim of every scoring job recomputed its team's standings for nothing).
UNSCORED_ONLY = "podium_unscored_only"


def wrote_standings(session: Session) -> bool:
    """True when this session's transaction has written standings not yet committed."""
    return bool(session.info.get(_WRITTEN))


@functools.cache
def _delete(by_team: bool):  # type: ignore[no-untyped-def]
    stale = delete(Standing).where(
        Standing.competition_id == bindparam("competition_id", type_=Integer)
    )
    if by_team:
        stale = stale.where(Standing.team_id.in_(bindparam("team_ids", expanding=True)))
    return stale


@functools.cache
def _insert(maximize: bool, by_team: bool):  # type: ignore[no-untyped-def]
    return insert(Standing).from_select(_COLUMNS, _standing_rows(maximize, by_team))


def rebuild(session: Session, competition: Competition, *, bump_revision: bool = True) -> None:
    """Recompute every standing of a competition (after writes that bypassed the session).

    ``bump_revision=False`` only for a schema older than the board revisions (migration 0007).
    """
    _recompute(session, competition, None, bump_revision=bump_revision)


def recompute_teams(session: Session, competition: Competition, team_ids: Collection[int]) -> None:
    """Recompute these teams' standings now, after writes made with Core statements on the
    session's connection (which no session event sees); ``competition`` may be a transient copy
    (its id and what :func:`~app.evaluation.metric.metric_for` reads)."""
    _recompute(session, competition, team_ids)


def apply_pending(session: Session) -> None:
    """Recompute the standings of every team changed in this session so far."""
    for _ in range(5):
        if session.new or session.dirty or session.deleted:
            session.flush()
        pending: _Pending | None = session.info.pop(_PENDING, None)
        if not pending:
            return
        teams = set(pending.teams)
        ids = sorted(pending.submissions)
        # In slices: PostgreSQL takes at most 65,535 parameters a statement, and a bulk load
        # or a rescore can touch more submissions than that in one transaction.
        for start in range(0, len(ids), _IDS_PER_QUERY):
            teams.update(
                session.execute(
                    select(Submission.competition_id, Submission.team_id).where(
                        Submission.id.in_(ids[start : start + _IDS_PER_QUERY])
                    )
                ).all()
            )
        by_competition: dict[int, set[int]] = {}
        for competition_id, team_id in teams:
            by_competition.setdefault(competition_id, set()).add(team_id)
        for competition_id in pending.competitions:
            by_competition[competition_id] = set()
        for competition_id, team_ids in sorted(by_competition.items()):
            competition = session.get(Competition, competition_id)
            if competition is None:
                continue
            whole = competition_id in pending.competitions or len(team_ids) > _MANY_TEAMS
            _recompute(session, competition, None if whole else team_ids)


# -- noticing changes ------------------------------------------------------------------------


def _changed(obj: object, names: Iterable[str]) -> bool:
    attrs = inspect(obj).attrs
    return any(attrs[name].history.has_changes() for name in names)


def _moves_board(submission: Submission) -> bool:
    """Whether a change to a submission can change a standing. Its status matters only into or
    out of ``scored``: a code run going queued -> running -> scoring writes no standings."""
    fields = [name for name in _SUBMISSION_FIELDS if name != "status"]
    if _changed(submission, fields):
        return True
    history = inspect(submission).attrs["status"].history
    if not history.has_changes():
        return False
    scored = SubmissionStatus.scored
    return any(value == scored for value in [*history.added, *history.deleted])


def _old_values(obj: object, name: str) -> list[Any]:
    return [v for v in inspect(obj).attrs[name].history.deleted if v is not None]


@event.listens_for(Session, "after_flush")
def _collect(session: Session, _context: UOWTransaction) -> None:
    pending = _pending(session)
    for obj in session.new:
        if isinstance(obj, Score):
            # Its submission's team straight away when the session holds it (the scorer's
            # settle does), else looked up with the others when applied.
            held = session.identity_map.get(session.identity_key(Submission, obj.submission_id))
            loaded = inspect(held).dict if isinstance(held, Submission) else {}
            if loaded.get("team_id") is not None and loaded.get("competition_id") is not None:
                pending.teams.add((loaded["competition_id"], loaded["team_id"]))
            else:
                pending.submissions.add(obj.submission_id)
        elif isinstance(obj, Submission) and obj.status == SubmissionStatus.scored:
            # Only a scored submission is an entry: a new upload (queued, or failed at once)
            # changes no standing, so accepting one writes none.
            pending.teams.add((obj.competition_id, obj.team_id))
    for obj in session.deleted:
        if isinstance(obj, Score):
            pending.submissions.add(obj.submission_id)
        elif isinstance(obj, Submission):
            pending.teams.add((obj.competition_id, obj.team_id))
    for obj in session.dirty:
        if isinstance(obj, Submission) and _moves_board(obj):
            pending.teams.add((obj.competition_id, obj.team_id))
            for old_team in _old_values(obj, "team_id"):
                pending.teams.add((obj.competition_id, old_team))
        elif isinstance(obj, Score) and _changed(obj, _SCORE_FIELDS):
            pending.submissions.add(obj.submission_id)
            pending.submissions.update(_old_values(obj, "submission_id"))
        elif isinstance(obj, Team) and _changed(obj, ("banned_at", "competition_id")):
            pending.teams.add((obj.competition_id, obj.id))
        elif isinstance(obj, Competition) and _changed(obj, _COMPETITION_FIELDS):
            pending.competitions.add(obj.id)
        elif isinstance(obj, Phase) and _changed(obj, _PHASE_FIELDS):
            pending.competitions.add(obj.competition_id)


def _statement_rows(state: ORMExecuteState) -> list[Mapping[str, Any]]:
    """The parameter sets of a bulk insert, by column name."""
    rows: list[Mapping[str, Any]] = []
    params = state.parameters
    if isinstance(params, Mapping):
        rows.append(params)
    elif isinstance(params, list | tuple):
        rows.extend(p for p in params if isinstance(p, Mapping))
    values = getattr(state.statement, "_values", None) or {}
    if values:
        rows.append(
            {
                getattr(k, "key", k): v.value if isinstance(v, BindParameter) else v
                for k, v in values.items()
            }
        )
    return rows


def _sets(state: ORMExecuteState, name: str) -> bool:
    values = getattr(state.statement, "_values", None)
    if values is None:
        return True  # cannot tell: assume it does
    return any(getattr(k, "key", k) == name for k in values)


@event.listens_for(Session, "do_orm_execute")
def _collect_bulk(state: ORMExecuteState):  # type: ignore[no-untyped-def]
    if not (state.is_update or state.is_delete or state.is_insert):
        return None
    session = state.session
    mapper = state.bind_mapper
    entity = mapper.class_ if mapper is not None else None
    if entity not in (Submission, Score, Team, Competition):
        return None
    pending = _pending(session)
    if state.is_insert:
        for row in _statement_rows(state):
            if entity is Score and row.get("submission_id") is not None:
                pending.submissions.add(row["submission_id"])
            elif entity is Submission and row.get("team_id") is not None:
                pending.teams.add((row["competition_id"], row["team_id"]))
        return None

    where = state.statement.whereclause
    if entity is Submission:
        if state.is_update and not any(_sets(state, name) for name in _SUBMISSION_FIELDS):
            return None  # leases, timings: nothing a board shows
        if (
            state.is_update
            and state.execution_options.get(UNSCORED_ONLY)
            and not any(_sets(state, name) for name in _SUBMISSION_FIELDS if name != "status")
        ):
            return None  # a lease's claim or hand-over: never into or out of scored
        moves = _sets(state, "team_id") or _sets(state, "competition_id")
        query = select(Submission.id, Submission.competition_id, Submission.team_id)
        rows = session.execute(query.where(where) if where is not None else query).all()
        _mark_teams(pending, [(c, t) for _, c, t in rows])
        if not moves or not rows:
            return None
        result = state.invoke_statement()
        ids = [i for i, _, _ in rows]
        if len(ids) > 10 * _MANY_TEAMS:
            pending.competitions.update(c for _, c, _ in rows)
        else:
            after = session.execute(
                select(Submission.competition_id, Submission.team_id).where(Submission.id.in_(ids))
            ).all()
            _mark_teams(pending, [(c, t) for c, t in after])
        return result
    if entity is Score:
        query = select(Score.submission_id)
        pending.submissions.update(
            session.scalars(query.where(where) if where is not None else query)
        )
        if state.is_update and (_sets(state, "submission_id")):
            log.warning("a bulk update moved scores between submissions; rebuild the standings")
    elif entity is Team:
        query = select(Team.competition_id, Team.id)
        rows = session.execute(query.where(where) if where is not None else query).all()
        _mark_teams(pending, [(c, t) for c, t in rows])
    elif entity is Competition and state.is_update:
        if any(_sets(state, name) for name in _COMPETITION_FIELDS):
            query = select(Competition.id)
            pending.competitions.update(
                session.scalars(query.where(where) if where is not None else query)
            )
    return None


def _mark_teams(pending: _Pending, pairs: list[tuple[int, int]]) -> None:
    teams = set(pairs)
    if len(teams) > _MANY_TEAMS:
        pending.competitions.update(c for c, _ in teams)
    else:
        pending.teams.update(teams)


# insert=True: before any other hook, whatever the import order; the record's appends
# (app.ledger.record) must come after the standings, as the last statements before the commit.
@event.listens_for(Session, "before_commit", insert=True)
def _apply_before_commit(session: Session) -> None:
    apply_pending(session)


@event.listens_for(Session, "after_transaction_end")
def _forget(session: Session, transaction: SessionTransaction) -> None:
    # Committed (applied above) or rolled back (the database forgot too): nothing stays pending.
    if transaction.parent is None:
        session.info.pop(_PENDING, None)
        session.info.pop(_WRITTEN, None)
