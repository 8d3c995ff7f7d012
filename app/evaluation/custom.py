"""Scoring with an organiser's uploaded metric file, through the sandbox."""

from pathlib import Path

from app.config import Settings
from app.custom_metrics.sandbox import (
    SandboxLimits,
    check_custom_metric,
    jail_problem,
    run_custom_metric,
)
from app.evaluation.metric import metric_for
from app.models import Competition
from app.scoring.core import ScoreResult, ScoringError


def sandbox_limits(settings: Settings) -> SandboxLimits:
    return SandboxLimits(
        timeout_seconds=settings.custom_metric_timeout_seconds,
        memory_bytes=settings.custom_metric_memory_bytes,
        max_processes=settings.custom_metric_max_processes,
        allow_unjailed=settings.custom_metric_unjailed,
    )


def custom_metrics_refused(settings: Settings) -> str | None:
    """Why this server cannot run custom metrics (no working jail, no opt-out), or None."""
    return jail_problem(sandbox_limits(settings))


def _arguments(competition: Competition) -> dict:  # type: ignore[type-arg]
    metric = metric_for(competition)
    params = metric.parse_params(competition.metric_params)
    return {
        "id_column": competition.id_column,
        "params": params.model_dump(),
        # Columns a param names (weights, say) go to the metric but are not submitted.
        "solution_only_columns": metric.key_columns(params),
    }


def score_with_custom_metric(
    competition: Competition, *, key_path: Path, submission_path: Path, settings: Settings
) -> ScoreResult:
    if not competition.custom_metric_path:
        raise ScoringError(
            "the organiser has not uploaded the metric file yet", source="answer_key"
        )
    return run_custom_metric(
        metric_path=Path(competition.custom_metric_path),
        answer_key=key_path,
        submission=submission_path,
        limits=sandbox_limits(settings),
        **_arguments(competition),
    )


def check_key_with_custom_metric(
    competition: Competition, *, metric_path: Path, key_path: Path, settings: Settings
) -> ScoreResult:
    return check_custom_metric(
        metric_path=metric_path,
        answer_key=key_path,
        limits=sandbox_limits(settings),
        **_arguments(competition),
    )
