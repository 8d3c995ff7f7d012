"""MAP@K against Ben Hamner's apk/mapk, and multilabel micro F1 against scikit-learn."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import f1_score
from sklearn.preprocessing import MultiLabelBinarizer

from app.metrics import MetricParamsError, get_metric
from app.metrics.text import map_at_k, multilabel_micro_f1
from tests.metrics.factories import labels, metric_settings
from tests.metrics.metric_references import mapk

ITEMS = ["a", "b", "c", "A", "é", "e\u0301", "NA", "日本", "12"]
SPACES = [" ", "  ", "\t", "\u3000", "\xa0", " \n "]


@st.composite
def cell(draw):
    items = draw(st.lists(st.sampled_from(ITEMS), max_size=8))
    out = draw(st.sampled_from(["", " "]))
    for item in items:
        out += item + draw(st.sampled_from(SPACES))
    return out


cells = st.integers(1, 30).flatmap(
    lambda n: st.tuples(
        st.lists(cell(), min_size=n, max_size=n), st.lists(cell(), min_size=n, max_size=n)
    )
)


@metric_settings
@given(cells, st.integers(1, 6))
def test_map_at_k_equals_hamners_mapk(pair, k):
    actual, predicted = pair
    expected = mapk([a.split() for a in actual], [p.split() for p in predicted], k)
    assert map_at_k(labels(*actual), labels(*predicted), k=k) == expected


def test_a_repeated_prediction_counts_once_but_takes_a_slot():
    assert map_at_k(labels("a b"), labels("a a b"), k=2) == 0.5
    assert map_at_k(labels("a b"), labels("a a b"), k=3) == pytest.approx((1 + 2 / 3) / 2)


def test_a_row_with_no_true_items_scores_0_and_stays_in_the_mean():
    assert map_at_k(labels("a", ""), labels("a", "a"), k=3) == 0.5


def test_map_at_k_k_must_be_a_positive_whole_number():
    metric = get_metric("map_at_k")
    assert metric.parse_params({}).k == 10
    for bad in ({"k": 0}, {"k": True}, {"k": 2.5}):
        with pytest.raises(MetricParamsError):
            metric.parse_params(bad)


def _sklearn_micro_f1(actual, predicted):
    true_sets = [set(a.split()) for a in actual]
    pred_sets = [set(p.split()) for p in predicted]
    binarizer = MultiLabelBinarizer().fit(true_sets + pred_sets)
    if len(binarizer.classes_) == 0:
        return 0.0
    # An all-zero extra column keeps a single tag multilabel (scikit-learn would read one
    # column as a binary target) without changing the micro counts.
    pad = np.zeros((len(true_sets), 1), dtype=int)
    y_true = np.hstack([binarizer.transform(true_sets), pad])
    y_pred = np.hstack([binarizer.transform(pred_sets), pad])
    return f1_score(y_true, y_pred, average="micro", zero_division=0)


@metric_settings
@given(cells)
def test_multilabel_micro_f1_equals_scikit_learn(pair):
    actual, predicted = pair
    ours = multilabel_micro_f1(labels(*actual), labels(*predicted))
    assert ours == _sklearn_micro_f1(actual, predicted)


def test_multilabel_micro_f1_of_all_empty_cells_is_0():
    assert multilabel_micro_f1(labels("", " "), labels("", "")) == 0.0


def test_multilabel_micro_f1_counts_a_repeated_tag_once():
    assert multilabel_micro_f1(labels("a b"), labels("a a a")) == pytest.approx(2 / 3)


@metric_settings
@given(cells, st.integers(1, 6))
def test_map_at_k_sort_based_path_for_long_rows_equals_hamners_mapk(pair, k):
    import app.metrics.text as text

    actual, predicted = pair
    expected = mapk([a.split() for a in actual], [p.split() for p in predicted], k)
    limit = text._PADDED_MAX_PREDICTIONS
    try:
        text._PADDED_MAX_PREDICTIONS = -1
        assert map_at_k(labels(*actual), labels(*predicted), k=k) == expected
    finally:
        text._PADDED_MAX_PREDICTIONS = limit


def test_map_at_k_takes_long_rows_through_the_sorted_path():
    rng = np.random.default_rng(3)
    items = [f"i{j}" for j in range(60)]
    actual = [" ".join(rng.choice(items, 80)) for _ in range(20)]
    predicted = [" ".join(rng.choice(items, 100)) for _ in range(20)]
    expected = mapk([a.split() for a in actual], [p.split() for p in predicted], 50)
    assert map_at_k(labels(*actual), labels(*predicted), k=50) == expected


def test_a_cell_holding_the_internal_row_marker_is_still_split_correctly():
    from app.metrics._text import _ROW_BREAK

    actual, predicted = [f"a {_ROW_BREAK}", "b"], [f"{_ROW_BREAK} a", "b c"]
    expected = mapk([a.split() for a in actual], [p.split() for p in predicted], 3)
    assert map_at_k(labels(*actual), labels(*predicted), k=3) == expected
    assert multilabel_micro_f1(labels(*actual), labels(*predicted)) == _sklearn_micro_f1(
        actual, predicted
    )
