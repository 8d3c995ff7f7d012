"""Single-label classification: equal to scikit-learn, and seed 004's worked numbers reproduce."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as skm

from app.metrics import MetricInputError, get_metric
from app.metrics.classification import (
    accuracy,
    class_f1,
    class_precision,
    class_recall,
    classification_details,
    confusion_matrix,
    macro_f1,
    micro_f1,
)
from tests.metrics.factories import labels, metric_settings
from tests.metrics.metric_references import (
    SEED_004_GENRES,
    SEED_004_MATRIX,
    rows_from_matrix,
    seed_004_counts,
    seed_004_most_confused,
    seed_004_prf,
)

pytestmark = pytest.mark.filterwarnings("ignore:A single label was found:UserWarning")

# Labels that look alike but are not: case, whitespace, Unicode normalisation, "missing" words.
TRICKY = ["a", "A", "a ", " a", "b", "NA", "None", "null", "é", "e\u0301", "日本", "\t"]

label_pairs = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from(TRICKY), min_size=n, max_size=n),
        st.lists(st.sampled_from(TRICKY), min_size=n, max_size=n),
    )
)


def _arrays(pair):
    return labels(*pair[0]), labels(*pair[1])


@metric_settings
@given(label_pairs)
def test_scores_equal_scikit_learn(pair):
    y_true, y_pred = _arrays(pair)
    assert accuracy(y_true, y_pred) == skm.accuracy_score(y_true, y_pred)
    assert macro_f1(y_true, y_pred) == skm.f1_score(
        y_true, y_pred, average="macro", zero_division=0
    )
    assert micro_f1(y_true, y_pred) == skm.f1_score(
        y_true, y_pred, average="micro", zero_division=0
    )


@metric_settings
@given(label_pairs, st.data())
def test_per_class_scores_equal_scikit_learn(pair, data):
    y_true, y_pred = _arrays(pair)
    label = data.draw(st.sampled_from(sorted(set(pair[0]) | set(pair[1]))))
    for ours, theirs in (
        (class_precision, skm.precision_score),
        (class_recall, skm.recall_score),
        (class_f1, skm.f1_score),
    ):
        expected = theirs(y_true, y_pred, labels=[label], average=None, zero_division=0)[0]
        assert ours(y_true, y_pred, label=label) == expected


@metric_settings
@given(label_pairs)
def test_confusion_matrix_equals_scikit_learn_in_sorted_label_order(pair):
    y_true, y_pred = _arrays(pair)
    names, counts = confusion_matrix(y_true, y_pred)
    assert names == sorted(set(pair[0]) | set(pair[1]))
    np.testing.assert_array_equal(counts, skm.confusion_matrix(y_true, y_pred, labels=names))


def test_labels_are_compared_exactly():
    y_true = labels("NA", "None", "null", "a", "é")
    y_pred = labels("NA", "none", "null", "a ", "e\u0301")
    assert accuracy(y_true, y_pred) == 0.4
    assert classification_details(y_true, y_pred)["labels"] == [
        "NA", "None", "a", "a ", "e\u0301", "none", "null", "é",
    ]  # fmt: skip


def test_a_label_only_predicted_is_a_class_with_f1_zero():
    y_true, y_pred = labels("a", "a", "b"), labels("a", "c", "b")
    # F1: a = 2/3, b = 1, c = 0
    assert macro_f1(y_true, y_pred) == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert class_precision(y_true, y_pred, label="c") == 0.0


@pytest.mark.parametrize("name", ["class_precision", "class_recall", "class_f1"])
def test_a_class_label_in_neither_file_is_rejected(name):
    metric = get_metric(name)
    with pytest.raises(MetricInputError, match="neither") as exc:
        metric.compute(labels("a", "b"), labels("a", "a"), metric.parse_params({"label": "z"}))
    assert exc.value.source == "answer_key"


@pytest.mark.parametrize("name", ["class_precision", "class_recall", "class_f1"])
def test_the_class_label_param_is_required(name):
    from app.metrics import MetricParamsError

    with pytest.raises(MetricParamsError, match="label"):
        get_metric(name).parse_params({})


# --- seed 004 ------------------------------------------------------------------------------


def _trap():
    support = [90, 5, 3, 2]
    matrix = [[n, 0, 0, 0] for n in support]
    return rows_from_matrix(SEED_004_GENRES, matrix)


def test_seed_004_accuracy_trap_reproduces():
    y_true, y_pred = _trap()
    assert accuracy(y_true, y_pred) == 0.9
    # The seed's "0.24" is this number rounded to two places.
    assert round(macro_f1(y_true, y_pred), 6) == 0.236842
    details = classification_details(y_true, y_pred)
    zero = [label for label, c in details["per_class"].items() if c["f1"] == 0.0]
    assert sorted(zero) == ["fiction", "government", "learned"]
    assert details["hardest_class"] == {"label": "fiction", "f1": 0.0, "tied": True}


def test_seed_004_matrix_and_diagnoses_reproduce():
    y_true, y_pred = rows_from_matrix(SEED_004_GENRES, SEED_004_MATRIX)
    details = classification_details(y_true, y_pred)
    order = [details["labels"].index(g) for g in SEED_004_GENRES]
    np.testing.assert_array_equal(
        np.array(details["confusion_matrix"])[np.ix_(order, order)], SEED_004_MATRIX
    )
    assert accuracy(y_true, y_pred) == 0.75
    assert micro_f1(y_true, y_pred) == 0.75
    for i, genre in enumerate(SEED_004_GENRES):
        p, r, f = seed_004_prf(*seed_004_counts(SEED_004_MATRIX, i))
        row = details["per_class"][genre]
        assert row["precision"] == pytest.approx(p, abs=1e-15)
        assert row["recall"] == pytest.approx(r, abs=1e-15)
        assert row["f1"] == pytest.approx(f, abs=1e-15)
        assert row["support"] == 12
    government = details["per_class"]["government"]
    assert (round(government["recall"], 4), round(government["precision"], 4)) == (0.5833, 0.7)
    assert details["hardest_class"]["label"] == "government"
    assert round(details["hardest_class"]["f1"], 4) == 0.6364
    assert details["hardest_class"]["tied"] is False
    assert details["most_confused_pair"] == {
        "pair": ["government", "news"],
        "a_to_b": 3,
        "b_to_a": 2,
        "total": 5,
        "tied": False,
    }


small_matrices = st.integers(1, 5).flatmap(
    lambda k: st.lists(st.lists(st.integers(0, 3), min_size=k, max_size=k), min_size=k, max_size=k)
)


@metric_settings
@given(small_matrices)
def test_hardest_class_and_most_confused_pair_follow_the_tie_rules(matrix):
    names = ["ant", "Bee", "cat", "dog", "ému"][: len(matrix)]
    names_sorted = sorted(names)
    if sum(map(sum, matrix)) == 0:
        matrix[0][0] = 1
    y_true, y_pred = rows_from_matrix(names_sorted, matrix)
    details = classification_details(y_true, y_pred)
    present = details["labels"]
    m = np.array(details["confusion_matrix"])

    # Hardest: the exact lowest F1 (as fractions, no rounding), ties to the first label.
    f1 = {}
    for i, label in enumerate(present):
        tp, fp, fn = seed_004_counts(m.tolist(), i)
        f1[label] = Fraction(2 * tp, 2 * tp + fp + fn) if tp + fp + fn else Fraction(0)
    lowest = min(f1.values())
    tied = [label for label in present if f1[label] == lowest]
    assert details["hardest_class"]["label"] == tied[0]
    assert details["hardest_class"]["tied"] == (len(tied) > 1)

    # Most confused: exactly what seed 004's reverse sort puts first.
    if len(present) < 2:
        assert details["most_confused_pair"] is None
        return
    pairs = seed_004_most_confused(present, m.tolist())
    total, a, b, ab, ba = pairs[0]
    assert details["most_confused_pair"] == {
        "pair": [a, b],
        "a_to_b": ab,
        "b_to_a": ba,
        "total": total,
        "tied": pairs[1][0] == total if len(pairs) > 1 else False,
    }


def test_details_are_served_for_every_single_label_metric():
    for name in ["accuracy", "macro_f1", "micro_f1", "class_precision", "class_recall", "class_f1"]:
        metric = get_metric(name)
        assert metric.details is not None
        params = metric.parse_params({"label": "a"} if name.startswith("class_") else {})
        out = metric.details(labels("a", "b"), labels("a", "a"), params=params, extra={})
        assert out["confusion_matrix"] == [[1, 0], [1, 0]]
