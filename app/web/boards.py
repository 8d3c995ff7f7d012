"""What the Leaderboard tab shows of a phase's board: the phase tabs, one column per column the
reader may see (headers that sort), the rows, the chart and the shake-up. A participant on a
blind phase's board (before it ends) or a hidden one's gets the service's refusal, shown as a
message, and nothing of any score: no rows, no chart, no shake-up."""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from sqlalchemy.orm import Session

from app.competitions.phases import board_phase
from app.config import Settings
from app.errors import AppError
from app.evaluation.rounding import rounded
from app.honest.analysis.schemas import ShakeupPublic
from app.honest.analysis.service import shakeup_report
from app.honest.board.board import hides_public_scores
from app.leaderboard.history import best_public_over_time
from app.leaderboard.schemas import Board, Leaderboard, LeaderboardRow
from app.leaderboard.service import (
    MAX_PAGE,
    BoardBlind,
    BoardHidden,
    leaderboard,
    readable_phase,
)
from app.models import Competition, Phase, User
from app.models.types import MAX_INT
from app.scoring.columns import BOARD_OPS
from app.web.charts import PALETTE, score_over_time

BOARD_PAGE_SIZE = 50
CHART_TEAMS = 10


def digits(precision: int | None, decimals: int | None) -> int | None:
    """Digits a value is shown with: the column's precision (for everyone) within the
    competition's decimals (for participants; None for hosts: full precision)."""
    if precision is None:
        return decimals
    return precision if decimals is None else min(precision, decimals)


@dataclass(frozen=True)
class PhaseTab:
    name: str
    title: str
    start: datetime
    end: datetime | None
    state: str  # upcoming, open, ended
    board: str  # public, hidden, blind
    href: str
    current: bool


def phase_tabs(competition: Competition, chosen: Phase, path: str, now: datetime) -> list[PhaseTab]:
    """One tab per phase, linking ``path?phase=<name>``; none for a one-phase competition."""
    phases = list(competition.phases)
    if len(phases) < 2:
        return []
    return [
        PhaseTab(
            name=p.name,
            title=p.title,
            start=p.start,
            end=p.end,
            state=p.state(now),
            board=p.board,
            href=f"{path}?{urlencode({'phase': p.name})}",
            current=p.id == chosen.id,
        )
        for p in phases
    ]


@dataclass(frozen=True)
class ColumnHead:
    key: str
    title: str
    hidden: bool
    direction: str
    digits: int | None
    href: str  # the board sorted by this column
    sorted: bool
    task: str | None = None  # a multi-task phase's task the column belongs to


@dataclass
class BoardView:
    """A board as the page draws it: its columns, and each row's value in each."""

    board: Leaderboard
    columns: list[ColumnHead]
    rows: list[tuple[LeaderboardRow, list[tuple[float | None, int | None]]]]
    # A multi-task board's grouped headers: (task title, or "" over the phase's own columns,
    # how many columns it spans), in column order; empty for a single-task board.
    groups: list[tuple[str, int]] = field(default_factory=list)


def _query(
    phase: str | None,
    board: str,
    sort: str | None,
    page: int | None = None,
    task: str | None = None,
) -> str:
    params = {"phase": phase, "board": board, "task": task, "sort": sort, "page": page}
    return "?" + urlencode({k: v for k, v in params.items() if v is not None})


def _groups(board: Leaderboard, heads: list[ColumnHead]) -> list[tuple[str, int]]:
    if not board.tasks or board.task is not None:
        return []
    titles = {t["key"]: t["title"] for t in board.tasks}
    groups: list[tuple[str, int]] = []
    for head, after in zip(heads, [None, *heads], strict=False):
        if after is not None and after.task == head.task and groups:
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((titles.get(head.task or "", ""), 1))
    return groups


def board_view(board: Leaderboard, *, phase: str | None, ladder: bool) -> BoardView:
    """The columns (each header a link sorting by it) and the cells; on a Ladder board only the
    ranking column, at what the Ladder released."""
    columns = board.columns[:1] if ladder else board.columns
    heads = [
        ColumnHead(
            key=c["key"],
            title=c["title"] or c["key"],
            hidden=bool(c.get("hidden")),
            direction=c.get("direction") or board.direction,
            digits=digits(c.get("precision"), board.score_decimals),
            href=_query(phase, board.board, None if i == 0 else c["key"], task=board.task),
            sorted=c["key"] == board.sort,
            task=c.get("task"),
        )
        for i, c in enumerate(columns)
    ]

    def cells(row: LeaderboardRow) -> list[tuple[float | None, int | None]]:
        if ladder or not row.scores:
            # The ranking column's value is the row's score (a Ladder's released one).
            return [(row.score if i == 0 else None, h.digits) for i, h in enumerate(heads)]
        return [(row.scores.get(h.key), h.digits) for h in heads]

    rows = [(row, cells(row)) for row in board.rows]
    return BoardView(board, heads, rows, [] if ladder else _groups(board, heads))


def board_page(
    session: Session,
    *,
    competition: Competition,
    viewer: User,
    is_host: bool,
    board: Board,
    page: int,
    phase_name: str | None,
    sort: str | None,
    settings: Settings,
    task: str | None = None,
) -> dict[str, Any]:
    """The Leaderboard tab's context for one phase's board (``viewer``: the host, or the
    participant's view for everyone else)."""
    now = datetime.now(UTC)
    # The API's default: a board the reader may read, an open public phase's first.
    phase = (
        board_phase(competition, phase_name)
        if is_host
        else readable_phase(session, competition, phase_name, None)
    )
    several = len(competition.phases) > 1
    link_phase = phase.name if several else None
    closed = phase.has_ended(now)
    private_open = closed or is_host
    if board == "private" and not private_open:
        board = "public"
    page = max(page, 1)
    # A page past the last is an empty page; its offset stays within the database's integers.
    offset = min((page - 1) * BOARD_PAGE_SIZE, MAX_INT)
    context: dict[str, Any] = {
        "phase": phase,
        "phase_tabs": phase_tabs(competition, phase, f"/c/{competition.slug}/leaderboard", now),
        "several_phases": several,
        "private_open": private_open,
        "closed": closed,
        "switch": {b: _query(link_phase, b, sort, task=task) for b in ("public", "private")},
        # A multi-task phase's boards: every task side by side, or one task at a time.
        "task": task,
        "task_links": [(None, "All tasks", _query(link_phase, board, None))]
        + [
            (t["key"], t.get("title") or t["key"], _query(link_phase, board, None, task=t["key"]))
            for t in phase.tasks or ()
        ]
        if phase.tasks
        else [],
        "refusal": None,
        "chart": None,
        "legend": [],
        "shake": None,
    }

    def read(which: Board, limit: int, at: int) -> Leaderboard:
        return leaderboard(
            session,
            competition=competition,
            board=which,
            user=viewer,
            limit=limit,
            offset=at,
            phase_name=phase.name,
            sort=sort,
            task=task,
        )

    try:
        moves: dict[str, int | None] = {}
        if board == "private":
            # The public board beside a private page gives each team's public rank.
            head = read("public", MAX_PAGE, 0)
            shown = read("private", BOARD_PAGE_SIZE, offset)
            moves = {row.team: row.rank for row in head.rows}
        else:
            shown = read("public", BOARD_PAGE_SIZE, offset)
            # The board's head gives the chart's teams.
            head = shown if offset == 0 else read("public", 2 * CHART_TEAMS, 0)
    except (BoardBlind, BoardHidden) as refused:
        # Nothing of any score: the message says when the board opens, or who it is for.
        context["refusal"] = refused
        return context
    ladder = board == "public" and hides_public_scores(competition, is_host)
    view = board_view(shown, phase=link_phase, ladder=ladder)
    chart, legend = _chart(session, competition, phase, head, ladder=ladder, now=now)
    return {
        **context,
        "board": shown,
        "view": view,
        # The entry details the phase puts on its board (participants' words, escaped).
        "detail_columns": [
            (f["key"], f.get("title") or f["key"].replace("_", " ").capitalize())
            for f in phase.entry_fields or []
            if f.get("on_board")
        ],
        "rows": shown.rows,
        "page": page,
        "pages": max(1, -(-shown.total // BOARD_PAGE_SIZE)),
        "page_link": {
            p: _query(link_phase, board, sort, p, task=task) for p in (page - 1, page + 1)
        },
        "moves": moves,
        "honest": any(row.interval or row.band for row in shown.rows),
        "chart": chart,
        "legend": legend,
        "shake": _shakeup(session, competition, viewer, settings, phase) if closed else None,
    }


def _chart(
    session: Session,
    competition: Competition,
    phase: Phase,
    head: Leaderboard,
    *,
    ladder: bool,
    now: datetime,
) -> tuple[Markup | None, list[tuple[str, str]]]:
    """The best public score over time of the board's top teams; none on a Ladder board (the
    history holds exact public scores)."""
    if ladder or (head.columns and (head.columns[0].get("computed") or {}).get("op") in BOARD_OPS):
        # An average rank exists only over a board: no score of a team's own to follow.
        return None, []
    top = [row.team for row in head.rows if not row.baseline][:CHART_TEAMS]
    series = best_public_over_time(session, competition=competition, team_names=top, phase=phase)
    if head.score_decimals is not None:
        series = {
            team: [(t, rounded(v, head.score_decimals)) for t, v in points]
            for team, points in series.items()
        }
    chart = score_over_time(
        series,
        maximize=head.direction == "maximize",
        metric=head.columns[0]["title"] if head.columns else head.metric,
        end=min(now, phase.end or now),
    )
    return chart, [(team, PALETTE[i % len(PALETTE)]) for i, team in enumerate(series)]


def _shakeup(
    session: Session, competition: Competition, viewer: User, settings: Settings, phase: Phase
) -> ShakeupPublic | None:
    """The shake-up report under the board once the phase is over."""
    try:
        return shakeup_report(
            session, competition=competition, user=viewer, settings=settings, phase=phase
        )
    except AppError:
        return None  # no key yet: nothing to report
