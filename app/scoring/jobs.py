"""Scoring one submission: claim it, score it outside any transaction, record the outcome.

Safe to run twice for the same submission (a retried Celery task, a recovered thread job):
a finished submission is left alone and a score row already written is never written again.
"""

import logging
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from app.competitions.metric import is_custom, metric_for
from app.config import Settings
from app.custom_metrics.sandbox import CustomMetricFailure
from app.db import unit_of_work
from app.models import AnswerKey, Competition, Score, Submission, SubmissionStatus
from app.scoring.core import ScoreResult, ScoringError, score_submission_file
from app.scoring.custom import score_with_custom_metric
from app.scoring.keys import intake_limits, key_table

log = logging.getLogger(__name__)

GENERIC_FAILURE = "scoring failed because of a problem on our side; the host has been notified"
KEY_FAILURE = "the answer key could not score this submission; the host has been notified"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Outcome:
    result: ScoreResult | None
    error: str | None = None
    host_error: str | None = None
    # Whose fault a failure is decides whether it counts against the team's quota.
    participants_fault: bool = False


def _claim(factory: sessionmaker[Session], submission_id: int) -> int | None:
    """Mark the submission as scoring; return the board key's id, or None if not ours to score."""
    with unit_of_work(factory) as session:
        submission = session.scalar(
            select(Submission).where(Submission.id == submission_id).with_for_update()
        )
        if submission is None or submission.status in (
            SubmissionStatus.scored,
            SubmissionStatus.failed,
        ):
            return None
        competition = session.get(Competition, submission.competition_id)
        key = competition.board_key if competition else None
        if key is None:
            return None
        submission.status = SubmissionStatus.scoring
        submission.started_at = _now()
        return key.id


def _score(session: Session, submission_id: int, key_id: int, settings: Settings) -> ScoreResult:
    submission = session.get(Submission, submission_id)
    key_row = session.get(AnswerKey, key_id)
    competition = submission.competition
    if is_custom(competition):
        return score_with_custom_metric(
            competition,
            key_path=Path(key_row.path),
            submission_path=Path(submission.path),
            settings=settings,
        )
    metric = metric_for(competition)
    return score_submission_file(
        Path(submission.path),
        metric=metric,
        params=metric.parse_params(competition.metric_params),
        key=key_table(competition, key_row, settings),
        details=True,
        limits=intake_limits(settings),
    )


def _evaluate(
    factory: sessionmaker[Session], submission_id: int, key_id: int, settings: Settings
) -> Outcome:
    try:
        with factory() as session:
            return Outcome(result=_score(session, submission_id, key_id, settings))
    except CustomMetricFailure as exc:
        return Outcome(None, exc.participant_message, exc.host_message, exc.source == "submission")
    except ScoringError as exc:
        if exc.source == "submission":
            return Outcome(None, exc.message, None, participants_fault=True)
        return Outcome(None, KEY_FAILURE, f"answer key problem: {exc.message}")
    except Exception:  # noqa: BLE001 - any crash must fail the one submission, not the worker
        log.exception("scoring submission %s crashed", submission_id)
        return Outcome(None, GENERIC_FAILURE, traceback.format_exc(limit=20))


def _write_score(session: Session, submission_id: int, key_id: int, outcome: Outcome) -> None:
    exists = session.scalar(
        select(Score.id).where(Score.submission_id == submission_id, Score.answer_key_id == key_id)
    )
    if exists is not None:
        return
    result = outcome.result
    session.add(
        Score(
            submission_id=submission_id,
            answer_key_id=key_id,
            score=result.score if result else None,
            public_score=result.public if result else None,
            private_score=result.private if result else None,
            details=result.details
            if result
            else {"error": outcome.error, "host_error": outcome.host_error},
        )
    )


def score_submission(
    factory: sessionmaker[Session], submission_id: int, settings: Settings | None = None
) -> None:
    """Score a new submission against the published key and settle its status."""
    settings = settings or Settings()
    key_id = _claim(factory, submission_id)
    if key_id is None:
        return
    outcome = _evaluate(factory, submission_id, key_id, settings)
    with unit_of_work(factory) as session:
        submission = session.get(Submission, submission_id)
        if submission is None:
            return
        submission.finished_at = _now()
        if outcome.result is None:
            submission.status = SubmissionStatus.failed
            submission.error, submission.host_error = outcome.error, outcome.host_error
            submission.refunded = True  # no failure counts against the quota (README, Quotas)
            return
        _write_score(session, submission_id, key_id, outcome)
        submission.status = SubmissionStatus.scored
        submission.error = submission.host_error = None


def rescore_submission(
    factory: sessionmaker[Session],
    submission_id: int,
    key_id: int,
    settings: Settings | None = None,
) -> None:
    """Score a submission against another key version, into a score row of its own.

    The submission's status is not touched: boards move only when the version is published.
    A failure is kept as a score row without scores, so the rescore is known to be complete.
    """
    settings = settings or Settings()
    with factory() as session:
        done = session.scalar(
            select(Score.id).where(
                Score.submission_id == submission_id, Score.answer_key_id == key_id
            )
        )
    if done is not None:
        return
    outcome = _evaluate(factory, submission_id, key_id, settings)
    with unit_of_work(factory) as session:
        _write_score(session, submission_id, key_id, outcome)


def run_job(
    factory: sessionmaker[Session],
    submission_id: int,
    key_id: int | None,
    settings: Settings | None,
) -> None:
    if key_id is None:
        score_submission(factory, submission_id, settings)
    else:
        rescore_submission(factory, submission_id, key_id, settings)


def pending_submissions(factory: sessionmaker[Session], *, stale_after: timedelta) -> list[int]:
    """Submissions a restarted scorer must pick up: queued ones and orphaned 'scoring' ones."""
    cutoff = _now() - stale_after
    with unit_of_work(factory) as session:
        rows = session.scalars(
            select(Submission)
            .where(
                or_(
                    Submission.status == SubmissionStatus.queued,
                    (Submission.status == SubmissionStatus.scoring)
                    & (Submission.started_at < cutoff),
                )
            )
            .order_by(Submission.id)
        ).all()
        for row in rows:
            row.status = SubmissionStatus.queued
        return [row.id for row in rows]
