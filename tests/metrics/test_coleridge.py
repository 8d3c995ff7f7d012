"""coleridge_fbeta against seed 000 (where it is right) and the issue's corrected rules."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.metrics import MetricParamsError, get_metric
from app.metrics.coleridge import coleridge_counts, coleridge_fbeta
from tests.metrics.factories import labels, metric_settings
from tests.metrics.metric_references import ColeridgeEvaluation, coleridge_corrected

WORDS = ["data", "Data", "survey", "study", "national", "ÉCOLE", "école", "ΣΟΦΙΑ", "x", "of"]
SEPARATORS = [" ", "  ", "\t", " \u3000"]

SEED_TRUTH = (
    "baccalaureate and beyond longitudinal study|baccalaureate and beyond|beginning "
    "postsecondary student|education longitudinal study|national education longitudinal study"
)
SEED_PRED = "postsecondary student|education longitudinal study|xyz"


@st.composite
def segment(draw, allow_blank=True):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=0 if allow_blank else 1, max_size=4))
    pad = draw(st.sampled_from(["", " "]))
    return pad + draw(st.sampled_from(SEPARATORS)).join(words) + pad


@st.composite
def cell(draw, allow_blank=True):
    segments = draw(st.lists(segment(allow_blank), min_size=0 if allow_blank else 1, max_size=4))
    return "|".join(segments)


def cell_pairs(allow_blank=True):
    return st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(cell(allow_blank), min_size=n, max_size=n),
            st.lists(cell(allow_blank), min_size=n, max_size=n),
        )
    )


def test_seed_000_worked_example_reproduces():
    expected = ColeridgeEvaluation.evaluate_samples([SEED_TRUTH], [SEED_PRED])
    assert coleridge_fbeta(labels(SEED_TRUTH), labels(SEED_PRED)) == expected
    assert coleridge_counts(labels(SEED_TRUTH), labels(SEED_PRED)) == (3, 1, 2)


@metric_settings
@given(cell_pairs(), st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from([0.5, 0.3, 1.0, 0.01]))
def test_equals_the_corrected_reference_on_any_input(pair, beta, threshold):
    truth, pred = pair
    expected = coleridge_corrected(truth, pred, beta=beta, threshold=threshold)
    assert (
        coleridge_fbeta(labels(*truth), labels(*pred), beta=beta, threshold=threshold) == expected
    )


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@metric_settings
@given(cell_pairs(allow_blank=False))
def test_equals_seed_000_where_the_seed_is_right(pair):
    truth, pred = pair
    seed = ColeridgeEvaluation.evaluate_samples(truth, pred)
    ours = coleridge_fbeta(labels(*truth), labels(*pred))
    if math.isnan(seed):
        assert ours == 0.0  # the seed's NaN when nothing matches
    else:
        assert ours == seed


def test_no_true_positive_scores_0_where_the_seed_gives_nan():
    with np.errstate(invalid="ignore", divide="ignore"):
        assert math.isnan(ColeridgeEvaluation.evaluate_samples(["alpha beta"], ["gamma"]))
    assert coleridge_fbeta(labels("alpha beta"), labels("gamma")) == 0.0


def test_empty_cells_and_wordless_segments_contribute_nothing():
    # The seed counts the empty prediction as one false positive.
    assert coleridge_counts(labels("a b", "c d"), labels("a b", "")) == (1, 0, 1)
    assert coleridge_counts(labels(""), labels("a b")) == (0, 1, 0)
    assert coleridge_counts(labels("a b|  |"), labels("| a b |\t")) == (1, 0, 0)
    assert coleridge_fbeta(labels("", " "), labels("", "|")) == 0.0


def test_one_prediction_may_match_several_ground_truths():
    assert coleridge_counts(
        labels("national survey|national survey data"), labels("national survey")
    ) == (
        2,
        0,
        0,
    )


def test_ties_go_to_the_first_prediction_in_code_point_order():
    # "B d" sorts before "a c" (uppercase first). Both have Jaccard 1/3 with "a b"; taking "B d"
    # leaves "a c" for the second truth, so nothing is a false positive.
    assert coleridge_counts(labels("a b|a c"), labels("a c|B d"), threshold=0.3) == (2, 0, 0)
    # Had the tie gone to "a c", "B d" would be unmarked.
    assert coleridge_counts(labels("a b|a c"), labels("a c|b d"), threshold=0.3) == (2, 1, 0)


def test_words_are_lower_cased_before_comparing():
    assert coleridge_fbeta(labels("ÉCOLE Normale"), labels("école normale")) == 1.0


def test_threshold_and_beta_are_validated():
    metric = get_metric("coleridge_fbeta")
    assert metric.parse_params({}).model_dump() == {"beta": 0.5, "threshold": 0.5}
    for bad in ({"threshold": 0}, {"threshold": 1.5}, {"beta": -1}, {"beta": float("inf")}):
        with pytest.raises(MetricParamsError):
            metric.parse_params(bad)


def test_cells_holding_the_internal_markers_are_still_split_correctly():
    from app.metrics._text import _ROW_BREAK
    from app.metrics.coleridge import _SEGMENT_BREAK

    truth = [f"a b|{_ROW_BREAK} c", "d e"]
    pred = [f"{_ROW_BREAK} C|a b", f"d {_SEGMENT_BREAK}"]
    expected = coleridge_corrected(truth, pred)
    assert coleridge_fbeta(labels(*truth), labels(*pred)) == expected
    assert coleridge_counts(labels(*truth), labels(*pred)) == (2, 1, 1)


def test_many_rows_of_realistic_titles_equal_the_corrected_reference():
    rng = np.random.default_rng(11)
    words = [
        "national",
        "education",
        "longitudinal",
        "study",
        "survey",
        "of",
        "the",
        "Data",
        "data",
    ]
    titles = [" ".join(rng.choice(words, rng.integers(1, 5))) for _ in range(60)]

    def cell():
        return "|".join(rng.choice(titles, rng.integers(0, 4)))

    truth = [cell() for _ in range(1500)]
    pred = [cell() if rng.random() < 0.5 else t for t in truth]
    for threshold in (0.5, 0.25):
        expected = coleridge_corrected(truth, pred, threshold=threshold)
        assert coleridge_fbeta(labels(*truth), labels(*pred), threshold=threshold) == expected
