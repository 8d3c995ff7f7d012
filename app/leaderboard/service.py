"""Ranking teams. Public: each team's best public score. Private: the best private score among
the team's selected submissions, or that of its best public submission when it selected none
(Kaggle's rule). Equal scores: the earlier submission ranks first."""

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.errors import Forbidden
from app.leaderboard.schemas import Board, Leaderboard, LeaderboardRow
from app.competitions.metric import metric_for
from app.models import Competition, Score, Submission, SubmissionStatus, Team, User


@dataclass(frozen=True)
class _Entry:
    team_id: int
    submission_id: int
    created_at: datetime
    selected: bool
    public: float | None
    private: float | None


def _better(a: float, b: float, maximize: bool) -> bool:
    return a > b if maximize else a < b


def _pick(entries: list[_Entry], value, maximize: bool) -> _Entry | None:  # type: ignore[no-untyped-def]
    """The entry with the best value; on equal values, the earliest submission."""
    best: _Entry | None = None
    for entry in sorted(entries, key=lambda e: (e.created_at, e.submission_id)):
        v = value(entry)
        if v is None:
            continue
        if best is None or _better(v, value(best), maximize):
            best = entry
    return best


def check_board_access(competition: Competition, board: Board, user: User) -> None:
    if board == "private" and not user.is_organiser:
        if not competition.is_past_deadline(datetime.now(UTC)):
            raise Forbidden("the private leaderboard opens to participants after the deadline")


def leaderboard(
    session: Session, *, competition: Competition, board: Board, user: User
) -> Leaderboard:
    check_board_access(competition, board, user)
    metric = metric_for(competition)
    maximize = metric.greater_is_better
    key = competition.board_key
    rows: list[LeaderboardRow] = []
    if key is not None:
        rows = _rank(session, competition=competition, key_id=key.id, board=board, maximize=maximize)
    return Leaderboard(
        competition=competition.slug,
        board=board,
        metric=metric.name,
        direction=metric.direction,
        answer_key_version=key.version if key else None,
        rows=rows,
    )


def _rank(
    session: Session, *, competition: Competition, key_id: int, board: Board, maximize: bool
) -> list[LeaderboardRow]:
    query = (
        select(
            Submission.team_id,
            Submission.id,
            Submission.created_at,
            Submission.selected,
            Score.public_score,
            Score.private_score,
        )
        .join(Score, (Score.submission_id == Submission.id) & (Score.answer_key_id == key_id))
        .where(
            Submission.competition_id == competition.id,
            Submission.status == SubmissionStatus.scored,
        )
    )
    if competition.deadline is not None:
        # Late submissions are scored for their team but never ranked.
        query = query.where(Submission.created_at < competition.deadline)
    by_team: dict[int, list[_Entry]] = {}
    for row in session.execute(query):
        by_team.setdefault(row[0], []).append(_Entry(*row))

    chosen: list[tuple[int, _Entry, float]] = []
    for team_id, entries in by_team.items():
        best_public = _pick(entries, lambda e: e.public, maximize)
        if board == "public":
            entry, value = best_public, best_public.public if best_public else None
        else:
            selected = [e for e in entries if e.selected]
            entry = _pick(selected, lambda e: e.private, maximize) if selected else best_public
            value = entry.private if entry else None
        if entry is not None and value is not None:
            chosen.append((team_id, entry, value))

    sign = -1.0 if maximize else 1.0
    chosen.sort(key=lambda c: (sign * c[2], c[1].created_at, c[1].submission_id))
    stats = _team_stats(session, competition, [c[0] for c in chosen])
    return [
        LeaderboardRow(
            rank=rank,
            team=stats[team_id][0],
            score=value,
            entries=stats[team_id][1],
            last_submission_at=stats[team_id][2],
        )
        for rank, (team_id, _entry, value) in enumerate(chosen, start=1)
    ]


def _team_stats(
    session: Session, competition: Competition, team_ids: list[int]
) -> dict[int, tuple[str, int, datetime]]:
    if not team_ids:
        return {}
    rows = session.execute(
        select(Team.id, Team.name, func.count(Submission.id), func.max(Submission.created_at))
        .join(Submission, Submission.team_id == Team.id)
        .where(Team.id.in_(team_ids), Submission.competition_id == competition.id)
        .group_by(Team.id, Team.name)
    )
    return {
        team_id: (name, count, _aware(last)) for team_id, name, count, last in rows
    }


def _aware(value: datetime) -> datetime:
    # Aggregates bypass the column type, so SQLite hands back naive strings/datetimes.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)
