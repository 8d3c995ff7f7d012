"""A benchmark's board (app.competitions.benchmark), read from the score rows themselves.

Each scored submission stands at its score against the newest published key version that scored
it, and its row names that version: while a new version's rescoring runs, and after it for a
submission the new version could not score, rows of several versions share the board. One row
per team (its best; its latest with ``counts: last``; a benchmark has no final selections, so
``chosen`` reads as ``best``), or with ``board_every_submission`` one row per scored submission.
Baselines stand on rows of their own, unranked, as on every board.

The materialised standings (app.leaderboard.standings) keep one key version per board, so they
cannot say this: the board is one query over the phase's score rows, ranked here.
"""

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.columns import stored_values
from app.leaderboard.ranks import place, with_board_columns
from app.models import AnswerKey, Phase, Score, Submission, SubmissionStatus, Team
from app.models.phase import COUNTS_LAST
from app.scoring.columns import Column

Values = dict[str, dict[str, float | None]]


@dataclass(frozen=True)
class Entry:
    submission_id: int
    team_id: int
    name: str  # the team's, or a baseline's label
    baseline: bool
    submitted_at: datetime
    key_version: int
    score: float
    values: Values
    # The team's submissions on the board's split, and its latest one's time.
    entries: int
    last_submission_at: datetime
    rank: int | None = None
    position: int = 0


def _current(session: Session, phase: Phase, board: str, ranking: Column) -> list[Entry]:
    """Each eligible submission at its newest published version with a value on ``board``."""
    rows = session.execute(
        select(
            Submission.id,
            Submission.team_id,
            Team.name,
            Submission.description,
            Submission.baseline,
            Submission.created_at,
            AnswerKey.version,
            Score.columns,
            Score.score,
            Score.public_score,
            Score.private_score,
        )
        .join(Score, Score.submission_id == Submission.id)
        .join(AnswerKey, AnswerKey.id == Score.answer_key_id)
        .join(Team, Team.id == Submission.team_id)
        .where(
            AnswerKey.phase_id == phase.id,
            AnswerKey.published_at.is_not(None),
            Submission.status == SubmissionStatus.scored,
            Submission.hidden.is_(False),
            Submission.late.is_(False),
            Team.banned_at.is_(None),
        )
        .order_by(Submission.id, AnswerKey.version.desc())
    )
    found: dict[int, Entry] = {}
    for row in rows:
        value = row.public_score if board == "public" else row.private_score
        if row.id in found or value is None:
            continue  # a newer version stands already, or this one has no value on the split
        label = (row.description or "Baseline") if row.baseline else row.name
        found[row.id] = Entry(
            submission_id=row.id,
            team_id=row.team_id,
            name=label,
            baseline=bool(row.baseline),
            submitted_at=row.created_at,
            entries=1,
            last_submission_at=row.created_at,
            key_version=row.version,
            score=value,
            values=stored_values(
                row.columns,
                ranking_key=ranking.key,
                score=row.score,
                public=row.public_score,
                private=row.private_score,
            ),
        )
    return list(found.values())


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _place(entry: Entry, order: list[Column], board: str) -> tuple[Any, ...]:
    return (*place(entry.values, order, board), entry.submitted_at, entry.submission_id)


def _standing(current: list[Entry], phase: Phase, columns: list[Column], board: str) -> list[Entry]:
    """Each team's one standing entry, by the ranking column whatever the board's sort: its
    best, or its latest with ``counts: last``; each baseline on its own."""
    if phase.counts == COUNTS_LAST:
        ordered = sorted(current, key=lambda e: (e.submitted_at, e.submission_id))
    else:
        ordered = sorted(current, key=lambda e: _place(e, columns, board), reverse=True)
    # Each team's entry written last wins: its newest, or its best.
    picked = {e.team_id: e for e in ordered if not e.baseline}
    return [e for e in current if e.baseline] + list(picked.values())


def entries(
    session: Session,
    *,
    phase: Phase,
    board: str,
    columns: list[Column],
    sort: Column,
    every: bool,
) -> list[Entry]:
    """The whole board, ranked by ``sort`` then the other columns in order, then time."""
    current = _current(session, phase, board, columns[0])
    counts: dict[int, int] = {}
    last: dict[int, datetime] = {}
    for e in current:
        if not e.baseline:
            counts[e.team_id] = counts.get(e.team_id, 0) + 1
            last[e.team_id] = max(last.get(e.team_id, e.submitted_at), e.submitted_at)
    shown = current if every else _standing(current, phase, columns, board)
    if any(c.on_board for c in columns):
        # An average rank exists only over the rows shown (the standing entries were picked by
        # the stored score: the submission scored on the most tasks).
        values = with_board_columns(columns, {e.submission_id: e.values for e in shown}, board)
        ranking = columns[0]
        shown = [
            replace(
                e,
                values=values[e.submission_id],
                score=_or(values[e.submission_id][ranking.key][board], e.score)
                if ranking.on_board
                else e.score,
            )
            for e in shown
        ]
    order = [sort] + [c for c in columns if c.key != sort.key]
    result, rank = [], 0
    for position, e in enumerate(sorted(shown, key=lambda e: _place(e, order, board)), start=1):
        if not e.baseline:
            rank += 1
        result.append(
            replace(
                e,
                rank=None if e.baseline else rank,
                position=position,
                entries=counts.get(e.team_id, 1),
                last_submission_at=last.get(e.team_id, e.submitted_at),
            )
        )
    return result
