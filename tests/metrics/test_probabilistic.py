"""ROC AUC, log losses and pfbeta against scikit-learn and the Kaggle reference code."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as skm

from app.metrics import MetricInputError, MetricParamsError, get_metric
from app.metrics.probabilistic import log_loss_binary, log_loss_multiclass, pfbeta
from app.metrics.ranking import mean_columnwise_roc_auc, roc_auc
from tests.metrics.factories import metric_settings
from tests.metrics.metric_references import (
    kaggle_logloss,
    kaggle_multiclass_log_loss,
    kaggle_pfbeta,
    seed_002_pfbeta,
    sklearn_old_log_loss,
)

pytestmark = pytest.mark.filterwarnings("ignore:The y_prob values do not sum to one:UserWarning")

EXTREME = [0.0, 1.0, 1e-300, 1 - 1e-16, 5e-324, 0.5, 0.5 + 1e-16]
probabilities = st.one_of(st.floats(0, 1), st.sampled_from(EXTREME))
scores = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0, -1e300, 1e300]),  # ties and extremes
    st.floats(-1e6, 1e6, allow_nan=False),
)


def binary_key(min_size: int = 2):
    return st.lists(st.sampled_from([0.0, 1.0]), min_size=min_size, max_size=60).filter(
        lambda v: 0 < sum(v) < len(v)
    )


# --- roc_auc ---------------------------------------------------------------------------------


@metric_settings
@given(binary_key(), st.data())
def test_roc_auc_equals_scikit_learn(y, data):
    s = data.draw(st.lists(scores, min_size=len(y), max_size=len(y)))
    y_true, y_score = np.array(y), np.array(s)
    assert roc_auc(y_true, y_score) == pytest.approx(skm.roc_auc_score(y_true, y_score), rel=1e-12)


def test_roc_auc_of_constant_scores_is_one_half():
    assert roc_auc(np.array([0.0, 1.0, 1.0, 0.0]), np.full(4, 0.3)) == 0.5


def test_roc_auc_rejects_a_one_class_key():
    with pytest.raises(MetricInputError, match="one class") as exc:
        roc_auc(np.ones(5), np.linspace(0, 1, 5))
    assert exc.value.source == "answer_key"


def test_roc_auc_rejects_labels_other_than_0_and_1_naming_the_rows():
    with pytest.raises(MetricInputError, match="0 or 1") as exc:
        roc_auc(np.array([0.0, 1.0, 2.0, 0.5]), np.zeros(4))
    assert exc.value.rows.tolist() == [2, 3]
    assert exc.value.source == "answer_key"


@metric_settings
@given(st.integers(2, 5), st.integers(4, 40), st.integers(0, 2**32 - 1))
def test_mean_columnwise_roc_auc_equals_scikit_learn_macro(k, n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, (n, k)).astype(float)
    y[0], y[1] = 0.0, 1.0
    s = rng.choice([0.1, 0.2, 0.3, rng.random()], (n, k))
    expected = skm.roc_auc_score(y, s, average="macro")
    assert mean_columnwise_roc_auc(y, s) == pytest.approx(expected, rel=1e-12)


def test_mean_columnwise_roc_auc_rejects_any_one_class_column():
    y = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 1.0]])
    with pytest.raises(MetricInputError, match="column 2") as exc:
        mean_columnwise_roc_auc(y, np.zeros((3, 2)))
    assert exc.value.source == "answer_key"


# --- log_loss_binary -------------------------------------------------------------------------


@metric_settings
@given(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=60), st.data())
def test_log_loss_binary_with_eps_1e_15_equals_kaggle_and_old_scikit_learn(y, data):
    p = data.draw(
        st.lists(st.one_of(probabilities, st.floats(-3, 3)), min_size=len(y), max_size=len(y))
    )
    y_true, y_prob = np.array(y), np.array(p)
    ours = log_loss_binary(y_true, y_prob)
    assert ours == pytest.approx(kaggle_logloss(y_true, y_prob), rel=1e-12)
    onehot = np.stack([1 - y_true, y_true], axis=1)
    assert ours == pytest.approx(sklearn_old_log_loss(onehot, y_prob), rel=1e-12)


@metric_settings
@given(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=60), st.data())
def test_log_loss_binary_with_eps_auto_equals_current_scikit_learn(y, data):
    p = data.draw(st.lists(probabilities, min_size=len(y), max_size=len(y)))
    y_true, y_prob = np.array(y), np.array(p)
    expected = skm.log_loss(y_true, y_prob, labels=[0.0, 1.0])
    assert log_loss_binary(y_true, y_prob, eps="auto") == pytest.approx(expected, rel=1e-12)


def test_log_loss_binary_eps_auto_rejects_probabilities_outside_0_1():
    with pytest.raises(MetricInputError, match=r"\[0, 1\]") as exc:
        log_loss_binary(np.array([0.0, 1.0, 1.0]), np.array([0.2, 1.5, -0.1]), eps="auto")
    assert exc.value.source == "submission"
    assert exc.value.rows.tolist() == [1, 2]


def test_log_loss_binary_default_clips_instead():
    value = log_loss_binary(np.array([0.0, 1.0]), np.array([-2.0, 7.0]))
    assert value == pytest.approx(-np.log(1 - 1e-15), rel=1e-9)


def test_log_loss_binary_rejects_labels_other_than_0_and_1():
    with pytest.raises(MetricInputError, match="0 or 1"):
        log_loss_binary(np.array([0.0, 3.0]), np.array([0.5, 0.5]))


def test_log_loss_eps_param_is_validated():
    metric = get_metric("log_loss_binary")
    assert metric.parse_params({"eps": "auto"}).eps == "auto"
    for bad in ({"eps": 0}, {"eps": 0.5}, {"eps": "machine"}, {"eps": -1e-15}):
        with pytest.raises(MetricParamsError):
            metric.parse_params(bad)


# --- log_loss_multiclass ---------------------------------------------------------------------


def _multiclass(seed: int, n: int, k: int, *, extreme: bool = False):
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, k, n)
    y = np.eye(k)[classes]
    p = rng.random((n, k))
    if extreme:
        p[rng.random((n, k)) < 0.3] = 0.0
        p[rng.random((n, k)) < 0.1] = 1.0
    return classes, y, p


@metric_settings
@given(st.integers(0, 2**32 - 1), st.integers(1, 50), st.integers(2, 6), st.booleans())
def test_log_loss_multiclass_default_equals_kaggle_and_old_scikit_learn(seed, n, k, extreme):
    classes, y, p = _multiclass(seed, n, k, extreme=extreme)
    ours = log_loss_multiclass(y, p)
    assert ours == pytest.approx(kaggle_multiclass_log_loss(classes, p.copy()), rel=1e-12)
    assert ours == pytest.approx(sklearn_old_log_loss(y, p), rel=1e-12)


@metric_settings
@given(st.integers(0, 2**32 - 1), st.integers(1, 50), st.integers(2, 6), st.booleans())
def test_log_loss_multiclass_eps_auto_equals_current_scikit_learn(seed, n, k, extreme):
    classes, y, p = _multiclass(seed, n, k, extreme=extreme)
    expected = skm.log_loss(classes, p, labels=list(range(k)))
    assert log_loss_multiclass(y, p, eps="auto") == pytest.approx(expected, rel=1e-12)


def test_log_loss_multiclass_renormalize_can_be_set_either_way():
    y = np.array([[1.0, 0.0], [0.0, 1.0]])
    p = np.array([[0.5, 0.5], [0.2, 0.2]])
    assert log_loss_multiclass(y, p, renormalize=False) == pytest.approx(
        -(np.log(0.5) + np.log(0.2)) / 2
    )
    assert log_loss_multiclass(y, p, eps="auto", renormalize=True) == pytest.approx(
        -(np.log(0.5) + np.log(0.5)) / 2
    )


def test_log_loss_multiclass_rejects_a_key_row_that_is_not_one_hot():
    y = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(MetricInputError, match="one-hot") as exc:
        log_loss_multiclass(y, np.full((4, 3), 1 / 3))
    assert exc.value.source == "answer_key"
    assert exc.value.rows.tolist() == [1, 2]


def test_log_loss_multiclass_eps_auto_rejects_probabilities_outside_0_1():
    with pytest.raises(MetricInputError) as exc:
        log_loss_multiclass(np.eye(2), np.array([[0.5, 0.5], [1.2, -0.2]]), eps="auto")
    assert exc.value.source == "submission"
    assert exc.value.rows.tolist() == [1]


def test_log_loss_multiclass_rejects_a_single_column():
    with pytest.raises(MetricInputError, match="at least 2"):
        log_loss_multiclass(np.ones((3, 1)), np.ones((3, 1)))


# --- pfbeta ----------------------------------------------------------------------------------


@metric_settings
@given(
    st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=60).filter(lambda v: sum(v) > 0),
    st.sampled_from([0.5, 1.0, 2.0, 0.2]),
    st.data(),
)
def test_pfbeta_equals_kaggles_corrected_code(y, beta, data):
    p = data.draw(
        st.lists(st.one_of(probabilities, st.floats(-2, 2)), min_size=len(y), max_size=len(y))
    )
    y_true, y_prob = np.array(y), np.array(p)
    clipped = np.clip(y_prob, 0, 1)
    if clipped.sum() == 0:
        # The reference divides by zero here; Podium scores 0.
        assert pfbeta(y_true, y_prob, beta=beta) == 0.0
        return
    expected = kaggle_pfbeta(y, p, beta)
    assert pfbeta(y_true, y_prob, beta=beta) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_pfbeta_does_not_copy_seed_002s_false_positive_bug():
    y, p = [1, 1, 0, 0], [0.8, 0.6, 0.1, 0.3]
    ours = pfbeta(np.array(y, dtype=float), np.array(p))
    assert ours == pytest.approx(kaggle_pfbeta(y, p, 1))
    assert ours != pytest.approx(seed_002_pfbeta(y, p, 1))
    # ctp = 1.4, cfp = 0.4: precision 1.4/1.8, recall 0.7
    assert ours == pytest.approx(2 * (1.4 / 1.8) * 0.7 / (1.4 / 1.8 + 0.7))


def test_pfbeta_rejects_a_key_with_no_positives():
    with pytest.raises(MetricInputError, match="no positive") as exc:
        pfbeta(np.zeros(4), np.full(4, 0.5))
    assert exc.value.source == "answer_key"


def test_pfbeta_rejects_labels_other_than_0_and_1():
    with pytest.raises(MetricInputError, match="0 or 1") as exc:
        pfbeta(np.array([1.0, 0.3]), np.array([0.5, 0.5]))
    assert exc.value.rows.tolist() == [1]


def test_pfbeta_beta_must_be_positive():
    with pytest.raises(MetricParamsError):
        get_metric("pfbeta").parse_params({"beta": 0})


@pytest.mark.parametrize("eps", [1e-15, "auto"])
def test_log_loss_binary_scores_a_one_class_key(eps):
    value = log_loss_binary(np.ones(3), np.array([0.9, 0.8, 1.0]), eps=eps)
    assert value == pytest.approx(-(np.log(0.9) + np.log(0.8)) / 3, rel=1e-12, abs=1e-15)


def test_pfbeta_scores_a_key_of_only_positives():
    assert pfbeta(np.ones(2), np.array([1.0, 0.5])) == pytest.approx(2 * 0.75 / 1.75)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, {"eps": 1e-15, "renormalize": None}),
        ({"eps": "auto"}, {"eps": "auto", "renormalize": None}),
        ({"eps": "auto", "renormalize": True}, {"eps": "auto", "renormalize": True}),
    ],
)
def test_log_loss_multiclass_params_reach_the_function(params, expected):
    metric = get_metric("log_loss_multiclass")
    parsed = metric.parse_params(params)
    assert parsed.model_dump() == expected
    y = np.eye(3)[[0, 1, 2, 1]]
    p = np.array([[0.7, 0.2, 0.3], [0.1, 0.5, 0.1], [0.2, 0.2, 0.2], [0.3, 0.3, 0.3]])
    assert metric.compute(y, p, parsed) == log_loss_multiclass(y, p, **expected)
