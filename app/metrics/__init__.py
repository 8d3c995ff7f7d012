"""Evaluation metrics: pure numpy functions, and the registry that describes them to the service.

Nothing in this package imports the web layer or the database.
"""

from app.metrics.errors import MetricInputError, MetricParamsError, UnknownMetric
from app.metrics.registry import Metric, all_metrics, get_metric, metric_names

__all__ = [
    "Metric",
    "MetricInputError",
    "MetricParamsError",
    "UnknownMetric",
    "all_metrics",
    "get_metric",
    "metric_names",
]
