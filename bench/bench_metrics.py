"""Benchmark: every registered metric on 1M rows against scikit-learn (or the reference code).

    python bench/bench_metrics.py [--rows 1000000]

Prints one line per metric: Podium's time, the reference's time on the same arrays, and the
ratio (Podium / reference; below 1 means Podium is faster). References that loop over rows in
Python are timed on a slice and scaled linearly to the full row count; those lines say so.
scikit-learn is a test dependency, not a runtime one; the Kaggle and seed references live in
tests/metrics/metric_references.py.
"""

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn import metrics as skm  # noqa: E402
from sklearn.preprocessing import MultiLabelBinarizer  # noqa: E402

from app.metrics import all_metrics  # noqa: E402
from tests.metrics.metric_references import (  # noqa: E402
    ColeridgeEvaluation,
    kaggle_pfbeta,
    mapk,
)

N_CLASSES = 5
WORDS = np.array([f"w{i}" for i in range(400)], dtype=object)


def _best_time(fn: Callable[[], object], budget: float = 1.0, max_runs: int = 30) -> float:
    """Best of several runs: at least 3 for anything under a second, more for quick ones."""
    best, spent, runs = float("inf"), 0.0, 0
    while runs < max_runs and (runs < 3 or spent < budget) and (runs == 0 or spent < 3 * budget):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
    return best


def _join(
    rng: np.random.Generator, n: int, lo: int, hi: int, sep: str, vocab: np.ndarray
) -> np.ndarray:
    counts = rng.integers(lo, hi + 1, n)
    words = vocab[rng.integers(0, len(vocab), counts.sum())]
    out = np.empty(n, dtype=object)
    start = 0
    for i, c in enumerate(counts.tolist()):  # data generation only, not timed
        out[i] = sep.join(words[start : start + c])
        start += c
    return out


def make_data(n: int, seed: int = 0) -> dict[str, tuple]:
    rng = np.random.default_rng(seed)
    names = np.array(["cat", "dog", "emu", "fox", "gnu"], dtype=object)
    lab_true = names[rng.integers(0, 5, n)]
    lab_pred = np.where(rng.random(n) < 0.6, lab_true, names[rng.integers(0, 5, n)])
    binary = (rng.random(n) < 0.3).astype(np.float64)
    score = np.clip(binary * 0.3 + rng.random(n) * 0.7, 0, 1)
    classes = rng.integers(0, N_CLASSES, n)
    onehot = np.eye(N_CLASSES)[classes]
    proba = rng.random((n, N_CLASSES))
    proba /= proba.sum(axis=1, keepdims=True)
    multilabel = (rng.random((n, N_CLASSES)) < 0.3).astype(np.float64)
    multilabel_score = np.round(multilabel * 0.2 + rng.random((n, N_CLASSES)), 2)
    reg_true = rng.gamma(2.0, 2.0, n)
    reg_pred = np.abs(reg_true + rng.normal(0, 1, n))
    ratings_true = rng.integers(0, 6, n).astype(np.float64)
    ratings_pred = np.clip(ratings_true + rng.integers(-1, 2, n), 0, 5).astype(np.float64)
    items = WORDS[:200]
    map_true = _join(rng, n, 0, 3, " ", items)
    map_pred = _join(rng, n, 10, 10, " ", items[:40])
    tags_true = _join(rng, n, 0, 4, " ", items[:50])
    tags_pred = _join(rng, n, 0, 4, " ", items[:50])
    phrases = _join(rng, 5000, 2, 5, " ", WORDS)
    col_true = _join(rng, n, 1, 3, "|", phrases)
    col_pred = np.where(rng.random(n) < 0.5, col_true, _join(rng, n, 0, 3, "|", phrases))
    return {
        "label": (lab_true, lab_pred),
        "binary": (binary, score),
        "onehot": (onehot, proba, classes),
        "multilabel": (multilabel, multilabel_score),
        "regression": (reg_true, reg_pred),
        "ratings": (ratings_true, ratings_pred),
        "map": (map_true, map_pred),
        "tags": (tags_true, tags_pred),
        "coleridge": (col_true, col_pred),
    }


def _mlb_micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    true_sets = [set(s.split()) for s in y_true]
    pred_sets = [set(s.split()) for s in y_pred]
    binarizer = MultiLabelBinarizer(sparse_output=True).fit(true_sets + pred_sets)
    return skm.f1_score(
        binarizer.transform(true_sets),
        binarizer.transform(pred_sets),
        average="micro",
        zero_division=0,
    )


class Case(NamedTuple):
    data: str  # key into make_data()
    params: dict
    reference_name: str
    reference: Callable[..., object]  # reference(y_true, y_pred, *rest)
    fraction: float = 1.0  # of the rows the reference is timed on (slow Python loops)


def _sk_f1(average: str | None, **kw: object) -> Callable[..., object]:
    return lambda t, p: skm.f1_score(t, p, average=average, zero_division=0, **kw)


def _sk_per_class(fn: Callable[..., object]) -> Callable[..., object]:
    return lambda t, p: fn(t, p, labels=["dog"], average=None, zero_division=0)


def _hamner_mapk(t: np.ndarray, p: np.ndarray) -> object:
    return mapk([s.split() for s in t], [s.split() for s in p], 10)


CASES: dict[str, Case] = {
    "accuracy": Case("label", {}, "sklearn accuracy_score", skm.accuracy_score),
    "macro_f1": Case("label", {}, "sklearn f1_score(macro)", _sk_f1("macro")),
    "micro_f1": Case("label", {}, "sklearn f1_score(micro)", _sk_f1("micro")),
    "class_precision": Case(
        "label", {"label": "dog"}, "sklearn precision_score(labels=[l])",
        _sk_per_class(skm.precision_score),
    ),
    "class_recall": Case(
        "label", {"label": "dog"}, "sklearn recall_score(labels=[l])",
        _sk_per_class(skm.recall_score),
    ),
    "class_f1": Case(
        "label", {"label": "dog"}, "sklearn f1_score(labels=[l])", _sk_per_class(skm.f1_score)
    ),
    "roc_auc": Case("binary", {}, "sklearn roc_auc_score", skm.roc_auc_score),
    "mean_columnwise_roc_auc": Case(
        "multilabel", {}, "sklearn roc_auc_score(macro)",
        lambda t, p: skm.roc_auc_score(t, p, average="macro"),
    ),
    "log_loss_binary": Case("binary", {}, "sklearn log_loss", skm.log_loss),
    "log_loss_multiclass": Case(
        "onehot", {}, "sklearn log_loss",
        lambda t, p, c: skm.log_loss(c, p, labels=list(range(N_CLASSES))),
    ),
    "pfbeta": Case(
        "binary", {}, "Kaggle pfbeta (Python loop)", lambda t, p: kaggle_pfbeta(t, p, 1), 0.2
    ),
    "label_ranking_loss": Case(
        "multilabel", {}, "sklearn label_ranking_loss", skm.label_ranking_loss, 0.1
    ),
    "coverage_error": Case("multilabel", {}, "sklearn coverage_error", skm.coverage_error),
    "label_ranking_average_precision": Case(
        "multilabel", {}, "sklearn LRAP score", skm.label_ranking_average_precision_score, 0.1
    ),
    "map_at_k": Case("map", {"k": 10}, "Hamner mapk (+ split)", _hamner_mapk, 0.1),
    "rmse": Case("regression", {}, "sklearn root_mean_squared_error", skm.root_mean_squared_error),
    "mae": Case("regression", {}, "sklearn mean_absolute_error", skm.mean_absolute_error),
    "r2": Case("regression", {}, "sklearn r2_score", skm.r2_score),
    "rmsle": Case(
        "regression", {}, "sklearn root_mean_squared_log_error", skm.root_mean_squared_log_error
    ),
    "quadratic_weighted_kappa": Case(
        "ratings", {}, "sklearn cohen_kappa_score(quadratic)",
        lambda t, p: skm.cohen_kappa_score(t, p, weights="quadratic"),
    ),
    "multilabel_micro_f1": Case(
        "tags", {}, "sklearn MultiLabelBinarizer + f1_score(micro)", _mlb_micro_f1, 0.2
    ),
    "coleridge_fbeta": Case(
        "coleridge", {}, "seed 000 ColeridgeEvaluation", ColeridgeEvaluation.evaluate_samples, 0.02
    ),
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", nargs="*", help="metric names to run (default: all)")
    args = parser.parse_args()
    n = args.rows
    warnings.filterwarnings("ignore")
    data = make_data(n)
    print(f"{n:,} rows; ratio = Podium / reference (< 1: Podium faster)\n")
    header = f"{'metric':<33}{'podium s':>10}{'ref s':>10}{'ratio':>8}  reference"
    print(header)
    print("-" * (len(header) + 30))
    worst = 0.0
    for metric in all_metrics():
        if args.only and metric.name not in args.only:
            continue
        case = CASES[metric.name]
        y_true, y_pred, *rest = data[case.data]
        ours = _best_time(partial(metric.compute, y_true, y_pred, metric.parse_params(case.params)))
        m = max(1, int(n * case.fraction))
        ref = _best_time(partial(case.reference, y_true[:m], y_pred[:m], *[r[:m] for r in rest]))
        ref *= n / m
        ratio = ours / ref
        worst = max(worst, ratio)
        note = "" if m == n else f"  [timed on {m:,} rows, scaled x{n / m:g}]"
        print(
            f"{metric.name:<33}{ours:>10.3f}{ref:>10.3f}{ratio:>8.3f}  {case.reference_name}{note}"
        )
    print(f"\nslowest ratio: {worst:.3f}")


if __name__ == "__main__":
    main()
