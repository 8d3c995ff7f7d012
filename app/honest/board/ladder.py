"""What the Ladder shows: each team's released public score, replayed from the stored exact
scores in submission order (so no state can drift), and after each of its submissions.

``ladder``: threshold and grid are the competition's step (default 1/√n_public). ``ladder_free``:
the threshold is the paired standard error the scoring queue stored with the score (against the
team's best at the time; :mod:`app.jobs.honest`) and the grid 1/n_public; without one (a metric
with neither a per-row decomposition nor a bootstrap) it falls back to the fixed step, and a score
whose standard error is still being computed is not released yet. Hidden and late submissions take no part (a late one is never
ranked, and once the competition is over its exact score gives nothing away); the Ladder starts
from the best visible baseline's public score.
"""

import functools
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, Row, bindparam, func, or_, select
from sqlalchemy.orm import Session

from app.evaluation.metric import metric_for
from app.honest.engine.ladder import LadderState, advance, default_step
from app.models import AnswerKey, Competition, Score, ScoreStats, Submission, SubmissionStatus


@dataclass
class TeamLadder:
    state: LadderState
    # (created_at, id) of the submission whose release the board shows: the tie-break.
    released_at: tuple[datetime, int] | None = None
    shown: dict[int, float | None] = field(default_factory=dict)  # after each submission
    released: dict[int, bool] = field(default_factory=dict)


def uses_ladder(competition: Competition) -> bool:
    return competition.public_board_mode in ("ladder", "ladder_free")


def step(competition: Competition, key: AnswerKey) -> float:
    return competition.ladder_step or default_step(max(key.n_public or key.n_rows, 1))


@functools.cache
def _history(by_team: bool):  # type: ignore[no-untyped-def]
    """The scored, visible submissions of a competition on a key version, in submission order
    (parameters ``competition_id``, ``key_id`` and with ``by_team`` ``team_ids``), each with the
    file its predictions are in. Built once per shape: the scorer replays a team after each of
    its submissions."""
    query = (
        select(
            Submission.id,
            Submission.team_id,
            Submission.created_at,
            Submission.baseline,
            Score.public_score,
            ScoreStats.id.label("stats_id"),
            ScoreStats.ladder_threshold,
            func.coalesce(Submission.output_path, Submission.path).label("predictions"),
        )
        .join(
            Score,
            (Score.submission_id == Submission.id)
            & (Score.answer_key_id == bindparam("key_id", type_=Integer)),
        )
        .outerjoin(ScoreStats, ScoreStats.score_id == Score.id)
        .where(
            Submission.competition_id == bindparam("competition_id", type_=Integer),
            Submission.hidden.is_(False),
            Submission.late.is_(False),
            Submission.status == SubmissionStatus.scored,
        )
        .order_by(Submission.created_at, Submission.id)
    )
    if by_team:
        # The teams asked for and the baselines (the Ladder's start), not the whole board.
        teams = bindparam("team_ids", expanding=True)
        query = query.where(or_(Submission.team_id.in_(teams), Submission.baseline.is_(True)))
    return query


def history(
    session: Session,
    *,
    competition: Competition,
    key: AnswerKey,
    team_ids: Collection[int] | None = None,
) -> list[Row[Any]]:
    """What a replay reads: the competition's scored, visible submissions on ``key`` (with
    ``team_ids``, those teams' and the baselines), in submission order."""
    params: dict[str, object] = {"competition_id": competition.id, "key_id": key.id}
    if team_ids is not None:
        params["team_ids"] = sorted(team_ids)
    return list(session.execute(_history(team_ids is not None), params).all())


def replay(
    session: Session,
    *,
    competition: Competition,
    key: AnswerKey,
    team_ids: list[int] | None = None,
    mode: str | None = None,
) -> dict[int, TeamLadder]:
    """Every team's Ladder on ``key`` (``mode`` defaults to the competition's)."""
    rows = history(session, competition=competition, key=key, team_ids=team_ids)
    return replay_rows(rows, competition=competition, key=key, team_ids=team_ids, mode=mode)


def replay_rows(
    rows: list[Row[Any]],
    *,
    competition: Competition,
    key: AnswerKey,
    team_ids: Collection[int] | None = None,
    mode: str | None = None,
    thresholds: dict[int, float | None] | None = None,
) -> dict[int, TeamLadder]:
    """:func:`replay` over rows :func:`history` read. ``thresholds``: the stats written since
    (submission id: its standard error), as if the rows had been read after them (the scorer
    replays each of a batch's teams after each of its submissions from one read)."""
    maximize = metric_for(competition).greater_is_better
    fixed = step(competition, key)
    free = (mode or competition.public_board_mode) == "ladder_free"
    grid = 1.0 / max(key.n_public or key.n_rows, 1) if free else fixed
    written = thresholds or {}
    baselines = [r.public_score for r in rows if r.baseline and r.public_score is not None]
    start = (max(baselines) if maximize else min(baselines)) if baselines else None
    ladders: dict[int, TeamLadder] = {}
    for row in rows:
        if row.baseline or (team_ids is not None and row.team_id not in team_ids):
            continue
        ladder = ladders.setdefault(row.team_id, TeamLadder(LadderState.start(start, grid)))
        threshold: float | None = fixed
        if free:
            if row.id in written:
                found = written[row.id]
                threshold = found if found is not None else fixed
            elif row.stats_id is None:
                threshold = None  # its standard error is still being computed
            elif row.ladder_threshold is not None:
                threshold = row.ladder_threshold
        released = False
        if row.public_score is not None and threshold is not None:
            ladder.state, released = advance(
                ladder.state,
                row.public_score,
                threshold=threshold,
                grid=grid,
                greater_is_better=maximize,
                submission=row.id,
            )
        if released:
            ladder.released_at = (row.created_at, row.id)
        ladder.shown[row.id] = ladder.state.displayed
        ladder.released[row.id] = released
    return ladders


def best_baseline(rows: list[Row[Any]], competition: Competition) -> Row[Any] | None:
    """The best visible baseline among :func:`history`'s rows (the earliest of equals)."""
    maximize = metric_for(competition).greater_is_better
    best = None
    for row in rows:
        if not row.baseline or row.public_score is None:
            continue
        if best is None or (
            row.public_score > best.public_score
            if maximize
            else row.public_score < best.public_score
        ):
            best = row
    return best
