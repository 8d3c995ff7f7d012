"""How the board got where it is: each team's best public score after each of its submissions
(what the leaderboard chart draws). The same rows as the public board: hidden and late
submissions and banned teams are left out."""

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.metric import metric_for
from app.models import Competition, Phase, Score, Submission, Team


def best_public_over_time(
    session: Session, *, competition: Competition, team_names: list[str], phase: Phase | None = None
) -> dict[str, list[tuple[datetime, float]]]:
    """For each named team, (time, best public score so far) at each submission that improved it,
    on the board of ``phase`` (default: the current one)."""
    key = phase.board_key if phase is not None else competition.board_key
    if key is None or not team_names:
        return {}
    maximize = metric_for(competition).greater_is_better
    team_ids = dict(
        session.execute(
            select(Team.id, Team.name).where(
                Team.competition_id == competition.id,
                Team.name.in_(team_names),
                Team.banned_at.is_(None),
            )
        ).all()
    )
    if not team_ids:
        return {}
    # Start from the few teams' submissions (their team index), then each one's score row. The
    # "+ 0" keeps SQLite's planner, which has no statistics, off the answer-key index: every
    # score of the competition shares that key, so starting there reads them all.
    rows = session.execute(
        select(Submission.team_id, Submission.created_at, Score.public_score)
        .join(Score, (Score.submission_id == Submission.id) & (Score.answer_key_id + 0 == key.id))
        .where(
            Submission.team_id.in_(list(team_ids)),
            Submission.hidden.is_(False),
            Submission.late.is_(False),
            Score.public_score.is_not(None),
        )
        .order_by(Submission.created_at, Submission.id)
    )
    series: dict[str, list[tuple[datetime, float]]] = {name: [] for name in team_names}
    for team_id, created_at, value in rows:
        if value is None:  # (filtered out by the query)
            continue
        points = series[team_ids[team_id]]
        if not points or (value > points[-1][1] if maximize else value < points[-1][1]):
            points.append((created_at, value))
    return {name: points for name, points in series.items() if points}
