"""Paired comparisons and rank bands: equal teams share a band, the test keeps its level, and a
small real difference between correlated submissions is found."""

from math import erf

import numpy as np
import pytest

from app.honest.compare import compare, holm, rank_bands
from app.honest.delong import delong, delong_paired_se
from app.honest.plans import make_plan
from app.honest.replicates import run
from app.honest.resample import Resamples


def _accuracy_reps(correct: np.ndarray, resamples: Resamples):
    ones = np.ones(correct.size, dtype=np.intp)
    return run(make_plan("accuracy", None, correct.astype(np.intp), ones), resamples)


def test_holm_steps_down_and_stops_at_the_first_acceptance():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Sorted: 0.005 ≤ .05/4, 0.01 ≤ .05/3, 0.03 > .05/2: stop; 0.04 is not rejected either.
    assert holm(p).tolist() == [True, False, False, True]
    assert holm(np.array([0.2, 0.3])).tolist() == [False, False]


def test_ten_equal_submissions_share_one_band():
    shared = 0
    seeds = 100
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        n = 1000
        resamples = Resamples(n, seed=seed, replicates=400)
        reps = [_accuracy_reps(rng.random(n) < 0.75, resamples) for _ in range(10)]
        bands = rank_bands(
            np.array([r.point for r in reps]),
            np.stack([r.values for r in reps]),
            greater_is_better=True,
        )
        shared += bool(np.all(bands == 1))
    assert shared / seeds >= 0.90


def test_clearly_different_teams_get_their_own_bands():
    rng = np.random.default_rng(0)
    n = 5000
    resamples = Resamples(n, seed=1, replicates=500)
    qualities = [0.9, 0.8, 0.8, 0.7]
    reps = [_accuracy_reps(rng.random(n) < q, resamples) for q in qualities]
    points = np.array([r.point for r in reps])
    bands = rank_bands(points, np.stack([r.values for r in reps]), greater_is_better=True)
    assert bands.tolist() == [1, 2, 2, 4]
    # On a loss the same numbers rank the other way round.
    losses = rank_bands(-points, -np.stack([r.values for r in reps]), greater_is_better=False)
    assert losses.tolist() == [1, 2, 2, 4]


def test_the_one_sided_test_keeps_its_level():
    rejections = 0
    seeds = 1000
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        n = 300
        resamples = Resamples(n, seed=seed, replicates=400)
        a = _accuracy_reps(rng.random(n) < 0.7, resamples)
        b = _accuracy_reps(rng.random(n) < 0.7, resamples)
        rejections += compare(a, b, greater_is_better=True).p_value < 0.05
    assert rejections / seeds <= 0.06


def _correlated_pair(rng: np.random.Generator, n: int):
    """B is A plus noise of sd 0.18. With unit noise around a shift of 1.5, AUC = Φ(1.5 / √(2v))
    for a total noise variance v: 1.04 for A, 1.0724 for B."""
    y = (rng.random(n) < 0.5).astype(np.float64)
    latent = y * 1.5 + rng.normal(0, 1, n)
    a = latent + rng.normal(0, 0.2, n)
    b = a + rng.normal(0, 0.18, n)
    return y, a, b


def test_a_small_real_auc_difference_between_correlated_submissions_is_significant():
    def phi(x: float) -> float:
        return 0.5 * (1 + erf(x / np.sqrt(2)))

    true_a = phi(1.5 / np.sqrt(2 * (1 + 0.04)))
    true_b = phi(1.5 / np.sqrt(2 * (1 + 0.04 + 0.18**2)))
    assert true_a - true_b == pytest.approx(0.0037, abs=0.0001)
    for seed in range(5):
        rng = np.random.default_rng(seed)
        y, a, b = _correlated_pair(rng, 20_000)
        resamples = Resamples(20_000, seed=seed, replicates=1000)
        ra = run(make_plan("roc_auc", None, y, a), resamples)
        rb = run(make_plan("roc_auc", None, y, b), resamples)
        result = compare(ra, rb, greater_is_better=True)
        assert result.p_value < 0.05
        assert result.difference.low > 0
        # The bootstrap standard error agrees with DeLong's.
        assert result.difference.se == pytest.approx(delong_paired_se(y, a, b), rel=0.15)


def test_delong_matches_the_pairwise_definition():
    rng = np.random.default_rng(2)
    y = (rng.random(80) < 0.4).astype(np.float64)
    scores = np.column_stack([np.round(y + rng.normal(0, 1, 80), 1), y + rng.normal(0, 2, 80)])
    aucs, cov = delong(y, scores)
    pos, neg = scores[y == 1], scores[y == 0]
    psi = (pos[:, None, :] > neg[None, :, :]) + 0.5 * (pos[:, None, :] == neg[None, :, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    assert np.allclose(aucs, psi.mean(axis=(0, 1)))
    expected = np.cov(v10, rowvar=False) / len(pos) + np.cov(v01, rowvar=False) / len(neg)
    assert np.allclose(cov, expected)


def test_compare_orients_a_loss_so_that_positive_means_better():
    rng = np.random.default_rng(5)
    n = 3000
    y = rng.normal(0, 1, n)
    good, bad = y + rng.normal(0, 0.5, n), y + rng.normal(0, 0.8, n)
    resamples = Resamples(n, seed=3, replicates=300)
    ra = run(make_plan("rmse", None, y, good), resamples)
    rb = run(make_plan("rmse", None, y, bad), resamples)
    result = compare(ra, rb, greater_is_better=False)
    assert result.difference.point > 0 and result.p_value < 0.001
    assert compare(rb, ra, greater_is_better=False).p_value > 0.999
