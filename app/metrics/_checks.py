"""Validators shared by the metric functions (the role of scikit-learn's ``_check_targets``).

Each raises :class:`MetricInputError` naming whose data is at fault and, where single rows are to
blame, their positions, so the scoring layer can name the ids.
"""

import numpy as np

from app.metrics.errors import MetricInputError


def check_same_length(y_true: np.ndarray, y_pred: np.ndarray) -> None:
    if len(y_true) != len(y_pred):
        raise MetricInputError(
            f"the answer key has {len(y_true)} rows but the predictions have {len(y_pred)}"
        )
    if len(y_true) == 0:
        raise MetricInputError("there are no rows to score", source="answer_key")


def check_one_column(y_true: np.ndarray, y_pred: np.ndarray) -> None:
    """Both arrays 1-D (one target column) and of the same non-zero length."""
    for who, arr in (("answer_key", y_true), ("submission", y_pred)):
        if np.ndim(arr) != 1:
            raise MetricInputError(
                f"this metric takes exactly one target column, got an array of shape "
                f"{np.shape(arr)}",
                source=who,
            )
    check_same_length(y_true, y_pred)


def check_columns(y_true: np.ndarray, y_pred: np.ndarray, *, min_columns: int = 1) -> None:
    """Both arrays 2-D (rows, columns) with the same shape and at least ``min_columns`` columns."""
    for who, arr in (("answer_key", y_true), ("submission", y_pred)):
        if np.ndim(arr) != 2:
            raise MetricInputError(
                f"this metric takes a table of target columns, got an array of shape "
                f"{np.shape(arr)}",
                source=who,
            )
    check_same_length(y_true, y_pred)
    if y_true.shape[1] != y_pred.shape[1]:
        raise MetricInputError(
            f"the answer key has {y_true.shape[1]} target columns but the predictions have "
            f"{y_pred.shape[1]}"
        )
    if y_true.shape[1] < min_columns:
        raise MetricInputError(
            f"this metric needs at least {min_columns} target columns, the answer key has "
            f"{y_true.shape[1]}",
            source="answer_key",
        )


def check_zero_one(y_true: np.ndarray) -> np.ndarray:
    """Return ``y_true == 1`` as booleans; refuse any answer-key value other than 0 or 1."""
    positive: np.ndarray = y_true == 1
    bad = ~(positive | (y_true == 0))
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1) if bad.ndim == 2 else bad)
        raise MetricInputError(
            f"answer key labels must be 0 or 1; {rows.size} rows hold other values",
            rows=rows,
            source="answer_key",
        )
    return positive


def check_binary_target(y_true: np.ndarray) -> np.ndarray:
    """Return a boolean positive mask; refuse labels other than 0/1 and a one-class key."""
    positive = check_zero_one(y_true)
    n_pos = int(positive.sum())
    if n_pos == 0 or n_pos == len(y_true):
        raise MetricInputError(
            "the answer key holds only one class, so this metric is undefined",
            source="answer_key",
        )
    return positive


def check_probabilities(y_prob: np.ndarray) -> None:
    """Refuse predicted probabilities outside [0, 1]."""
    bad = (y_prob < 0) | (y_prob > 1)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1) if bad.ndim == 2 else bad)
        raise MetricInputError(
            f"probabilities must lie in [0, 1]; {rows.size} rows hold values outside it",
            rows=rows,
        )


def check_sample_weight(sample_weight: np.ndarray | None, n_rows: int) -> None:
    if sample_weight is None:
        return
    if np.ndim(sample_weight) != 1 or len(sample_weight) != n_rows:
        raise MetricInputError(
            f"the weight column must hold one weight per row ({n_rows}), got shape "
            f"{np.shape(sample_weight)}",
            source="answer_key",
        )
    if not np.all(np.isfinite(sample_weight)):
        rows = np.flatnonzero(~np.isfinite(sample_weight))
        raise MetricInputError(
            "the weight column holds non-finite weights", rows=rows, source="answer_key"
        )
    if np.sum(sample_weight) == 0:
        raise MetricInputError(
            "the weights of the scored rows sum to zero, so their mean is undefined",
            source="answer_key",
        )
