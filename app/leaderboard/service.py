"""Ranking teams. Public: each team's best public score. Private: the best private score among
the team's selected submissions, or that of its best public submission when it selected none
(Kaggle's rule). Equal scores: the earlier submission ranks first. Hidden submissions, banned
teams and late submissions never rank; organisers' baseline entries show without a rank."""

from dataclasses import dataclass, replace
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.competitions.metric import metric_for
from app.errors import Forbidden
from app.leaderboard.schemas import Board, Leaderboard, LeaderboardRow
from app.models import AnswerKey, Competition, Score, Submission, Team, User
from app.stats.board import hides_public_scores, ladder_scores, row_stats


@dataclass(frozen=True)
class Entry:
    team_id: int
    submission_id: int
    created_at: datetime
    selected: bool
    baseline: bool
    public: float | None
    private: float | None


@dataclass(frozen=True)
class Standing:
    team_id: int
    entry: Entry
    score: float
    rank: int | None


def _better(a: float, b: float, maximize: bool) -> bool:
    return a > b if maximize else a < b


def _pick(entries: list[Entry], value, maximize: bool) -> Entry | None:  # type: ignore[no-untyped-def]
    """The entry with the best value; on equal values, the earliest submission."""
    best: Entry | None = None
    for entry in sorted(entries, key=lambda e: (e.created_at, e.submission_id)):
        v = value(entry)
        if v is not None and (best is None or _better(v, value(best), maximize)):
            best = entry
    return best


def check_board_access(competition: Competition, board: Board, user: User) -> None:
    if board == "private" and not user.is_organiser:
        if not competition.is_past_deadline(datetime.now(UTC)):
            raise Forbidden("the private leaderboard opens to participants after the deadline")


def standings(
    session: Session, *, competition: Competition, key_id: int, board: Board
) -> list[Standing]:
    """Every ranked team's standing on one board, computed from one answer-key version."""
    maximize = metric_for(competition).greater_is_better
    query = (
        select(
            Submission.team_id,
            Submission.id,
            Submission.created_at,
            Submission.selected,
            Submission.baseline,
            Score.public_score,
            Score.private_score,
        )
        .join(Score, (Score.submission_id == Submission.id) & (Score.answer_key_id == key_id))
        .join(Team, Team.id == Submission.team_id)
        .where(
            Submission.competition_id == competition.id,
            Submission.hidden.is_(False),
            Submission.late.is_(False),
            Team.banned_at.is_(None),
        )
    )
    by_team: dict[int, list[Entry]] = {}
    for row in session.execute(query):
        by_team.setdefault(row[0], []).append(Entry(*row))

    chosen: list[tuple[int, Entry, float]] = []
    for team_id, entries in by_team.items():
        best_public = _pick(entries, lambda e: e.public, maximize)
        if board == "public":
            entry = best_public
            value = entry.public if entry else None
        else:
            selected = [e for e in entries if e.selected]
            entry = _pick(selected, lambda e: e.private, maximize) if selected else best_public
            value = entry.private if entry else None
        if entry is not None and value is not None:
            chosen.append((team_id, entry, value))

    sign = -1.0 if maximize else 1.0
    chosen.sort(key=lambda c: (sign * c[2], c[1].created_at, c[1].submission_id))
    result, rank = [], 0
    for team_id, entry, value in chosen:
        if not entry.baseline:
            rank += 1
        result.append(Standing(team_id, entry, value, None if entry.baseline else rank))
    return result


def leaderboard(
    session: Session, *, competition: Competition, board: Board, user: User
) -> Leaderboard:
    check_board_access(competition, board, user)
    metric = metric_for(competition)
    key = competition.board_key
    decimals = None if user.is_organiser else competition.score_decimals
    rows: list[LeaderboardRow] = []
    if key is not None:
        ranked = standings(session, competition=competition, key_id=key.id, board=board)
        laddered = board == "public" and hides_public_scores(competition, user.is_organiser)
        if laddered:
            ranked = ladder_standings(session, competition=competition, key=key, ranked=ranked)
        stats = team_stats(session, competition, [s.team_id for s in ranked])
        # Intervals and bands read the exact scores: not shown on a Ladder board.
        honest = {}
        if not laddered:
            entries = [(s.entry.submission_id, s.score, s.rank is not None) for s in ranked]
            honest = row_stats(
                session, competition=competition, key_id=key.id, board=board, entries=entries
            )
        rows = [
            LeaderboardRow(
                rank=s.rank,
                team=stats[s.team_id][0],
                score=s.score if decimals is None else round(s.score, decimals),
                entries=stats[s.team_id][1],
                last_submission_at=stats[s.team_id][2],
                baseline=s.entry.baseline,
                interval=honest[s.entry.submission_id].interval
                if s.entry.submission_id in honest
                else None,
                band=honest[s.entry.submission_id].band
                if s.entry.submission_id in honest
                else None,
            )
            for s in ranked
        ]
    return Leaderboard(
        competition=competition.slug,
        board=board,
        metric=metric.name,
        direction=metric.direction,
        answer_key_version=key.version if key else None,
        score_decimals=decimals,
        public_board_mode=competition.public_board_mode,
        rows=rows,
    )


def team_stats(
    session: Session, competition: Competition, team_ids: list[int]
) -> dict[int, tuple[str, int, datetime]]:
    """Name, entry count and last submission time of each team."""
    if not team_ids:
        return {}
    rows = session.execute(
        select(Team.id, Team.name, func.count(Submission.id), func.max(Submission.created_at))
        .join(Submission, Submission.team_id == Team.id)
        .where(Team.id.in_(team_ids), Submission.competition_id == competition.id)
        .group_by(Team.id, Team.name)
    )
    return {team_id: (name, count, _aware(last)) for team_id, name, count, last in rows}


def _aware(value: datetime | str) -> datetime:
    # Aggregates bypass the column type, so SQLite hands back naive values.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def ladder_standings(
    session: Session, *, competition: Competition, key: AnswerKey, ranked: list[Standing]
) -> list[Standing]:
    """The public board as the Ladder shows it: each team at its released score, ties broken by
    the earlier release; baseline entries keep their score."""
    maximize = metric_for(competition).greater_is_better
    shown = ladder_scores(
        session,
        competition=competition,
        key=key,
        team_ids=[s.team_id for s in ranked if not s.entry.baseline],
    )
    chosen: list[tuple[float, Standing]] = []
    for standing in ranked:
        if standing.entry.baseline:
            chosen.append((standing.score, standing))
            continue
        if standing.team_id not in shown:
            continue
        value, released = shown[standing.team_id]
        entry = standing.entry
        if released is not None:
            entry = replace(entry, created_at=released[0], submission_id=released[1])
        chosen.append((value, replace(standing, entry=entry, score=value)))
    sign = -1.0 if maximize else 1.0
    chosen.sort(key=lambda c: (sign * c[0], c[1].entry.created_at, c[1].entry.submission_id))
    result, rank = [], 0
    for _value, standing in chosen:
        if not standing.entry.baseline:
            rank += 1
        result.append(replace(standing, rank=None if standing.entry.baseline else rank))
    return result
