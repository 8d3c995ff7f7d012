"""Reading the boards from the materialised standings (kept by :mod:`app.leaderboard.standings`).

Public: each team's best public score. Private: the best private score among the team's
selected submissions or, with none selected, among its best ``final_selection_limit`` by public
score (Kaggle's rule). Equal scores: the earlier submission ranks first. Hidden submissions,
banned teams and late submissions never rank; hosts' baseline entries show without a rank. A
competition's hosts see full-precision scores and the private board at any time; everyone else
after the deadline.

A page costs a fixed number of queries (its rows in one statement), each over one board's
standings (one row per team), whatever the number of submissions behind it. The whole board as CSV
is kept rendered per process while the competition's board revision stands
(:mod:`app.leaderboard.cache`).
"""

import csv
import functools
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    null,
    select,
    tuple_,
    type_coerce,
    union_all,
)
from sqlalchemy.orm import Session, aliased

from app.auth.hosts import is_host
from app.competitions.entry_fields import on_board
from app.competitions.phases import board_phase, simulation_settings
from app.errors import Forbidden, Unauthorized, Unprocessable
from app.evaluation.columns import columns_for, public_column, stored_values
from app.evaluation.metric import metric_for
from app.evaluation.rounding import rounded, rounded_interval, shown_decimals
from app.honest.board.board import (
    RowStats,
    hides_public_scores,
    ladder_scores,
    row_stats,
    stored_bands,
)
from app.leaderboard import benchmark
from app.leaderboard.cache import BoardView, RenderedBoards
from app.leaderboard.ranks import place, with_board_columns
from app.leaderboard.schemas import Board, Leaderboard, LeaderboardRow
from app.leaderboard.simulation import SimRow
from app.leaderboard.simulation import standings as simulation_standings
from app.leaderboard.spreadsheet import safe_row
from app.leaderboard.standings import apply_pending, wrote_standings
from app.models import (
    AnswerKey,
    BoardRevision,
    Competition,
    Phase,
    Score,
    Standing,
    Submission,
    Team,
    TeamMember,
    User,
)
from app.models.phase import BOARD_BLIND, BOARD_HIDDEN, BOARD_PUBLIC
from app.scoring.columns import Column

MAX_PAGE = 1000
AVERAGE_RANK_TIES = (
    "a row lacking a task's value ranks below every row that has them all; equal average "
    "ranks: the next columns in order, then the team whose scoring submission came first"
)


@dataclass(frozen=True)
class Ranked:
    team_id: int
    team: str
    score: float
    rank: int | None  # None for a baseline entry
    baseline: bool
    entries: int
    last_submission_at: datetime
    position: int  # 1-based place on the board, baselines included
    submitted_at: datetime
    submission_id: int


class BoardBlind(Forbidden):
    code = "board_blind"


class BoardHidden(Forbidden):
    code = "board_hidden"


def check_board_access(
    session: Session,
    competition: Competition,
    board: Board,
    user: User | None,
    phase: Phase | None = None,
) -> None:
    """The public board is anyone's; the private one a host's, and anyone's after the phase
    ends. A ``blind`` phase's boards are its hosts' alone until it ends; a ``hidden`` phase's
    always. ``user`` None: a reader without a token."""
    phase = phase or competition.current_phase
    if _is_host(session, competition, user):
        return
    now = datetime.now(UTC)
    if phase is not None:
        refuse_hidden_board(phase, now)
    if board != "private":
        return
    if phase.has_ended(now) if phase is not None else competition.is_past_deadline(now):
        return
    if user is None:
        raise Unauthorized(
            "the private leaderboard opens to everyone after the deadline; before it, only the "
            "competition's hosts may read it, with their token"
        )
    raise Forbidden("the private leaderboard opens to participants after the deadline")


def readable_phase(
    session: Session, competition: Competition, name: str | None, user: User | None
) -> Phase:
    """The phase a board shows: the one named; else, of the phases whose board the caller may
    read, an open public one (the latest-starting), else the current phase if readable, else
    the last readable one that ended. None readable: the current phase, whose refusal says why.
    A host reads every board: the current phase."""
    if name is not None or _is_host(session, competition, user):
        return board_phase(competition, name)
    now = datetime.now(UTC)
    phases = list(competition.phases)
    readable = [p for p in phases if _readable(p, now)]
    open_public = [p for p in readable if p.is_open(now) and p.board == BOARD_PUBLIC]
    if open_public:
        return max(open_public, key=lambda p: (p.start, p.position))
    current = board_phase(competition, None)
    if current in readable or not readable:
        return current
    ended = [p for p in readable if p.has_ended(now)]
    return max(ended or readable, key=lambda p: (p.end or p.start, p.position))


def _readable(phase: Phase, now: datetime) -> bool:
    try:
        refuse_hidden_board(phase, now)
    except Forbidden:
        return False
    return True


def refuse_hidden_board(phase: Phase, now: datetime) -> None:
    """403 for a participant on a blind phase's board before it ends, or a hidden phase's."""
    if phase.board == BOARD_BLIND and not phase.has_ended(now):
        ends = phase.end.isoformat() if phase.end is not None else "the phase's end"
        raise BoardBlind(
            f"phase '{phase.name}' is blind: its scores appear when it ends ({ends})",
            extra={"phase": phase.name, "ends_at": phase.end.isoformat() if phase.end else None},
        )
    if phase.board == BOARD_HIDDEN:
        raise BoardHidden(
            f"phase '{phase.name}' has a hidden board: each team sees its own scores on its "
            "submissions, the board is for the hosts",
            extra={"phase": phase.name},
        )


def _is_host(session: Session, competition: Competition, user: User | None) -> bool:
    return user is not None and is_host(session, competition, user)


_ORDER = (Standing.order_key, Standing.tie_key, Standing.submitted_at, Standing.submission_id)
# What a row is called: its team's name, or for a baseline its upload's description (each
# baseline is an entry of its own, labelled by the host).
_LABEL = case(
    (
        Standing.baseline.is_(True),
        func.coalesce(func.nullif(Submission.description, ""), literal("Baseline")),
    ),
    else_=Team.name,
)
_COLUMNS = (
    Standing.team_id,
    _LABEL.label("name"),
    Standing.score,
    Standing.baseline,
    Standing.entries,
    Standing.last_submission_at,
    *_ORDER,
)


def _on_board(key_id: int, board: Board):  # type: ignore[no-untyped-def]
    return (Standing.answer_key_id == key_id) & (Standing.board == board)


def _ranked(row, position: int, baselines: list[tuple]) -> Ranked:  # type: ignore[no-untyped-def]
    team_id, name, score, baseline, entries, last, *place = row[: len(_COLUMNS)]
    ahead = sum(1 for b in baselines if b < tuple(place))
    return Ranked(
        team_id=team_id,
        team=name,
        score=score,
        rank=None if baseline else position - ahead,
        baseline=bool(baseline),
        entries=entries,
        last_submission_at=last,
        position=position,
        submitted_at=place[2],
        submission_id=place[3],
    )


def standings(
    session: Session, *, competition: Competition, key_id: int, board: Board
) -> list[Ranked]:
    """The whole of one board, computed from one answer-key version, best first."""
    apply_pending(session)
    rows = session.execute(
        select(*_COLUMNS)
        .join(Team, Team.id == Standing.team_id)
        .join(Submission, Submission.id == Standing.submission_id)
        .where(_on_board(key_id, board))
        .order_by(*_ORDER)
    )
    result, rank = [], 0
    for position, row in enumerate(rows, start=1):
        if not row.baseline:
            rank += 1
        result.append(
            Ranked(
                team_id=row.team_id,
                team=row.name,
                score=row.score,
                rank=None if row.baseline else rank,
                baseline=bool(row.baseline),
                entries=row.entries,
                last_submission_at=row.last_submission_at,
                position=position,
                submitted_at=row.submitted_at,
                submission_id=row.submission_id,
            )
        )
    return result


def board_standings(
    session: Session, *, competition: Competition, phase: Phase, key_id: int, board: Board
) -> list[Ranked]:
    """The whole of one board as its readers see it ranked: :func:`standings`, or for a board
    with a column computed over its rows (an average rank) the rows ranked by it, their score
    that column's value."""
    columns = columns_for(competition, phase)
    if not any(c.on_board for c in columns):
        return standings(session, competition=competition, key_id=key_id, board=board)
    ranked, _values = _resorted(
        session,
        competition=competition,
        key_id=key_id,
        board=board,
        columns=BoardColumns(columns, columns, columns[0], None),
    )
    return ranked


_BOARD = (
    Standing.answer_key_id == bindparam("key_id", type_=Integer),
    Standing.board == bindparam("board", type_=String),
)
_PAGE, _BASELINE, _OWN, _TOTAL = range(4)


@functools.cache
def _page_statement():  # type: ignore[no-untyped-def]
    """One statement for a page: the board's size, its baseline rows, the page, and the caller's
    team's row with the number of rows ahead of it. Built once: building a statement this size
    costs more than running it. Each part walks the rank-order index (ix_standings_board_order)."""
    kind = literal_column  # a constant column telling the parts apart
    nothing = [null()] * (len(_COLUMNS) - len(_ORDER))
    # The offset walks the rank-order index alone (SQLite: covering, as it holds the rowid), no
    # join; the page's 50 rows are read after, by primary key.
    spot = (
        select(Standing.id)
        .where(*_BOARD)
        .order_by(*_ORDER)
        .limit(bindparam("limit", type_=Integer))
        .offset(bindparam("offset", type_=Integer))
        .subquery()
    )
    page = (
        select(kind(str(_PAGE)).label("part"), *_COLUMNS, cast(null(), Integer).label("ahead"))
        .select_from(spot)
        .join(Standing, Standing.id == spot.c.id)
        .join(Team, Team.id == Standing.team_id)
        .join(Submission, Submission.id == Standing.submission_id)
    )
    other = aliased(Standing)
    ahead = (
        select(func.count())
        .select_from(other)
        .where(
            other.answer_key_id == bindparam("key_id", type_=Integer),
            other.board == bindparam("board", type_=String),
            tuple_(other.order_key, other.tie_key, other.submitted_at, other.submission_id)
            < tuple_(*_ORDER),
        )
        .scalar_subquery()
    )
    return union_all(
        page,
        select(kind(str(_BASELINE)), *nothing, *_ORDER, null()).where(
            *_BOARD, Standing.baseline.is_(True)
        ),
        select(kind(str(_OWN)), *_COLUMNS, ahead)
        .join(Team, Team.id == Standing.team_id)
        .join(Submission, Submission.id == Standing.submission_id)
        .where(*_BOARD, Standing.team_id == bindparam("own_team_id", type_=Integer)),
        select(kind(str(_TOTAL)), *nothing, *[null()] * len(_ORDER), func.count()).where(*_BOARD),
    )


def _page(
    session: Session,
    *,
    key_id: int,
    board: Board,
    limit: int,
    offset: int,
    own_team_id: int | None,
) -> tuple[int, list[Ranked], Ranked | None]:
    """One page of a board, the board's size, and the caller's team's row wherever it is.

    One round trip whatever the page or the board: the page walks the rank-order index, the
    caller's place is an index count, and ranks skip the (few) baseline rows.
    """
    apply_pending(session)
    rows = session.connection().execute(
        _page_statement(),
        {
            "key_id": key_id,
            "board": board,
            "limit": limit,
            "offset": offset,
            "own_team_id": own_team_id,
        },
    )
    parts: dict[int, list[Any]] = {_PAGE: [], _BASELINE: [], _OWN: [], _TOTAL: []}
    for row in rows:
        parts[int(row[0])].append(row[1:])
    width = len(_COLUMNS)
    baselines = sorted(tuple(r[width - len(_ORDER) : width]) for r in parts[_BASELINE])
    # UNION ALL keeps no order of its own: the page is put back in rank order here.
    page_rows = sorted(parts[_PAGE], key=lambda r: tuple(r[width - len(_ORDER) : width]))
    page = [_ranked(row, offset + i, baselines) for i, row in enumerate(page_rows, start=1)]
    own = None
    if parts[_OWN]:
        row = parts[_OWN][0]
        own = _ranked(row, row[width] + 1, baselines)
    total = parts[_TOTAL][0][width] if parts[_TOTAL] else 0
    return total, page, own


def _own_team_id(session: Session, competition: Competition, user: User | None) -> int | None:
    if user is None or user.id is None:
        return None
    return session.scalar(
        select(TeamMember.team_id).where(
            TeamMember.competition_id == competition.id, TeamMember.user_id == user.id
        )
    )


def _row(
    ranked: Ranked,
    decimals: int | None,
    honest: dict[int, RowStats],
    scores: dict[str, float | None] | None = None,
) -> LeaderboardRow:
    found = honest.get(ranked.submission_id)
    return LeaderboardRow(
        rank=ranked.rank,
        team=ranked.team,
        score=rounded(ranked.score, decimals),
        entries=ranked.entries,
        last_submission_at=ranked.last_submission_at,
        baseline=ranked.baseline,
        interval=rounded_interval(found.interval if found else None, decimals),
        band=found.band if found else None,
        scores=scores or {},
    )


@dataclass(frozen=True)
class BoardColumns:
    """The columns a board shows its reader (hidden ones to hosts only) and the one it sorts
    by; values are rounded to each column's precision and the reader's decimals."""

    all: list[Column]
    shown: list[Column]
    sort: Column
    decimals: int | None
    # A multi-task phase's board showing one task's columns (``?task=``); None: all of them.
    task: str | None = None

    @property
    def board_time(self) -> bool:
        """Whether a column is computed over the board's rows (an average rank): then the
        whole board is read and ranked here, never from the standings' order alone."""
        return any(c.on_board for c in self.all)

    @property
    def sorted_by_rank(self) -> bool:
        return self.sort.key == self.all[0].key and not self.board_time

    def digits(self, column: Column) -> int | None:
        if column.precision is None or self.decimals is None:
            return self.decimals
        return min(column.precision, self.decimals)

    def values(
        self, stored: dict[str, dict[str, float | None]], board: Board
    ) -> dict[str, float | None]:
        return {
            c.key: rounded(stored.get(c.key, {}).get(board), self.digits(c)) for c in self.shown
        }


def board_columns(
    competition: Competition,
    phase: Phase,
    *,
    host: bool,
    sort: str | None,
    decimals: int | None,
    task: str | None = None,
) -> BoardColumns:
    columns = columns_for(competition, phase)
    shown = [c for c in columns if host or not c.hidden]
    chosen = columns[0]
    if task is not None:
        # One task at a time: its columns alone, ranked by its first unless sorted otherwise.
        if task not in phase.task_keys:
            raise Unprocessable(
                f"phase '{phase.name}' has no task '{task}'"
                + (f"; its tasks are {', '.join(phase.task_keys)}" if phase.tasks else ""),
                extra={"field": "task"},
            )
        shown = [c for c in shown if c.task == task]
        chosen = next((c for c in columns if c.task == task), chosen)
    if sort is not None:
        found = [c for c in shown if c.key == sort]
        if not found:
            raise Unprocessable(
                f"cannot sort by '{sort}': the board's columns are "
                + ", ".join(c.key for c in shown),
                extra={"field": "sort"},
            )
        chosen = found[0]
    return BoardColumns(columns, shown, chosen, decimals, task)


def _stored_values(
    session: Session, *, competition: Competition, key_id: int, submission_ids: list[int]
) -> dict[int, dict[str, dict[str, float | None]]]:
    """Each submission's per-column values against one key version (one query)."""
    if not submission_ids:
        return {}
    ranking = columns_for(competition)[0].key
    rows = session.execute(
        select(
            Score.submission_id,
            Score.columns,
            Score.score,
            Score.public_score,
            Score.private_score,
        ).where(Score.answer_key_id == key_id, Score.submission_id.in_(submission_ids))
    )
    return {
        r.submission_id: stored_values(
            r.columns,
            ranking_key=ranking,
            score=r.score,
            public=r.public_score,
            private=r.private_score,
        )
        for r in rows
    }


def _board_details(
    session: Session, phase: Phase, submission_ids: list[int]
) -> dict[int, dict[str, Any]]:
    """The entry details a phase shows on its boards, by submission (one query; none when the
    phase shows none)."""
    fields = list(phase.entry_fields or [])
    if not submission_ids or not any(f.get("on_board") for f in fields):
        return {}
    rows = session.execute(
        select(Submission.id, Submission.details).where(Submission.id.in_(submission_ids))
    )
    return {r.id: on_board(r.details, fields) for r in rows}


def _resorted(
    session: Session,
    *,
    competition: Competition,
    key_id: int,
    board: Board,
    columns: BoardColumns,
) -> tuple[list[Ranked], dict[int, dict[str, dict[str, float | None]]]]:
    """The whole board ranked by another column, then the others in order, then time (the
    standings are kept in the ranking column's order; a re-sort reads one board, one row per
    team), with every row's values: an average rank computed over the board's rows is the
    row's score when it ranks."""
    whole = standings(session, competition=competition, key_id=key_id, board=board)
    values = _stored_values(
        session,
        competition=competition,
        key_id=key_id,
        submission_ids=[r.submission_id for r in whole],
    )
    if columns.board_time:
        values = with_board_columns(columns.all, values, board)
    order = [columns.sort] + [c for c in columns.all if c.key != columns.sort.key]
    ranking = columns.all[0]

    def at(ranked: Ranked) -> tuple[Any, ...]:
        mine = values.get(ranked.submission_id, {})
        return (*place(mine, order, board), ranked.submitted_at, ranked.submission_id)

    result, rank = [], 0
    for position, ranked in enumerate(sorted(whole, key=at), start=1):
        if not ranked.baseline:
            rank += 1
        if ranking.on_board:
            score = values.get(ranked.submission_id, {}).get(ranking.key, {}).get(board)
            ranked = replace(ranked, score=score if score is not None else ranked.score)
        result.append(replace(ranked, position=position, rank=None if ranked.baseline else rank))
    return result, values


def _honest(
    session: Session,
    competition: Competition,
    key_id: int,
    board: Board,
    page: list[Ranked],
    own: Ranked | None,
) -> tuple[dict[int, RowStats], int | None]:
    """Interval and rank band of the rows shown (bands as the queue last computed them), and
    how many rows the bands cover (None where the board shows none)."""
    if not competition.score_intervals:
        return {}, None
    stored = stored_bands(session, key_id=key_id, board=board)
    cover = stored.teams if stored is not None else 0
    if not page:
        return {}, cover
    shown = page + ([own] if own is not None else [])
    found = row_stats(
        session,
        competition=competition,
        key_id=key_id,
        board=board,
        submission_ids=[r.submission_id for r in shown if r.rank is not None],
        stored=stored,
    )
    return found, cover


def leaderboard(
    session: Session,
    *,
    competition: Competition,
    board: Board,
    user: User | None,
    limit: int = 100,
    offset: int = 0,
    phase_name: str | None = None,
    sort: str | None = None,
    task: str | None = None,
) -> Leaderboard:
    """A page of a phase's board (default: :func:`readable_phase`), under
    :func:`check_board_access`; ``user`` None reads without a token (as a participant, with no
    row of its own). ``sort`` ranks by another column, then the others in order; ``task``
    shows a multi-task phase's one task, ranked by its first column unless sorted."""
    phase = readable_phase(session, competition, phase_name, user)
    check_board_access(session, competition, board, user, phase)
    if phase.takes_agents:
        return _simulation_board(session, competition, phase, board, user, limit, offset)
    if competition.benchmark:
        return _benchmark_board(session, competition, phase, board, user, limit, offset, sort)
    metric = metric_for(competition)
    key = phase.board_key
    host = _is_host(session, competition, user)
    decimals = shown_decimals(competition, host=host)
    columns = board_columns(competition, phase, host=host, sort=sort, decimals=decimals, task=task)
    total, page, own = 0, [], None
    honest: dict[int, RowStats] = {}
    bands_cover: int | None = None
    values: dict[int, dict[str, dict[str, float | None]]] = {}
    details: dict[int, dict[str, Any]] = {}
    if key is not None:
        own_team_id = _own_team_id(session, competition, user)
        if board == "public" and hides_public_scores(competition, host):
            # The Ladder replays each team's history: the whole board is computed, then paged.
            ranked = _released_standings(session, competition, key)
            total, page = len(ranked), ranked[offset : offset + limit]
            own = next((r for r in ranked if r.team_id == own_team_id), None)
        else:
            if columns.sorted_by_rank:
                total, page, own = _page(
                    session,
                    key_id=key.id,
                    board=board,
                    limit=limit,
                    offset=offset,
                    own_team_id=own_team_id,
                )
            else:
                ranked, values = _resorted(
                    session, competition=competition, key_id=key.id, board=board, columns=columns
                )
                total, page = len(ranked), ranked[offset : offset + limit]
                own = next((r for r in ranked if r.team_id == own_team_id), None)
            # Intervals and bands read the exact scores: never shown on a Ladder board.
            honest, bands_cover = _honest(session, competition, key.id, board, page, own)
            shown = page + ([own] if own is not None else [])
            if columns.sorted_by_rank:
                values = _stored_values(
                    session,
                    competition=competition,
                    key_id=key.id,
                    submission_ids=[r.submission_id for r in shown],
                )
            details = _board_details(session, phase, [r.submission_id for r in shown])

    def row(r: Ranked) -> LeaderboardRow:
        scores = columns.values(values[r.submission_id], board) if r.submission_id in values else {}
        shown_row = _row(r, decimals, honest, scores)
        shown_row.details = details.get(r.submission_id, {})
        shown_row.key_version = key.version if key else None
        return shown_row

    return Leaderboard(
        competition=competition.slug,
        phase=phase.name,
        board=board,
        metric=metric.name,
        direction=metric.direction,
        columns=[public_column(c) for c in columns.shown],
        tasks=[{"key": t["key"], "title": t.get("title") or t["key"]} for t in phase.tasks or ()],
        **({"tie_break": AVERAGE_RANK_TIES} if columns.all[0].on_board else {}),
        task=columns.task,
        sort=columns.sort.key,
        answer_key_version=key.version if key else None,
        score_decimals=decimals,
        total=total,
        limit=limit,
        offset=offset,
        rows=[row(r) for r in page],
        own_row=row(own) if own else None,
        public_board_mode=competition.public_board_mode,
        bands_cover=bands_cover,
    )


def _simulation_board(
    session: Session,
    competition: Competition,
    phase: Phase,
    board: Board,
    user: User | None,
    limit: int,
    offset: int,
) -> Leaderboard:
    """A simulation phase's board (:mod:`app.leaderboard.simulation`), in the boards' one shape."""
    ranked = simulation_standings(session, phase)
    own_team_id = _own_team_id(session, competition, user)
    own = next((r for r in ranked if r.team_id == own_team_id), None)
    k = simulation_settings(phase).k

    def row(r: SimRow) -> LeaderboardRow:
        return LeaderboardRow(
            rank=r.rank,
            team=r.team,
            score=r.score,
            entries=r.entries,
            last_submission_at=r.last_submission_at,
            interval={
                "low": r.mu - r.sigma,
                "high": r.mu + r.sigma,
                # The page shows these bounds: here the same, μ ± σ (no bootstrap on a skill).
                "bca_low": r.mu - r.sigma,
                "bca_high": r.mu + r.sigma,
                "level": 0.6827,
            },
            band=r.band,
            scores={"skill": r.score},
            mu=r.mu,
            sigma=r.sigma,
            episodes=r.episodes,
            agent=r.submission_id,
        )

    return Leaderboard(
        competition=competition.slug,
        phase=phase.name,
        board=board,
        metric=f"skill (mu - {k:g} sigma)",
        direction="maximize",
        columns=[{"key": "skill", "title": f"μ − {k:g}σ", "direction": "maximize"}],
        sort="skill",
        answer_key_version=None,
        score_decimals=None,
        tie_break="equal skill: more episodes, then the older agent ranks higher",
        total=len(ranked),
        limit=limit,
        offset=offset,
        rows=[row(r) for r in ranked[offset : offset + limit]],
        own_row=row(own) if own else None,
        bands_cover=len(ranked),
    )


CSV_COLUMNS = ["rank", "team", "score", "entries", "last_submission_at", "baseline"]


def _iso(value: datetime | str) -> str:
    # Read without the column type, for speed: SQLite hands back its stored UTC text.
    if isinstance(value, str):
        return value.replace(" ", "T", 1) + "+00:00"
    return value.astimezone(UTC).isoformat()


# Core rows straight off the rank-order index: no ORM rows, no column types for the times.
_CSV_ROWS = (
    select(
        Standing.baseline,
        _LABEL,
        Standing.score,
        Standing.entries,
        type_coerce(Standing.last_submission_at, String),
    )
    .join(Team, Team.id == Standing.team_id)
    .join(Submission, Submission.id == Standing.submission_id)
    .where(
        Standing.answer_key_id == bindparam("key_id", type_=Integer),
        Standing.board == bindparam("board", type_=String),
    )
    .order_by(*_ORDER)
)


def _csv(
    rows: Iterable[tuple[Any, ...]], decimals: int | None, extra: list[str] | None = None
) -> bytes:
    """(baseline, team, score, entries, last submission, rank or None[, more values]) rows as
    the CSV's bytes; a board of several columns gets one more CSV column for each, and one for
    each entry detail the phase shows."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS + (extra or []))
    writer.writerows(
        safe_row(
            (
                "" if rank is None else rank,
                name,
                repr(score if decimals is None else round(score, decimals)),
                entries,
                _iso(last),
                "true" if baseline else "false",
                *(_cell(v) for v in (more[0] if more else [])),
            )
        )
        for baseline, name, score, entries, last, rank, *more in rows
    )
    return out.getvalue().encode()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _ranked_by_position(
    rows: Iterable[Any],
) -> Iterator[tuple[bool, str, float, int, Any, int | None]]:
    rank = 0
    for baseline, name, score, entries, last in rows:
        if not baseline:
            rank += 1
        yield baseline, name, score, entries, last, None if baseline else rank


def leaderboard_csv(
    session: Session,
    *,
    competition: Competition,
    board: Board,
    user: User | None,
    cache: RenderedBoards | None = None,
    phase_name: str | None = None,
    sort: str | None = None,
    task: str | None = None,
) -> bytes:
    """The whole board of a phase as CSV, under the same access and rounding rules as the JSON
    pages.

    With a ``cache``, the bytes are reused while the competition's board revision stands.
    """
    phase = readable_phase(session, competition, phase_name, user)
    check_board_access(session, competition, board, user, phase)
    key = phase.board_key
    host = _is_host(session, competition, user)
    decimals = shown_decimals(competition, host=host)
    columns = board_columns(competition, phase, host=host, sort=sort, decimals=decimals, task=task)
    shown_details = [f["key"] for f in phase.entry_fields or [] if f.get("on_board")]
    extra = [c.key for c in columns.shown] if len(columns.all) > 1 else []
    extra += shown_details
    if competition.benchmark and not phase.takes_agents:
        return _benchmark_csv(session, competition, phase, board, columns, extra)
    if key is None:
        return _csv([], decimals, extra)
    if board == "public" and hides_public_scores(competition, host):
        # What the Ladder released, replayed from every team's history (never cached: the
        # queue's stats feed it after the score is written).
        ranked = _released_standings(session, competition, key)
        return _csv(
            (
                (r.baseline, r.team, r.score, r.entries, r.last_submission_at, r.rank)
                for r in ranked
            ),
            decimals,
        )
    apply_pending(session)
    view = BoardView(competition.id, key.id, board, host, decimals)
    # This transaction's own uncommitted standings must not be shared with other readers; a
    # board sorted by another column is not kept.
    revision = None
    if cache is not None and not wrote_standings(session) and columns.sorted_by_rank:
        # Read before the rows: bytes filed under a revision are at least that new.
        revision = (
            session.scalar(
                select(BoardRevision.revision).where(BoardRevision.competition_id == competition.id)
            )
            or 0
        )
        found = cache.get(view, revision)
        if found is not None:
            return found
    if not extra and columns.sorted_by_rank:
        rows = session.connection().execute(_CSV_ROWS, {"key_id": key.id, "board": board}).all()
        body = _csv(_ranked_by_position(rows), decimals)
    else:
        body = _csv_with_columns(
            session,
            competition=competition,
            phase=phase,
            key_id=key.id,
            board=board,
            columns=columns,
            extra=extra,
        )
    if cache is not None and revision is not None:
        cache.put(view, revision, body)
    return body


def _csv_with_columns(
    session: Session,
    *,
    competition: Competition,
    phase: Phase,
    key_id: int,
    board: Board,
    columns: BoardColumns,
    extra: list[str],
) -> bytes:
    if columns.sorted_by_rank:
        ranked = standings(session, competition=competition, key_id=key_id, board=board)
        ids = [r.submission_id for r in ranked]
        values = _stored_values(session, competition=competition, key_id=key_id, submission_ids=ids)
    else:
        ranked, values = _resorted(
            session, competition=competition, key_id=key_id, board=board, columns=columns
        )
        ids = [r.submission_id for r in ranked]
    details = _board_details(session, phase, ids)
    with_columns = len(columns.all) > 1
    detail_keys = extra[len(columns.shown) :] if with_columns else extra

    def more(r: Ranked) -> list[Any]:
        shown = columns.values(values.get(r.submission_id, {}), board) if with_columns else {}
        mine = details.get(r.submission_id, {})
        return [*shown.values(), *(mine.get(k) for k in detail_keys)]

    return _csv(
        (
            (r.baseline, r.team, r.score, r.entries, r.last_submission_at, r.rank, more(r))
            for r in ranked
        ),
        columns.decimals,
        extra,
    )


def _released_standings(session: Session, competition: Competition, key: AnswerKey) -> list[Ranked]:
    """The public board as the Ladder released it, every team's history replayed."""
    ranked = standings(session, competition=competition, key_id=key.id, board="public")
    return ladder_standings(session, competition=competition, key=key, ranked=ranked)


def ladder_standings(
    session: Session, *, competition: Competition, key: AnswerKey, ranked: list[Ranked]
) -> list[Ranked]:
    """The public board as the Ladder shows it: each team at its released score, ties broken by
    the earlier release; baseline entries keep their score."""
    maximize = metric_for(competition).greater_is_better
    shown = ladder_scores(
        session,
        competition=competition,
        key=key,
        team_ids=[r.team_id for r in ranked if not r.baseline],
    )
    chosen: list[Ranked] = []
    for row in ranked:
        if row.baseline:
            chosen.append(row)
            continue
        if row.team_id not in shown:
            continue
        value, released = shown[row.team_id]
        at, submission_id = (
            released if released is not None else (row.submitted_at, row.submission_id)
        )
        chosen.append(replace(row, score=value, submitted_at=at, submission_id=submission_id))
    sign = -1.0 if maximize else 1.0
    chosen.sort(key=lambda r: (sign * r.score, _aware(r.submitted_at), r.submission_id))
    result, rank = [], 0
    for position, row in enumerate(chosen, start=1):
        if not row.baseline:
            rank += 1
        result.append(replace(row, rank=None if row.baseline else rank, position=position))
    return result


def _aware(value: datetime | str) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _benchmark_entries(
    session: Session, competition: Competition, phase: Phase, board: Board, columns: BoardColumns
) -> list[benchmark.Entry]:
    return benchmark.entries(
        session,
        phase=phase,
        board=board,
        columns=columns.all,
        sort=columns.sort,
        every=competition.board_every_submission,
    )


def _benchmark_board(
    session: Session,
    competition: Competition,
    phase: Phase,
    board: Board,
    user: User | None,
    limit: int,
    offset: int,
    sort: str | None,
) -> Leaderboard:
    """A benchmark's board (:mod:`app.leaderboard.benchmark`) in the boards' one shape, each row
    with the key version it was scored on. No intervals or bands: they compare scores of one
    key version, and a benchmark's rows may be of several."""
    metric = metric_for(competition)
    host = _is_host(session, competition, user)
    decimals = shown_decimals(competition, host=host)
    columns = board_columns(competition, phase, host=host, sort=sort, decimals=decimals)
    ranked = _benchmark_entries(session, competition, phase, board, columns)
    own_team_id = _own_team_id(session, competition, user)
    page = ranked[offset : offset + limit]
    own = next((e for e in ranked if e.team_id == own_team_id and not e.baseline), None)
    details = _board_details(
        session, phase, [e.submission_id for e in page + ([own] if own else [])]
    )
    every = competition.board_every_submission

    def row(e: benchmark.Entry) -> LeaderboardRow:
        return LeaderboardRow(
            rank=e.rank,
            team=e.name,
            score=rounded(e.score, decimals),
            entries=e.entries,
            last_submission_at=e.last_submission_at,
            baseline=e.baseline,
            scores=columns.values(e.values, board),
            details=details.get(e.submission_id, {}),
            key_version=e.key_version,
            submission=e.submission_id if every else None,
            submitted_at=e.submitted_at if every else None,
        )

    key = phase.board_key
    return Leaderboard(
        competition=competition.slug,
        phase=phase.name,
        board=board,
        metric=metric.name,
        direction=metric.direction,
        columns=[public_column(c) for c in columns.shown],
        sort=columns.sort.key,
        answer_key_version=key.version if key else None,
        benchmark=True,
        every_submission=every,
        score_decimals=decimals,
        tie_break="equal scores: the next columns in order, then the earlier submission ranks "
        "higher",
        total=len(ranked),
        limit=limit,
        offset=offset,
        rows=[row(e) for e in page],
        own_row=row(own) if own else None,
        public_board_mode=competition.public_board_mode,
    )


def _benchmark_csv(
    session: Session,
    competition: Competition,
    phase: Phase,
    board: Board,
    columns: BoardColumns,
    extra: list[str],
) -> bytes:
    """A benchmark's whole board as CSV: the usual columns, then ``key_version`` (and, on a
    board of every submission, ``submission`` and ``submitted_at``), then the columns and
    entry details a board of several shows."""
    ranked = _benchmark_entries(session, competition, phase, board, columns)
    details = _board_details(session, phase, [e.submission_id for e in ranked])
    every = competition.board_every_submission
    with_columns = len(columns.all) > 1
    detail_keys = extra[len(columns.shown) :] if with_columns else extra
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    own = ["key_version"] + (["submission", "submitted_at"] if every else [])
    writer.writerow(CSV_COLUMNS + own + extra)
    for e in ranked:
        shown = columns.values(e.values, board) if with_columns else {}
        mine = details.get(e.submission_id, {})
        score = e.score if columns.decimals is None else round(e.score, columns.decimals)
        writer.writerow(
            safe_row(
                (
                    "" if e.rank is None else e.rank,
                    e.name,
                    repr(score),
                    e.entries,
                    _iso(e.last_submission_at),
                    "true" if e.baseline else "false",
                    e.key_version,
                    *([e.submission_id, _iso(e.submitted_at)] if every else []),
                    *(_cell(v) for v in shown.values()),
                    *(_cell(mine.get(k)) for k in detail_keys),
                )
            )
        )
    return out.getvalue().encode()
