"""Invariants every registered metric must keep; a new metric is tested here by registering it."""

import json
import math

import numpy as np
import pytest
from pydantic import BaseModel

from app.metrics import (
    Metric,
    MetricInputError,
    MetricParamsError,
    UnknownMetric,
    all_metrics,
    get_metric,
    metric_names,
)
from tests.metrics.factories import example_inputs

METRICS = all_metrics()


def _over(metrics: list[Metric]) -> pytest.MarkDecorator:
    # An empty list would only skip the invariant ("got empty parameter set"): refuse it.
    assert metrics, "an invariant over no metric tests nothing"
    return pytest.mark.parametrize("metric", metrics, ids=[m.name for m in metrics])


def _key_column_params(metric: Metric) -> list[str]:
    return [name for name in metric.params.model_fields if name.endswith("_column")]


every_metric = _over(METRICS)
every_table_metric = _over([m for m in METRICS if m.columns == "many"])
every_metric_with_details = _over([m for m in METRICS if m.details is not None])
every_metric_with_key_columns = _over([m for m in METRICS if _key_column_params(m)])

ISSUE_3_NAMES = {
    "accuracy", "macro_f1", "micro_f1", "class_precision", "class_recall", "class_f1",
    "roc_auc", "mean_columnwise_roc_auc", "log_loss_binary", "log_loss_multiclass", "pfbeta",
    "label_ranking_loss", "coverage_error", "label_ranking_average_precision", "map_at_k",
    "rmse", "mae", "r2", "rmsle", "quadratic_weighted_kappa",
    "multilabel_micro_f1", "coleridge_fbeta",
}  # fmt: skip


def _score(metric: Metric, y_true, y_pred, params=None, extra=None) -> float:
    return metric.compute(y_true, y_pred, metric.parse_params(params), extra or {})


def test_the_registered_names_are_the_issues_names():
    assert set(metric_names()) >= ISSUE_3_NAMES
    assert metric_names() == sorted(metric_names())


def test_an_unknown_metric_error_lists_every_name():
    with pytest.raises(UnknownMetric) as exc:
        get_metric("f1_macro")
    for name in metric_names():
        assert name in str(exc.value)


@every_metric
def test_a_valid_example_scores_to_a_finite_python_float(metric):
    ex = example_inputs(metric)
    value = _score(metric, ex.y_true, ex.y_pred, ex.params, ex.extra)
    assert type(value) is float
    assert math.isfinite(value)


@every_metric
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_row_order_does_not_matter(metric, seed):
    ex = example_inputs(metric, seed)
    order = np.random.default_rng(seed).permutation(len(ex.y_true))
    before = _score(metric, ex.y_true, ex.y_pred, ex.params, ex.extra)
    after = _score(
        metric,
        ex.y_true[order],
        ex.y_pred[order],
        ex.params,
        {k: v[order] for k, v in ex.extra.items()},
    )
    assert after == pytest.approx(before, rel=1e-12, abs=1e-12)


@every_metric
def test_the_declared_direction_ranks_perfect_predictions_above_random_ones(metric):
    assert metric.direction in ("maximize", "minimize")
    assert metric.greater_is_better == (metric.direction == "maximize")
    ex = example_inputs(metric)
    perfect = _score(metric, ex.y_true, ex.perfect(), ex.params, ex.extra)
    noisy = _score(metric, ex.y_true, ex.y_pred, ex.params, ex.extra)
    if metric.greater_is_better:
        assert perfect > noisy
    else:
        assert perfect < noisy


ERROR_NAMES = {"rmse", "mae", "rmsle"}  # errors whose names do not end in _error


@every_metric
def test_the_direction_follows_the_name(metric):
    """sklearn's convention, for every metric: a name with ``loss`` or ``error`` in it is
    minimised, the rest (scores, rates, agreements) maximised. A new error with another name
    joins ERROR_NAMES."""
    minimised = bool({"loss", "error"} & set(metric.name.split("_"))) or metric.name in ERROR_NAMES
    assert metric.direction == ("minimize" if minimised else "maximize")


@every_metric
def test_predictions_of_another_length_are_rejected(metric):
    ex = example_inputs(metric)
    with pytest.raises(MetricInputError):
        _score(metric, ex.y_true, ex.y_pred[:-1], ex.params, ex.extra)


@every_metric
def test_zero_rows_are_rejected(metric):
    ex = example_inputs(metric)
    with pytest.raises(MetricInputError):
        _score(
            metric, ex.y_true[:0], ex.y_pred[:0], ex.params, {k: v[:0] for k, v in ex.extra.items()}
        )


@every_metric
def test_arrays_of_the_wrong_dimension_are_rejected(metric):
    ex = example_inputs(metric)
    if metric.columns == "one":
        y_true = np.stack([ex.y_true, ex.y_true], axis=1)
        y_pred = np.stack([ex.y_pred, ex.y_pred], axis=1)
    else:
        y_true, y_pred = ex.y_true[:, 0], ex.y_pred[:, 0]
    with pytest.raises(MetricInputError):
        _score(metric, y_true, y_pred, ex.params, ex.extra)
    with pytest.raises(MetricInputError):
        _score(metric, ex.y_true, y_pred, ex.params, ex.extra)


@every_table_metric
def test_a_different_number_of_prediction_columns_is_rejected(metric):
    ex = example_inputs(metric)
    with pytest.raises(MetricInputError):
        _score(metric, ex.y_true, ex.y_pred[:, :-1], ex.params, ex.extra)


@every_metric
def test_the_params_model_validates(metric):
    assert issubclass(metric.params, BaseModel)
    ex = example_inputs(metric)
    parsed = metric.parse_params(ex.params)
    assert isinstance(parsed, metric.params)
    assert metric.parse_params(parsed.model_dump()) == parsed
    with pytest.raises(MetricParamsError, match="no_such_param"):
        metric.parse_params({**ex.params, "no_such_param": 1})


@every_metric
def test_param_named_columns_are_declared_as_key_columns(metric):
    """Exactly the columns its ``*_column`` params name, for every metric: none where it has
    no such param."""
    named = {name: f"column_{i}" for i, name in enumerate(_key_column_params(metric))}
    params = metric.parse_params({**example_inputs(metric).params, **named})
    assert sorted(metric.key_columns(params)) == sorted(named.values())


def test_the_narrower_invariants_cover_the_metrics_they_are_for():
    """The invariants over a subset each cover the metrics they are written for; the rest are
    left out for the reason in their filter (one column: no prediction column to drop; no
    details offered; no column param to weight by)."""
    names = {m.name: m for m in METRICS}
    tables = {"log_loss_multiclass", "mean_columnwise_roc_auc", "label_ranking_loss"}
    tables |= {"coverage_error", "label_ranking_average_precision"}
    assert {n for n, m in names.items() if m.columns == "many"} >= tables
    classification = {"accuracy", "macro_f1", "micro_f1", "class_precision", "class_recall"}
    assert {n for n, m in names.items() if m.details is not None} >= classification | {"class_f1"}
    weighted = {"label_ranking_loss", "coverage_error", "label_ranking_average_precision"}
    assert {n for n, m in names.items() if _key_column_params(m)} >= weighted


@every_metric
def test_the_metric_function_documents_its_reference_with_a_doctest(metric):
    doc = metric.score.__doc__ or ""
    assert "Reference" in doc and ">>>" in doc
    assert metric.reference and metric.summary


@every_metric_with_details
def test_details_are_plain_json(metric):
    ex = example_inputs(metric)
    details = metric.details(ex.y_true, ex.y_pred, params=metric.parse_params(ex.params), extra={})
    assert json.loads(json.dumps(details)) == details


@every_metric_with_key_columns
def test_row_order_does_not_matter_with_a_weight_column_either(metric):
    ex = example_inputs(metric, 4)
    rng = np.random.default_rng(4)
    column = next(name for name in metric.params.model_fields if name.endswith("_column"))
    params = {**ex.params, column: "w"}
    extra = {"w": rng.normal(1.0, 1.0, len(ex.y_true))}
    order = rng.permutation(len(ex.y_true))
    before = _score(metric, ex.y_true, ex.y_pred, params, extra)
    after = _score(metric, ex.y_true[order], ex.y_pred[order], params, {"w": extra["w"][order]})
    assert after == pytest.approx(before, rel=1e-12, abs=1e-12)
    assert before != pytest.approx(_score(metric, ex.y_true, ex.y_pred, ex.params))
