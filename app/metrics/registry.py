"""The one registry of metrics: name → :class:`~app.metrics.metric.Metric`, with a lookup error
that lists the valid names."""

from app.metrics.catalogue import CATALOGUE
from app.metrics.errors import UnknownMetric
from app.metrics.metric import CellKind, Columns, Direction, Metric, NoParams

__all__ = [
    "CellKind",
    "Columns",
    "Direction",
    "Metric",
    "NoParams",
    "all_metrics",
    "get_metric",
    "metric_names",
]


def _build(metrics: tuple[Metric, ...]) -> dict[str, Metric]:
    registry: dict[str, Metric] = {}
    for metric in metrics:
        if metric.name in registry:
            raise ValueError(f"metric '{metric.name}' is registered twice")
        registry[metric.name] = metric
    return registry


_REGISTRY = _build(CATALOGUE)


def get_metric(name: str) -> Metric:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownMetric(
            f"unknown metric '{name}'; available metrics: {', '.join(metric_names())}"
        ) from None


def metric_names() -> list[str]:
    return sorted(_REGISTRY)


def all_metrics() -> list[Metric]:
    return [_REGISTRY[name] for name in metric_names()]
