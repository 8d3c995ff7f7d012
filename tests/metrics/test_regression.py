"""Regression metrics and quadratic weighted kappa against scikit-learn."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as skm

from app.metrics import MetricInputError
from app.metrics.regression import mae, quadratic_weighted_kappa, r2, rmse, rmsle
from tests.metrics.factories import metric_settings
from tests.metrics.metric_references import hamner_quadratic_weighted_kappa

values = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([0.0, 1.0, -0.0, 1e-300, 1e15]),
)


def paired(elements, min_size=1):
    return st.integers(min_size, 60).flatmap(
        lambda n: st.tuples(
            st.lists(elements, min_size=n, max_size=n), st.lists(elements, min_size=n, max_size=n)
        )
    )


@metric_settings
@given(paired(values))
def test_rmse_and_mae_equal_scikit_learn(pair):
    y, p = map(np.array, pair)
    assert rmse(y, p) == pytest.approx(skm.root_mean_squared_error(y, p), rel=1e-14)
    assert mae(y, p) == pytest.approx(skm.mean_absolute_error(y, p), rel=1e-14)


@metric_settings
@given(paired(values, min_size=2))
def test_r2_equals_scikit_learn_with_force_finite(pair):
    y, p = map(np.array, pair)
    assert r2(y, p) == pytest.approx(skm.r2_score(y, p), rel=1e-12, abs=1e-12)


def test_r2_of_a_constant_key_is_1_when_exact_and_0_otherwise():
    y = np.full(4, 3.0)
    assert r2(y, y.copy()) == 1.0
    assert r2(y, y + 1) == 0.0


def test_r2_rejects_a_single_row():
    with pytest.raises(MetricInputError, match="two rows") as exc:
        r2(np.array([1.0]), np.array([1.0]))
    assert exc.value.source == "answer_key"


@metric_settings
@given(paired(st.floats(-0.999, 1e6)))
def test_rmsle_equals_scikit_learn(pair):
    y, p = map(np.array, pair)
    assert rmsle(y, p) == pytest.approx(skm.root_mean_squared_log_error(y, p), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "source", "rows"),
    [
        ([0.0, -1.0, 2.0], [0.0, 0.0, 0.0], "answer_key", [1]),
        ([0.0, 1.0, 2.0], [-3.0, 0.0, -1.0], "submission", [0, 2]),
    ],
)
def test_rmsle_rejects_values_of_minus_one_or_less(y_true, y_pred, source, rows):
    with pytest.raises(MetricInputError, match="-1") as exc:
        rmsle(np.array(y_true), np.array(y_pred))
    assert exc.value.source == source
    assert exc.value.rows.tolist() == rows


ratings = st.integers(-3, 6).map(float)


@metric_settings
@given(paired(ratings).filter(lambda pr: len(set(pr[0]) | set(pr[1])) > 1))
def test_quadratic_weighted_kappa_equals_scikit_learn(pair):
    y, p = map(np.array, pair)
    expected = skm.cohen_kappa_score(y, p, weights="quadratic")
    assert quadratic_weighted_kappa(y, p) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_quadratic_weighted_kappa_weighs_class_positions_not_values_unlike_hamner():
    y, p = [1, 1, 2, 5, 5], [1, 2, 2, 2, 5]
    ours = quadratic_weighted_kappa(np.array(y, float), np.array(p, float))
    assert ours == pytest.approx(skm.cohen_kappa_score(y, p, weights="quadratic"))
    # Ratings 3 and 4 never occur: Hamner's range 1..5 weighs the 2-vs-5 errors by 3², not 1².
    assert ours != pytest.approx(hamner_quadratic_weighted_kappa(y, p))
    # With consecutive ratings the two agree.
    y2, p2 = [1, 1, 2, 2, 3], [1, 2, 2, 3, 3]
    assert quadratic_weighted_kappa(np.array(y2, float), np.array(p2, float)) == pytest.approx(
        hamner_quadratic_weighted_kappa(y2, p2)
    )


@pytest.mark.parametrize(
    ("y_true", "y_pred", "source"),
    [([1.0, 2.5], [1.0, 2.0], "answer_key"), ([1.0, 2.0], [1.0, 1.5], "submission")],
)
def test_quadratic_weighted_kappa_rejects_non_integer_ratings(y_true, y_pred, source):
    with pytest.raises(MetricInputError, match="whole numbers") as exc:
        quadratic_weighted_kappa(np.array(y_true), np.array(y_pred))
    assert exc.value.source == source
    assert exc.value.rows.tolist() == [1]


def test_quadratic_weighted_kappa_rejects_a_single_rating_value_overall():
    with pytest.raises(MetricInputError, match="single rating"):
        quadratic_weighted_kappa(np.full(3, 2.0), np.full(3, 2.0))
