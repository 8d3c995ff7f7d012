"""The parameter-free Ladder's threshold: the exact paired standard error of the difference of two
submissions' scores, s/√n from per-row losses and DeLong's for AUC, checked against sums written
out by hand and against a brute-force O(n²) DeLong."""

import numpy as np
import pytest

from app.honest.engine import ladder as lad
from app.honest.engine.delong import delong_paired_se
from app.honest.engine.paired import has_exact_se, mean_paired_se, paired_se
from app.honest.engine.plans import make_plan
from app.metrics.registry import get_metric


def _se(metric: str, y, new, best) -> float | None:
    params = get_metric(metric).parse_params(None)
    return paired_se(
        metric, make_plan(metric, params, y, np.asarray(new)), make_plan(metric, params, y, best)
    )


def test_accuracy_is_s_over_root_n_of_the_per_row_differences():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    best = np.array([1, 0, 0, 0, 0, 1, 1, 1])  # right on rows 0, 1, 4, 6
    new = np.array([1, 0, 1, 1, 1, 1, 1, 1])  # right on rows 0, 1, 2, 3, 6
    # Per-row differences in "right": rows 2, 3 +1, row 4 −1, the rest 0: mean 1/8,
    # s² = (2 (1 − 1/8)² + (−1 − 1/8)² + 5 (1/8)²) / 7 = 23/56.
    expected = np.sqrt(23 / 56) / np.sqrt(8)
    assert _se("accuracy", y, new, best) == pytest.approx(expected, rel=1e-12)


def test_the_release_decision_sits_at_the_paired_standard_error():
    n = 100
    best = np.zeros(n)
    new = np.r_[np.zeros(90), -np.ones(10)]  # a loss: 10 rows now right, s = 0.3015
    se = float(mean_paired_se(new, best))
    assert se == pytest.approx(np.sqrt((10 * 0.9**2 + 90 * 0.1**2) / 99) / 10, rel=1e-12)
    # The shown value is on the grid 1/n; a release needs strictly more than the SE above it.
    shown = 0.80
    for score, released in ((shown + 0.999 * se, False), (shown + 1.001 * se, True)):
        run = lad.ladder_free([shown, score], lambda t, b: se, n=n, greater_is_better=True)
        assert run.released.tolist() == [True, released]
    # Exactly at the threshold (binary fractions, so no rounding): withheld.
    state = lad.LadderState(0.5, 0)
    assert not lad.advance(state, 0.75, threshold=0.25, grid=0.25, greater_is_better=True)[1]
    assert lad.advance(state, 0.25, threshold=0.25, grid=0.25, greater_is_better=False)[1] is False


def test_log_loss_and_mae_use_their_per_row_losses():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 50)
    a, b = rng.random(50), rng.random(50)
    rows = lambda p: -np.log(np.where(y == 1, p, 1 - p))  # noqa: E731
    assert _se("log_loss_binary", y, a, b) == pytest.approx(
        np.std(rows(a) - rows(b), ddof=1) / np.sqrt(50)
    )
    t = rng.normal(size=50)
    assert _se("mae", t, a, b) == pytest.approx(
        np.std(np.abs(a - t) - np.abs(b - t), ddof=1) / np.sqrt(50)
    )


def test_rmse_and_r2_follow_from_the_squared_errors():
    rng = np.random.default_rng(2)
    y = rng.normal(size=200)
    a = y + rng.normal(0, 0.5, 200)
    b = y + rng.normal(0, 0.6, 200)
    d = (a - y) ** 2 - (b - y) ** 2
    mse_se = np.std(d, ddof=1) / np.sqrt(200)
    rmse_a, rmse_b = np.sqrt(np.mean((a - y) ** 2)), np.sqrt(np.mean((b - y) ** 2))
    assert _se("rmse", y, a, b) == pytest.approx(mse_se / (rmse_a + rmse_b))
    total = np.sum((y - y.mean()) ** 2)
    assert _se("r2", y, a, b) == pytest.approx(200 * mse_se / total)


def _brute_force_delong(y: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """DeLong et al. (1988) from their definitions, pair by pair."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)

    def psi(x: float, z: float) -> float:
        return 1.0 if x > z else 0.5 if x == z else 0.0

    def components(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v10 = np.array([np.mean([psi(s[i], s[j]) for j in neg]) for i in pos])
        v01 = np.array([np.mean([psi(s[i], s[j]) for i in pos]) for j in neg])
        return v10, v01

    (a10, a01), (b10, b01) = components(a), components(b)
    m, n = pos.size, neg.size
    s10 = np.cov(np.vstack([a10, b10]))
    s01 = np.cov(np.vstack([a01, b01]))
    var = (s10[0, 0] + s10[1, 1] - 2 * s10[0, 1]) / m + (s01[0, 0] + s01[1, 1] - 2 * s01[0, 1]) / n
    return float(np.sqrt(var))


@pytest.mark.parametrize("seed", range(3))
def test_auc_uses_delongs_paired_standard_error(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 60)
    a = np.round(y * 0.8 + rng.normal(size=60), 1)  # rounded: ties within and across classes
    b = np.round(a + rng.normal(0, 0.7, 60), 1)
    expected = _brute_force_delong(y, a, b)
    assert _se("roc_auc", y, a, b) == pytest.approx(expected, rel=1e-10)
    assert delong_paired_se(y, a, b) == pytest.approx(expected, rel=1e-10)


def test_metrics_without_a_per_row_decomposition_fall_back():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 40)
    a, b = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
    for metric in ("macro_f1", "quadratic_weighted_kappa"):
        assert not has_exact_se(metric)
        assert _se(metric, y, a, b) is None
    for metric in ("accuracy", "roc_auc", "log_loss_binary", "rmse", "r2"):
        assert has_exact_se(metric)


def test_the_attack_and_the_service_share_the_standard_error():
    # The attack scores every candidate against the best at once; one row gives the same figure.
    rng = np.random.default_rng(4)
    rows = rng.integers(0, 2, (5, 30)).astype(float)
    together = mean_paired_se(rows, rows[0])
    for k, candidate in enumerate(rows):
        assert together[k] == pytest.approx(float(mean_paired_se(candidate, rows[0])))
    assert together[0] == 0.0
