"""The honest parts of a board and of a submission view: the Ladder's released values for
participants, and each row's interval and rank band.

Rank bands take the whole board (Holm over every pair of ranked rows), so the scoring queue
computes them after each score (:func:`app.jobs.honest.refresh_bands`, seconds for a few thousand teams) and a
board page only reads them: a row whose submission arrived since has no band until the next
refresh. Bands cover the best :data:`app.jobs.honest.BAND_TEAMS` ranked rows of a board.
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.honest.board.ladder import replay, uses_ladder
from app.models import AnswerKey, BoardBands, Competition, Score, ScoreStats, Submission

# The Holm family of a board's bands: its best-ranked rows, at most this many (about 5 s on two
# cores for 5,000 teams in the queue; bench/bench_bands.py).


def hides_public_scores(competition: Competition, is_host: bool) -> bool:
    """True when this caller must see only what the Ladder released."""
    return uses_ladder(competition) and not is_host


@dataclass(frozen=True)
class RowStats:
    interval: dict[str, Any] | None
    band: int | None


def stats_of(session: Session, *, key_id: int, submission_ids: list[int]) -> dict[int, ScoreStats]:
    if not submission_ids:
        return {}
    rows = session.execute(
        select(Score.submission_id, ScoreStats)
        .join(ScoreStats, ScoreStats.score_id == Score.id)
        .where(Score.answer_key_id == key_id, Score.submission_id.in_(submission_ids))
    )
    return {submission_id: stats for submission_id, stats in rows}


def row_stats(
    session: Session,
    *,
    competition: Competition,
    key_id: int,
    board: str,
    submission_ids: list[int],
    stored: BoardBands | None,
) -> dict[int, RowStats]:
    """Interval of each shown submission, and its band as the queue last computed it
    (``stored``, the board's :func:`stored_bands`)."""
    if not competition.score_intervals:
        return {}
    intervals: dict[int, Any] = {}
    if submission_ids:
        # The interval only: the stats row also holds the bootstrap replicates.
        interval = getattr(ScoreStats, f"{board}_interval")
        rows = session.execute(
            select(Score.submission_id, interval)
            .join(ScoreStats, ScoreStats.score_id == Score.id)
            .where(Score.answer_key_id == key_id, Score.submission_id.in_(submission_ids))
        )
        intervals = {sid: value for sid, value in rows}
    bands = stored.bands if stored is not None else {}
    return {
        sid: RowStats(intervals.get(sid), bands.get(str(sid)))
        for sid in submission_ids
        if sid in intervals or str(sid) in bands
    }


def stored_bands(session: Session, *, key_id: int, board: str) -> BoardBands | None:
    return session.scalar(
        select(BoardBands).where(BoardBands.answer_key_id == key_id, BoardBands.board == board)
    )


def ladder_scores(
    session: Session, *, competition: Competition, key: AnswerKey, team_ids: list[int]
) -> dict[int, tuple[float, tuple[Any, int] | None]]:
    """Each team's shown public score, and the (time, id) of the submission that released it
    (None while the team has not beaten the baseline it starts from)."""
    out = {}
    for team_id, ladder in replay(
        session, competition=competition, key=key, team_ids=team_ids
    ).items():
        if ladder.state.displayed is not None:
            out[team_id] = (ladder.state.displayed, ladder.released_at)
    return out


def submission_ladder(
    session: Session, *, submission: Submission, competition: Competition
) -> tuple[float | None, bool | None]:
    """What the Ladder showed the team after this submission, and whether it moved the board
    (the board of the submission's own phase)."""
    key = submission.phase.board_key
    if key is None:
        return None, None
    # A submission list asks once per submission: replay each team once per session.
    memo = session.info.setdefault("ladder_replays", {})
    ident = (competition.id, key.id, submission.team_id, competition.public_board_mode)
    if ident not in memo:
        memo[ident] = replay(
            session, competition=competition, key=key, team_ids=[submission.team_id]
        ).get(submission.team_id)
    ladder = memo[ident]
    if ladder is None or submission.id not in ladder.shown:
        return None, None
    return ladder.shown[submission.id], ladder.released[submission.id]
