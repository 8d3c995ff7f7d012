"""Paired comparisons and rank bands: equal teams share a band, the test keeps its level, and a
small real difference between correlated submissions is found."""

from math import erf

import numpy as np
import pytest

from app.honest.engine.compare import compare, holm, rank_bands
from app.honest.engine.delong import delong, delong_paired_se
from app.honest.engine.plans import make_plan
from app.honest.engine.replicates import run
from app.honest.engine.resample import Resamples


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


def _bands_over_every_pair(points, replicates, greater_is_better, alpha=0.05):
    """Rank bands by their definition: every pair's p-value, then Holm over all of them."""
    sign = 1.0 if greater_is_better else -1.0
    reps = sign * replicates
    reps = reps[:, np.all(np.isfinite(reps), axis=0)]
    n = points.size
    cov = np.atleast_2d(np.cov(reps)) if reps.shape[1] > 1 else np.zeros((n, n))
    i, j = np.triu_indices(n, k=1)
    diff = sign * (points[i] - points[j])
    se = np.sqrt(np.maximum(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(diff) / se, np.where(diff != 0, np.inf, 0.0))
    p = np.minimum(1.0, 2 * (1 - np.array([0.5 * (1 + erf(v / 2**0.5)) for v in z])))
    rejected = holm(p, alpha)
    better = np.zeros(n, dtype=np.int64)
    np.add.at(better, np.where(diff > 0, j, i)[rejected], 1)
    return 1 + better


def test_bands_computed_by_windows_equal_those_over_every_pair():
    rng = np.random.default_rng(13)
    for case in range(300):
        n = int(rng.integers(2, 80))
        b = int(rng.choice([1, 2, 50, 200]))
        spread = float(rng.choice([0.0, 0.001, 0.01, 0.1]))
        quality = rng.normal(0.7, spread, n)
        if case % 5 == 0:
            quality[rng.integers(0, n, n // 2)] = 0.7  # exact ties
        noise = rng.normal(0, float(rng.choice([0.002, 0.01])), (n, b))
        common = rng.normal(0, 0.01, b)  # shared resamples: correlated replicates
        replicates = quality[:, None] + common[None, :] + noise
        if case % 7 == 0:
            replicates[rng.integers(0, n)] = quality[0]  # a team without variance
        if case % 11 == 0 and b > 2:
            replicates[rng.integers(0, n), rng.integers(0, b)] = np.nan
        points = np.round(quality, 4)
        greater = bool(case % 2)
        if not greater:
            points, replicates = -points, -replicates
        expected = _bands_over_every_pair(points, replicates, greater)
        got = rank_bands(points, replicates, greater_is_better=greater)
        assert got.tolist() == expected.tolist(), case


def test_bands_of_a_large_spread_board_equal_those_over_every_pair():
    rng = np.random.default_rng(5)
    n, b = 600, 300
    quality = np.sort(rng.normal(0.8, 0.02, n))
    replicates = quality[:, None] + rng.normal(0, 0.003, (n, b)) + rng.normal(0, 0.003, b)
    expected = _bands_over_every_pair(quality, replicates, True)
    assert rank_bands(quality, replicates, greater_is_better=True).tolist() == expected.tolist()
    assert 1 < len(set(expected.tolist())) < n


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
