"""Bootstrap intervals: the plans reproduce the metrics, replicates equal the metric on the
resampled rows, resamples are reproducible, and 95 % intervals cover 95 % of the time."""

from math import erf

import numpy as np
import pytest

from app.honest.engine.intervals import bootstrap_interval
from app.honest.engine.plans import (
    INTERVAL_METRICS,
    UnsupportedMetric,
    make_plan,
    supports_intervals,
)
from app.honest.engine.replicates import point, run
from app.honest.engine.resample import (
    BLOCK,
    BUCKET,
    SMALL_CELLS,
    Resamples,
    fixed_counts,
    seed_for,
)
from app.metrics import get_metric, metric_names


def _data(name: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
    y = (rng.random(n) < 0.4).astype(np.float64)
    signal = y + rng.normal(0, 1, n)
    if name in ("accuracy", "micro_f1", "macro_f1", "class_precision", "class_recall", "class_f1"):
        labels = np.array(["cat", "dog", "emu"], dtype=object)
        truth = labels[rng.integers(0, 3, n)]
        guess = np.where(rng.random(n) < 0.6, truth, labels[rng.integers(0, 3, n)])
        return truth, guess, ({"label": "dog"} if name.startswith("class_") else {})
    if name in ("roc_auc", "pfbeta"):
        scores = np.round(1 / (1 + np.exp(-signal)), 2)  # rounded: ties on purpose
        return y, scores, {}
    if name == "mean_columnwise_roc_auc":
        y2 = (rng.random((n, 3)) < 0.3).astype(np.float64)
        return y2, np.round(y2 + rng.normal(0, 1, (n, 3)), 1), {}
    if name == "log_loss_binary":
        return y, 1 / (1 + np.exp(-signal)), {}
    if name == "log_loss_multiclass":
        classes = rng.integers(0, 3, n)
        hot = np.eye(3)[classes]
        prob = hot * 2 + rng.random((n, 3))
        return hot, prob / prob.sum(axis=1, keepdims=True), {}
    if name == "quadratic_weighted_kappa":
        truth = rng.integers(0, 5, n).astype(np.float64)
        return truth, np.clip(truth + rng.integers(-1, 2, n), 0, 4), {}
    truth = rng.gamma(2.0, 1.0, n)
    return truth, np.abs(truth + rng.normal(0, 0.5, n)), {}


def test_the_interval_metrics_are_registered_metrics():
    assert INTERVAL_METRICS <= set(metric_names())
    assert supports_intervals("roc_auc") and not supports_intervals("map_at_k")
    with pytest.raises(UnsupportedMetric):
        make_plan("map_at_k", None, np.array(["a"]), np.array(["a"]))


@pytest.mark.parametrize("name", sorted(INTERVAL_METRICS))
def test_the_plan_reproduces_the_metric(name):
    rng = np.random.default_rng(7)
    y_true, y_pred, raw = _data(name, 500, rng)
    metric = get_metric(name)
    params = metric.parse_params(raw)
    expected = metric.compute(y_true, y_pred, params)
    assert point(make_plan(name, params, y_true, y_pred)) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("source", ["resamples", "any counts"])
@pytest.mark.parametrize("name", sorted(INTERVAL_METRICS))
def test_each_replicate_is_the_metric_on_its_resampled_rows(name, source):
    """Resamples (every row sums to n: the count column is known, not multiplied) and a
    plain count matrix whose rows sum to anything give the metric on the repeated rows."""
    rng = np.random.default_rng(11)
    y_true, y_pred, raw = _data(name, 300, rng)
    metric = get_metric(name)
    params = metric.parse_params(raw)
    if source == "resamples":
        resamples = Resamples(300, seed=5, replicates=16)
        counts = resamples.counts()
    else:
        counts = rng.integers(0, 4, size=(16, 300)).astype(np.uint8)
        resamples = fixed_counts(counts)
    rep = run(make_plan(name, params, y_true, y_pred), resamples)
    checked = []
    for b in range(0, 16, 3):
        rows = np.repeat(np.arange(300), counts[b])
        try:
            expected = metric.compute(y_true[rows], y_pred[rows], params)
        except Exception:  # a resample the metric refuses (one class left, say)
            continue
        if name in ("macro_f1", "quadratic_weighted_kappa"):
            # Classes are fixed by the full data; with all of them present the values agree.
            present = np.unique(np.concatenate([y_true[rows], y_pred[rows]])).size
            if present != np.unique(np.concatenate([y_true, y_pred])).size:
                continue
        assert rep.values[b] == pytest.approx(expected, rel=1e-9, abs=1e-12)
        checked.append(b)
    # 300 rows leave every class in every resample: none of the six may slip by unchecked.
    assert checked == list(range(0, 16, 3))


@pytest.mark.parametrize(
    "name", ["accuracy", "macro_f1", "rmse", "r2", "roc_auc", "log_loss_binary"]
)
def test_the_closed_form_jackknife_leaves_one_row_out(name):
    rng = np.random.default_rng(3)
    y_true, y_pred, raw = _data(name, 60, rng)
    metric = get_metric(name)
    params = metric.parse_params(raw)
    rep = run(make_plan(name, params, y_true, y_pred), Resamples(60, seed=1, replicates=8))
    for i in range(0, 60, 7):
        keep = np.arange(60) != i
        assert rep.jackknife[i] == pytest.approx(
            metric.compute(y_true[keep], y_pred[keep], params), rel=1e-9
        )


def test_resamples_are_reproducible_whatever_the_chunking():
    a = Resamples(1000, seed=seed_for("sha-1", "public"), replicates=50)
    b = Resamples(1000, seed=seed_for("sha-1", "public"), replicates=50)
    whole = a.counts()
    assert whole.shape == (50, 1000)
    assert np.all(whole.sum(axis=1) == 1000)  # multinomial: n draws each
    assert np.array_equal(np.concatenate(list(b.chunks(size=8))), whole)
    assert np.array_equal(b.counts(13, 29), whole[13:29])
    assert np.array_equal(a.materialise().counts(), whole)
    other = Resamples(1000, seed=seed_for("sha-2", "public"), replicates=50).counts()
    assert not np.array_equal(other, whole)
    assert seed_for("sha-1", "public") != seed_for("sha-1", "private")


def test_large_resamples_use_threads_and_stay_the_same():
    one = Resamples(600_000, seed=9, replicates=16, threads=1).counts()
    two = Resamples(600_000, seed=9, replicates=16, threads=2).counts()
    assert np.array_equal(one, two)
    # Counts are multinomial(n, 1/n): mean 1, variance 1 - 1/n.
    assert one.mean() == pytest.approx(1.0)
    assert one.var() == pytest.approx(1.0, rel=0.01)


def _reference_row(rng: np.random.Generator, n: int) -> np.ndarray:
    """A large row's stream, written out plainly: the n draws shared among buckets of 2¹⁶ rows
    by a multinomial, each full bucket's draws taken as the 16-bit quarters of the generator's
    raw words (low quarter first), the partial last bucket's by ``integers``."""
    full, last = divmod(n, BUCKET)
    sizes = [BUCKET] * full + ([last] if last else [])
    totals = rng.multinomial(n, np.array(sizes, dtype=np.float64) / n)
    drawn = int(totals[:full].sum())
    raw = rng.bit_generator.random_raw((drawn + 3) // 4)
    quarters = (raw[:, None] >> np.array([0, 16, 32, 48], dtype=np.uint64)) & np.uint64(0xFFFF)
    draws = quarters.ravel()[:drawn].astype(np.int64)
    indices = [draws + np.repeat(np.arange(full) * BUCKET, totals[:full])]
    if last:
        indices.append(full * BUCKET + rng.integers(0, last, size=totals[full], dtype=np.int64))
    return np.bincount(np.concatenate(indices), minlength=n)


@pytest.mark.parametrize("n", [1000, 50_000, 600_000, 3 * BUCKET])
def test_resamples_follow_each_blocks_generator(n):
    """The stream a stored replicate was computed on: block b of BLOCK rows draws from the
    child b of the seed's SeedSequence; a small block in one draw, a large one row by row."""
    seed, replicates = 77, 11
    counts = Resamples(n, seed=seed, replicates=replicates).counts()
    for block in range(0, (replicates + BLOCK - 1) // BLOCK):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(block,))))
        size = min(BLOCK, replicates - block * BLOCK)
        if n * size <= SMALL_CELLS:
            draws = rng.integers(0, n, size=(size, n), dtype=np.int64)
            expected = [np.bincount(draws[r], minlength=n) for r in range(size)]
        elif n < BUCKET:
            expected = [
                np.bincount(rng.integers(0, n, size=n, dtype=np.int64), minlength=n)
                for _ in range(size)
            ]
        else:
            expected = [_reference_row(rng, n) for _ in range(size)]
        for r in range(size):
            assert np.array_equal(counts[block * BLOCK + r], expected[r])


def test_bucketed_counts_are_multinomial():
    """Each row sums to n; each row's count is Binomial(n, 1/n) (mean 1, variance 1 - 1/n)
    inside every bucket, the partial one included; rows are uncorrelated."""
    n = 2 * BUCKET + 1234
    counts = Resamples(n, seed=4, replicates=64).counts().astype(np.float64)
    assert np.all(counts.sum(axis=1) == n)
    for rows in (slice(0, BUCKET), slice(BUCKET, 2 * BUCKET), slice(2 * BUCKET, n)):
        part = counts[:, rows]
        assert part.mean() == pytest.approx(1.0, abs=4 * np.sqrt(1 / part.size))
        assert part.var() == pytest.approx(1.0, rel=0.02)
    share = counts[:, :BUCKET].sum(axis=1)  # a bucket's total: Binomial(n, BUCKET / n)
    p = BUCKET / n
    assert share.mean() == pytest.approx(n * p, abs=4 * np.sqrt(n * p * (1 - p) / 64))
    assert abs(np.corrcoef(counts[0], counts[1])[0, 1]) < 0.01


def test_binormal_auc_intervals_cover_the_true_value():
    """X⁺ ~ N(1, 1), X⁻ ~ N(0, 1): AUC = Φ(1/√2) = 0.76025."""
    true_auc = 0.5 * (1 + erf(0.5))  # Φ(1/√2) = ½(1 + erf(1/2))
    rng = np.random.default_rng(1988)
    trials, n = 400, 200
    percentile = bca = 0
    for trial in range(trials):
        y = np.r_[np.ones(n // 2), np.zeros(n // 2)]
        scores = y + rng.normal(0, 1, n)
        rep = run(make_plan("roc_auc", None, y, scores), Resamples(n, seed=trial, replicates=1000))
        interval = bootstrap_interval(rep)
        percentile += interval.low <= true_auc <= interval.high
        bca += interval.bca_low <= true_auc <= interval.bca_high
    assert 0.92 <= percentile / trials <= 0.97
    assert 0.92 <= bca / trials <= 0.97


def test_accuracy_intervals_cover_the_true_value():
    rng = np.random.default_rng(4)
    trials, n, p = 400, 300, 0.8
    covered = 0
    for trial in range(trials):
        correct = (rng.random(n) < p).astype(np.intp)
        rep = run(
            make_plan("accuracy", None, correct, np.ones(n, dtype=np.intp)),
            Resamples(n, seed=trial, replicates=1000),
        )
        interval = bootstrap_interval(rep)
        covered += interval.bca_low <= p <= interval.bca_high
    assert 0.92 <= covered / trials <= 0.97
