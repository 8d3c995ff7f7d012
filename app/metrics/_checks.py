"""Validators shared by the metric functions (the role of scikit-learn's ``_check_targets``)."""

import numpy as np

from app.metrics.errors import MetricInputError


def check_same_length(y_true: np.ndarray, y_pred: np.ndarray) -> None:
    if len(y_true) != len(y_pred):
        raise MetricInputError(
            f"the answer key has {len(y_true)} rows but the predictions have {len(y_pred)}"
        )
    if len(y_true) == 0:
        raise MetricInputError("there are no rows to score", source="answer_key")


def check_binary_target(y_true: np.ndarray) -> np.ndarray:
    """Return a boolean positive mask; refuse labels other than 0/1 and a one-class key."""
    positive = y_true == 1
    bad = np.flatnonzero(~(positive | (y_true == 0)))
    if bad.size:
        raise MetricInputError(
            f"answer key labels must be 0 or 1; {bad.size} rows hold other values",
            rows=bad,
            source="answer_key",
        )
    n_pos = int(positive.sum())
    if n_pos == 0 or n_pos == len(y_true):
        raise MetricInputError(
            "the answer key holds only one class, so this metric is undefined",
            source="answer_key",
        )
    return positive
