"""The honest parts of a board and of a submission view: the Ladder's released values for
participants, and each row's interval and rank band."""

from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.metric import metric_for
from app.honest.compare import rank_bands
from app.models import AnswerKey, Competition, Score, ScoreStats, Submission
from app.stats.jobs import from_bytes
from app.stats.ladder import replay, uses_ladder


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
    entries: list[tuple[int, float, bool]],
) -> dict[int, RowStats]:
    """Interval and band of each (submission id, score, ranked) on a board; bands compare the
    ranked rows that have replicates (Holm over all their pairs)."""
    if not competition.score_intervals:
        return {}
    found = stats_of(session, key_id=key_id, submission_ids=[e[0] for e in entries])
    interval_field = f"{board}_interval"
    replicate_field = f"{board}_replicates"
    out = {
        sid: RowStats(getattr(found[sid], interval_field), None)
        for sid, _, _ in entries
        if sid in found
    }
    ranked = []
    for sid, value, is_ranked in entries:
        reps = from_bytes(getattr(found[sid], replicate_field)) if sid in found else None
        if is_ranked and reps is not None:
            ranked.append((sid, value, reps))
    if len(ranked) == 1:
        sid = ranked[0][0]
        out[sid] = RowStats(out[sid].interval, 1)  # nobody can be better
    elif len(ranked) >= 2 and len({r[2].size for r in ranked}) == 1:
        bands = rank_bands(
            np.array([r[1] for r in ranked]),
            np.stack([r[2] for r in ranked]),
            greater_is_better=metric_for(competition).greater_is_better,
        )
        for (sid, _, _), band in zip(ranked, bands, strict=True):
            out[sid] = RowStats(out[sid].interval, int(band))
    return out


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
    """What the Ladder showed the team after this submission, and whether it moved the board."""
    key = competition.board_key
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
