"""The shake-up report: rank statistics agree with scipy, honest competitions are rarely flagged,
and teams that probed the public board are."""

import numpy as np
import pytest
from scipy import stats

from app.honest.engine.plans import make_plan
from app.honest.engine.replicates import run
from app.honest.engine.resample import Resamples
from app.honest.engine.shakeup import kendall_tau_b, midranks, null_gaps, shakeup, spearman


def test_rank_statistics_agree_with_scipy():
    rng = np.random.default_rng(0)
    a = np.round(rng.normal(size=60), 1)  # ties on purpose
    b = np.round(a + rng.normal(size=60), 1)
    ra, rb = midranks(a, greater_is_better=True), midranks(b, greater_is_better=True)
    assert np.allclose(ra, stats.rankdata(-a))
    assert spearman(ra, rb) == pytest.approx(stats.spearmanr(a, b).statistic)
    assert kendall_tau_b(ra, rb) == pytest.approx(stats.kendalltau(a, b).statistic)


def _competition(rng: np.random.Generator, *, teams: int, boosters: int, n: int = 600):
    """Honest teams submit one model. A booster tries 1000 models of the same true quality
    (1000 seeds, say) and keeps the one the public board liked best."""
    labels = rng.integers(0, 2, n)
    public = np.zeros(n, dtype=bool)
    public[rng.choice(n, n // 3, replace=False)] = True
    finals = []
    for team in range(teams):
        skill = rng.uniform(0.6, 0.8)
        tries = 1000 if team < boosters else 1
        models = np.where(rng.random((tries, n)) < skill, labels, 1 - labels)
        public_scores = (models[:, public] == labels[public]).mean(axis=1)
        finals.append(models[int(np.argmax(public_scores))])
    return labels, public, finals


def _report(labels, public, finals, seed, *, intervals=True):
    plans = [make_plan("accuracy", None, labels, f) for f in finals]
    pub = np.array([(f[public] == labels[public]).mean() for f in finals])
    priv = np.array([(f[~public] == labels[~public]).mean() for f in finals])
    null = null_gaps(plans, public, greater_is_better=True, resplits=1000, seed=seed)
    if not intervals:
        return shakeup(pub, priv, greater_is_better=True, null=null)
    pub_res = Resamples(int(public.sum()), seed=seed, replicates=200)
    priv_res = Resamples(int((~public).sum()), seed=seed + 1, replicates=200)
    pub_reps = np.stack(
        [
            run(make_plan("accuracy", None, labels[public], f[public]), pub_res).values
            for f in finals
        ]
    )
    priv_reps = np.stack(
        [
            run(make_plan("accuracy", None, labels[~public], f[~public]), priv_res).values
            for f in finals
        ]
    )
    return shakeup(
        pub,
        priv,
        greater_is_better=True,
        null=null,
        public_replicates=pub_reps,
        private_replicates=priv_reps,
    )


def test_competitions_without_adaptivity_are_rarely_flagged():
    """The flag is a permutation test of size 5 %: the actual split is one more random split."""
    flagged = 0
    competitions = 200
    for seed in range(competitions):
        labels, public, finals = _competition(np.random.default_rng(seed), teams=8, boosters=0)
        report = _report(labels, public, finals, seed, intervals=False)
        flagged += report.adaptive_overfitting
    assert flagged / competitions <= 0.05


def test_competitions_with_boosting_teams_are_flagged():
    for seed in range(10):
        labels, public, finals = _competition(np.random.default_rng(seed), teams=10, boosters=5)
        report = _report(labels, public, finals, seed)
        assert report.adaptive_overfitting
        assert report.gap > report.null_p95
        assert report.gap_low < report.gap < report.gap_high
        assert report.p_value < 0.05


def test_the_report_names_the_movement():
    pub = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    priv = np.array([0.5, 0.6, 0.7, 0.8, 0.9])  # the board turns upside down
    report = shakeup(pub, priv, greater_is_better=True, null=np.zeros(10))
    assert report.spearman == pytest.approx(-1.0)
    assert report.kendall == pytest.approx(-1.0)
    assert report.mean_abs_rank_change == pytest.approx((4 + 2 + 0 + 2 + 4) / 5 / 5)
    assert report.mean_abs_rank_change_top == pytest.approx(4 / 5)  # the top 10 %: one team
    assert report.gap == pytest.approx(0.0)
