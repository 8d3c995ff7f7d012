"""Comparisons of two submissions and the shake-up report, from the stored score stats."""

import math
import threading
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.hosts import is_host
from app.config import Settings
from app.errors import Conflict, Forbidden, NotFound, Unprocessable
from app.evaluation.keys import key_table, stored_predictions
from app.evaluation.metric import is_custom, metric_for
from app.evaluation.rounding import rounded, shown_decimals
from app.honest.analysis.schemas import ComparisonPublic, ShakeupPublic, SplitComparison
from app.honest.board.board import stats_of
from app.honest.board.codec import from_bytes
from app.honest.board.ladder import uses_ladder
from app.honest.engine.compare import compare
from app.honest.engine.plans import make_plan, supports_intervals
from app.honest.engine.replicates import Replicates
from app.honest.engine.shakeup import null_gaps, shakeup
from app.leaderboard.service import refuse_hidden_board, standings
from app.models import AnswerKey, Competition, Phase, Score, Submission, Team, User
from app.scoring.intake import IGNORED, PUBLIC
from app.teams.service import find_team

RESPLITS = 1000


def _board_key(phase: Phase) -> AnswerKey:
    key = phase.board_key
    if key is None:
        raise Conflict(f"phase '{phase.name}' has no answer key yet")
    return key


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _scores(session: Session, key_id: int, ids: list[int]) -> dict[int, Score]:
    rows = session.scalars(
        select(Score).where(Score.answer_key_id == key_id, Score.submission_id.in_(ids))
    )
    return {row.submission_id: row for row in rows}


def compare_submissions(
    session: Session, *, competition: Competition, user: User, a: int, b: int
) -> ComparisonPublic:
    """Hosts compare any pair of one phase on both splits; a participant two of their team's
    submissions on the public split, and not on a Ladder board nor on a blind or hidden phase's
    (the difference would give the scores away)."""
    host = is_host(session, competition, user)
    team = None if host else find_team(session, competition=competition, user=user)
    phases = set()
    for sid in (a, b):
        submission = session.get(Submission, sid)
        visible = submission is not None and submission.competition_id == competition.id
        if not visible or (not host and (team is None or submission.team_id != team.id)):  # type: ignore[union-attr]
            raise NotFound(f"no submission {sid} in this competition")
        phases.add(submission.phase)  # type: ignore[union-attr]
    if len(phases) > 1:
        raise Unprocessable("submissions of two phases are scored on two keys: compare within one")
    phase = phases.pop()
    if not host:
        refuse_hidden_board(phase, datetime.now(UTC))
    if not host and uses_ladder(competition):
        raise Forbidden(
            "this competition's public board is a Ladder: exact comparisons are for its hosts"
        )
    if not competition.score_intervals:
        raise Conflict("score intervals are turned off for this competition")
    key = _board_key(phase)
    found = stats_of(session, key_id=key.id, submission_ids=[a, b])
    scores = _scores(session, key.id, [a, b])
    if a not in found or b not in found:
        raise Conflict("both submissions need their intervals first (computed after scoring)")
    metric = metric_for(competition)
    decimals = shown_decimals(competition, host=host)
    rows = []
    for split in ("public", "private") if host else ("public",):
        ra = from_bytes(getattr(found[a], f"{split}_replicates"))
        rb = from_bytes(getattr(found[b], f"{split}_replicates"))
        score_a = getattr(scores[a], f"{split}_score")
        score_b = getattr(scores[b], f"{split}_score")
        if ra is None or rb is None or ra.shape != rb.shape or score_a is None or score_b is None:
            continue
        result = compare(
            Replicates(score_a, ra, np.empty(0)),
            Replicates(score_b, rb, np.empty(0)),
            greater_is_better=metric.greater_is_better,
        )
        d = result.difference
        # Rounded as the scores are, p-value included: with every digit of the difference
        # and its standard error a participant reads the scores past score_decimals.
        rows.append(
            SplitComparison(
                split=split,
                a_score=rounded(score_a, decimals),
                b_score=rounded(score_b, decimals),
                difference=rounded(d.point, decimals),
                low=rounded(d.low, decimals),
                high=rounded(d.high, decimals),
                se=rounded(d.se, decimals),
                p_value=rounded(result.p_value, decimals),
                replicates=d.replicates,
            )
        )
    if not rows:
        raise Conflict("this metric has no intervals, so the submissions cannot be compared")
    return ComparisonPublic(
        a=a,
        b=b,
        metric=metric.name,
        direction=metric.direction,
        answer_key_version=key.version,
        comparisons=rows,
    )


_cache: dict[tuple[Any, ...], ShakeupPublic] = {}
_lock = threading.Lock()


def shakeup_report(
    session: Session,
    *,
    competition: Competition,
    user: User,
    settings: Settings,
    phase: Phase | None = None,
) -> ShakeupPublic:
    """The shake-up of a phase's final boards (default: the current phase): hosts any time,
    everyone once the phase has ended (with its score-valued figures rounded to the
    competition's decimals), never a participant on a hidden phase's board."""
    phase = phase or competition.current_phase
    assert phase is not None  # every competition has a phase
    host = is_host(session, competition, user)
    now = datetime.now(UTC)
    if not host:
        refuse_hidden_board(phase, now)
        if not phase.has_ended(now):
            raise Forbidden("the shake-up report opens after the deadline")
    return _rounded_report(
        _shakeup(session, competition=competition, settings=settings, key=_board_key(phase)),
        shown_decimals(competition, host=host),
    )


# The report's figures in the metric's units (the rank statistics and p-value are not).
_SCORE_FIELDS = ("gap", "gap_low", "gap_high", "null_p95", "null_mean")


def _rounded_report(report: ShakeupPublic, decimals: int | None) -> ShakeupPublic:
    if decimals is None:
        return report
    rows = [
        {
            name: rounded(value, decimals)
            if name.endswith("_score") and isinstance(value, float)
            else value
            for name, value in row.items()
        }
        for row in report.rows
    ]
    figures = {name: rounded(getattr(report, name), decimals) for name in _SCORE_FIELDS}
    return report.model_copy(update={"rows": rows, **figures})


def _shakeup(
    session: Session, *, competition: Competition, settings: Settings, key: AnswerKey
) -> ShakeupPublic:
    """The full-precision report on one key version, kept per set of final submissions."""
    metric = metric_for(competition)
    public = {
        s.team_id: s
        for s in standings(session, competition=competition, key_id=key.id, board="public")
        if s.rank is not None
    }
    private = {
        s.team_id: s
        for s in standings(session, competition=competition, key_id=key.id, board="private")
        if s.rank is not None
    }
    teams = sorted(set(public) & set(private))
    finals = [private[t].submission_id for t in teams]
    ident = (competition.id, key.id, tuple(finals), competition.score_intervals)
    with _lock:
        if ident in _cache:
            return _cache[ident]
    scores = _scores(session, key.id, finals)
    pub = np.array([scores[s].public_score for s in finals], dtype=np.float64)
    priv = np.array([scores[s].private_score for s in finals], dtype=np.float64)
    usable = np.isfinite(pub) & np.isfinite(priv)
    teams = [t for t, ok in zip(teams, usable, strict=True) if ok]
    finals = [s for s, ok in zip(finals, usable, strict=True) if ok]
    pub, priv = pub[usable], priv[usable]
    null = _null(competition, key, finals, session, settings)
    pub_reps = priv_reps = None
    if competition.score_intervals:
        found = stats_of(session, key_id=key.id, submission_ids=finals)
        reps = [
            (from_bytes(found[s].public_replicates), from_bytes(found[s].private_replicates))
            if s in found
            else (None, None)
            for s in finals
        ]
        if finals and all(p is not None and q is not None for p, q in reps):
            pub_reps = np.stack([p for p, _ in reps])  # type: ignore[misc]
            priv_reps = np.stack([q for _, q in reps])  # type: ignore[misc]
    names = _team_names(session, teams)
    rows: list[dict[str, str | int | float | None]] = [
        {
            "team": names.get(t, str(t)),
            "public_rank": public[t].rank,
            "private_rank": private[t].rank,
            "public_score": float(p),
            "private_score": float(q),
        }
        for t, p, q in zip(teams, pub, priv, strict=True)
    ]
    out: dict[str, Any] = dict.fromkeys(
        (
            "spearman kendall mean_abs_rank_change mean_abs_rank_change_top gap gap_low gap_high "
            "null_p95 null_mean p_value adaptive_overfitting"
        ).split()
    )
    if len(finals) >= 2:
        report = shakeup(
            pub,
            priv,
            greater_is_better=metric.greater_is_better,
            null=null if null is not None else np.zeros(1),
            public_replicates=pub_reps,
            private_replicates=priv_reps,
        )
        out.update(
            {k: _finite(v) if isinstance(v, float) else v for k, v in report.as_dict().items()}
        )
        out.pop("teams", None)
        if null is None:
            out.update(null_p95=None, null_mean=None, p_value=None, adaptive_overfitting=None)
    result = ShakeupPublic(
        metric=metric.name,
        direction=metric.direction,
        answer_key_version=key.version,
        teams=len(finals),
        rows=rows,
        **out,
    )
    with _lock:
        _cache[ident] = result
        while len(_cache) > 32:
            _cache.pop(next(iter(_cache)))
    return result


def _team_names(session: Session, team_ids: list[int]) -> dict[int, str]:
    rows = session.execute(select(Team.id, Team.name).where(Team.id.in_(team_ids)))
    return {team_id: name for team_id, name in rows}


def _null(
    competition: Competition,
    key: AnswerKey,
    finals: list[int],
    session: Session,
    settings: Settings,
) -> np.ndarray | None:
    """Gaps over random re-splits of the counted rows, from the final submissions' files."""
    if len(finals) < 2 or is_custom(competition) or not supports_intervals(competition.metric_name):
        return None
    metric = metric_for(competition)
    params = metric.parse_params(competition.metric_params)
    table = key_table(competition, key, settings)
    if table.usage is None:
        return None
    counted = table.usage != IGNORED
    public_mask = (table.usage == PUBLIC)[counted]
    if public_mask.all() or not public_mask.any():
        return None
    plans = []
    for sid in finals:
        path = session.scalar(select(Submission.path).where(Submission.id == sid))
        y_pred = stored_predictions(str(path), table=table, metric=metric, settings=settings)
        plans.append(make_plan(metric.name, params, table.y_true[counted], y_pred[counted]))
    return null_gaps(
        plans,
        public_mask,
        greater_is_better=metric.greater_is_better,
        resplits=RESPLITS,
        seed=int.from_bytes(key.sha256.encode()[:8], "little"),
    )
