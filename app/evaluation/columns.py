"""A competition's (or a phase's) leaderboard columns, resolved from what is stored.

A competition made with one ``metric`` stores no column list: it has one column named after
the metric. A custom-metric competition's one column is the organiser's ``score()``.
"""

from typing import Any

from app.evaluation.metric import is_custom, metric_for
from app.metrics import Metric, UnknownMetric, get_metric
from app.models import Competition, Phase
from app.scoring.columns import Column, resolve_columns
from app.scoring.tasks import flatten


def _lookup(name: str) -> Metric:
    if name == "custom":
        raise UnknownMetric(
            "a custom metric is a competition's only column: give it as 'metric', not in 'columns'"
        )
    return get_metric(name)


def column_defs(competition: Competition, phase: Phase | None = None) -> list[dict[str, Any]]:
    """The column definitions as the API takes and shows them; a multi-task phase's are its
    aggregates then its tasks' columns, task-qualified (app.scoring.tasks)."""
    if phase is not None and phase.tasks:
        return flatten(phase.columns, phase.tasks)
    if phase is not None and phase.columns:
        return [dict(c) for c in phase.columns]
    if competition.columns:
        return [dict(c) for c in competition.columns]
    return [
        {
            "key": competition.metric_name,
            "title": competition.metric_name,
            "metric": {"name": competition.metric_name, "params": dict(competition.metric_params)},
        }
    ]


def columns_for(competition: Competition, phase: Phase | None = None) -> list[Column]:
    if is_custom(competition):
        metric = metric_for(competition)
        return [
            Column(key=metric.name, title=metric.name, direction=metric.direction, metric=metric)
        ]
    return resolve_columns(column_defs(competition, phase), lookup=_lookup)


def check_columns(definitions: list[dict[str, Any]], where: str = "columns") -> list[Column]:
    """Resolve definitions from a request (raises app.scoring.columns.ColumnError)."""
    return resolve_columns(definitions, lookup=_lookup, where=where)


def public_column(column: Column) -> dict[str, Any]:
    """A column as boards name it: key, title, metric, direction (and its display rules)."""
    return {
        "key": column.key,
        "title": column.title,
        "metric": column.metric.name if column.metric is not None else None,
        "computed": {"op": column.op, "of": list(column.of)} if column.computed else None,
        "program": column.program,
        "direction": column.direction,
        "precision": column.precision,
        "hidden": column.hidden,
        "task": column.task,
    }


def stored_values(
    score_columns: dict[str, Any] | None,
    *,
    ranking_key: str,
    score: float | None,
    public: float | None,
    private: float | None,
) -> dict[str, dict[str, float | None]]:
    """A score row's per-column values; a row written before columns existed holds only the
    ranking column's three floats."""
    if score_columns:
        return {k: dict(v) for k, v in score_columns.items()}
    return {ranking_key: {"score": score, "public": public, "private": private}}
