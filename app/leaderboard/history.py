"""How the board got where it is: each team's best public score after each of its submissions
(what the leaderboard chart draws). The same rows as the public board: hidden and late
submissions and banned teams are left out."""

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.competitions.metric import metric_for
from app.models import Competition, Score, Submission, Team


def best_public_over_time(
    session: Session, *, competition: Competition, team_names: list[str]
) -> dict[str, list[tuple[datetime, float]]]:
    """For each named team, (time, best public score so far) at each submission that improved it."""
    key = competition.board_key
    if key is None or not team_names:
        return {}
    maximize = metric_for(competition).greater_is_better
    rows = session.execute(
        select(Team.name, Submission.created_at, Score.public_score)
        .join(Submission, Submission.team_id == Team.id)
        .join(Score, (Score.submission_id == Submission.id) & (Score.answer_key_id == key.id))
        .where(
            Team.competition_id == competition.id,
            Team.name.in_(team_names),
            Team.banned_at.is_(None),
            Submission.hidden.is_(False),
            Submission.late.is_(False),
            Score.public_score.is_not(None),
        )
        .order_by(Submission.created_at, Submission.id)
    )
    series: dict[str, list[tuple[datetime, float]]] = {name: [] for name in team_names}
    for name, created_at, value in rows:
        points = series[name]
        if not points or (value > points[-1][1] if maximize else value < points[-1][1]):
            points.append((created_at, value))
    return {name: points for name, points in series.items() if points}
