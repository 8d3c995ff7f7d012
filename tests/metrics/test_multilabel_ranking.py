"""Label ranking loss, coverage error and LRAP against scikit-learn and seed 001's examples."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn import metrics as skm

from app.metrics import MetricInputError, get_metric
from app.metrics.multilabel_ranking import (
    coverage_error,
    label_ranking_average_precision,
    label_ranking_loss,
)
from tests.metrics.factories import metric_settings

PAIRS = [
    (label_ranking_loss, skm.label_ranking_loss),
    (coverage_error, skm.coverage_error),
    (label_ranking_average_precision, skm.label_ranking_average_precision_score),
]
NAMES = ["label_ranking_loss", "coverage_error", "label_ranking_average_precision"]

SEED_TRUTH = np.array([[1, 0, 0], [0, 0, 1]])
SEED_SCORES = np.array([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])


@st.composite
def ranking_inputs(draw, min_labels=2):
    n = draw(st.integers(1, 30))
    k = draw(st.integers(min_labels, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))).astype(float)
    # Few distinct scores make ties common; sometimes add continuous noise.
    s = rng.integers(0, draw(st.integers(1, 4)), (n, k)).astype(float)
    if draw(st.booleans()):
        s += rng.random((n, k))
    weights = None
    if draw(st.booleans()):
        weights = rng.normal(size=n)  # negative weights are allowed
        assume(abs(weights.sum()) > 1e-3)
    return y, s, weights


@metric_settings
@given(ranking_inputs())
def test_equal_to_scikit_learn_including_ties_and_negative_weights(inputs):
    y, s, w = inputs
    for ours, theirs in PAIRS:
        expected = theirs(y, s, sample_weight=w)
        assert ours(y, s, sample_weight=w) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_seed_001_worked_example():
    assert label_ranking_loss(SEED_TRUTH, SEED_SCORES) == 0.75


def test_seed_001_tie_counts_as_an_error():
    truth = np.array([[1, 1, 0]])
    assert label_ranking_loss(truth, np.array([[0.5, 0.5, 0.5]])) == 1.0
    assert label_ranking_loss(truth, np.array([[0.5, 0.5, 0.4]])) == 0.0


def test_seed_001_weighted_example_is_1_5_not_2():
    assert label_ranking_loss(SEED_TRUTH, SEED_SCORES, sample_weight=np.array([-1.0, 2.0])) == 1.5


def test_rows_with_all_or_no_labels_relevant_score_loss_0_and_lrap_1():
    truth = np.array([[1, 1, 1], [0, 0, 0]])
    scores = np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1]])
    assert label_ranking_loss(truth, scores) == 0.0
    assert label_ranking_average_precision(truth, scores) == 1.0
    assert coverage_error(truth, scores) == pytest.approx(skm.coverage_error(truth, scores))


@pytest.mark.parametrize("fn", [label_ranking_loss, coverage_error])
def test_a_single_label_column_is_rejected_for_loss_and_coverage(fn):
    with pytest.raises(MetricInputError, match="two label columns") as exc:
        fn(np.array([[1.0], [0.0]]), np.array([[0.3], [0.4]]))
    assert exc.value.source == "answer_key"


def test_lrap_of_a_single_label_column_is_1():
    assert (
        label_ranking_average_precision(np.array([[1.0], [0.0]]), np.array([[0.3], [0.4]])) == 1.0
    )


@pytest.mark.parametrize("name", NAMES)
def test_labels_other_than_0_and_1_are_rejected(name):
    metric = get_metric(name)
    y = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    with pytest.raises(MetricInputError, match="0 or 1") as exc:
        metric.compute(y, np.zeros((3, 2)), metric.parse_params({}))
    assert exc.value.rows.tolist() == [1]


@pytest.mark.parametrize("name", NAMES)
def test_zero_rows_are_rejected(name):
    metric = get_metric(name)
    with pytest.raises(MetricInputError, match="no rows"):
        metric.compute(np.zeros((0, 3)), np.zeros((0, 3)), metric.parse_params({}))


@pytest.mark.parametrize("name", NAMES)
def test_the_weight_column_is_read_from_the_answer_key(name):
    metric = get_metric(name)
    params = metric.parse_params({"weight_column": "w"})
    assert metric.key_columns(params) == ["w"]
    weights = np.array([-1.0, 2.0])
    value = metric.compute(SEED_TRUTH, SEED_SCORES, params, {"w": weights})
    _, reference = PAIRS[NAMES.index(name)]
    assert value == pytest.approx(reference(SEED_TRUTH, SEED_SCORES, sample_weight=weights))


@pytest.mark.parametrize("name", NAMES)
def test_weights_summing_to_zero_are_rejected(name):
    metric = get_metric(name)
    params = metric.parse_params({"weight_column": "w"})
    with pytest.raises(MetricInputError, match="sum to zero") as exc:
        metric.compute(SEED_TRUTH, SEED_SCORES, params, {"w": np.array([-1.5, 1.5])})
    assert exc.value.source == "answer_key"


def test_large_label_counts_are_processed_in_blocks():
    rng = np.random.default_rng(7)
    y = (rng.random((300, 200)) < 0.1).astype(float)
    s = rng.integers(0, 5, (300, 200)).astype(float)
    for ours, theirs in PAIRS:
        assert ours(y, s) == pytest.approx(theirs(y, s), rel=1e-12)
