"""Factories for metric tests: label arrays, and a valid example input for every registered metric.

``example_inputs`` builds data from the metric's declared cell kind and column count, so a new
metric gets the common tests without touching this file; only a metric that needs more than the
generic data (a required param, integer ratings) has an entry in ``SPECIAL``.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings

from app.metrics import Metric

# Applied per test rather than as a global profile, so other suites' hypothesis settings stay.
metric_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def labels(*values: str) -> np.ndarray:
    """An object array of str, as the intake hands label cells to a metric."""
    return np.array(list(values), dtype=object)


@dataclass
class Example:
    y_true: np.ndarray
    y_pred: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def perfect(self) -> np.ndarray:
        return self.y_true.copy()


N_ROWS = 40
N_COLUMNS = 4
ALPHABET = ["a", "b", "c", "NA", "é", "Ünï"]
WORDS = ["alpha", "beta", "Gamma", "gamma", "delta", "日本", "x"]


def _numbers_one(rng: np.random.Generator) -> Example:
    y_true = np.tile([0.0, 1.0], N_ROWS // 2)
    rng.shuffle(y_true)
    return Example(y_true, rng.random(N_ROWS))


def _numbers_many(rng: np.random.Generator) -> Example:
    # One-hot rows cycling through the classes: every column holds both 0 and 1.
    classes = np.arange(N_ROWS) % N_COLUMNS
    rng.shuffle(classes)
    y_true = np.eye(N_COLUMNS)[classes]
    return Example(y_true, rng.random((N_ROWS, N_COLUMNS)))


def _label_one(rng: np.random.Generator) -> Example:
    return Example(labels(*rng.choice(ALPHABET, N_ROWS)), labels(*rng.choice(ALPHABET, N_ROWS)))


def _items_cell(rng: np.random.Generator) -> str:
    n = int(rng.integers(0, 5))
    out = ""
    for i in range(n):
        out += str(rng.choice(WORDS)) + (
            str(rng.choice([" ", "|", " | ", "  "])) if i < n - 1 else ""
        )
    return out


def _labels_one(rng: np.random.Generator) -> Example:
    return Example(
        labels(*(_items_cell(rng) for _ in range(N_ROWS))),
        labels(*(_items_cell(rng) for _ in range(N_ROWS))),
    )


GENERIC: dict[tuple[str, str], Callable[[np.random.Generator], Example]] = {
    ("number", "one"): _numbers_one,
    ("number", "many"): _numbers_many,
    ("label", "one"): _label_one,
    ("labels", "one"): _labels_one,
}


def _with_label_a(rng: np.random.Generator) -> Example:
    ex = _label_one(rng)
    ex.y_true[0] = "a"
    ex.params = {"label": "a"}
    return ex


def _integer_ratings(rng: np.random.Generator) -> Example:
    return Example(
        rng.integers(0, 5, N_ROWS).astype(np.float64), rng.integers(0, 5, N_ROWS).astype(np.float64)
    )


SPECIAL: dict[str, Callable[[np.random.Generator], Example]] = {
    "class_precision": _with_label_a,
    "class_recall": _with_label_a,
    "class_f1": _with_label_a,
    "quadratic_weighted_kappa": _integer_ratings,
}


def example_inputs(metric: Metric, seed: int = 0) -> Example:
    rng = np.random.default_rng(seed)
    make = SPECIAL.get(metric.name) or GENERIC[(metric.cell, metric.columns)]
    return make(rng)
