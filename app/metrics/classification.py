"""Single-label classification metrics on arrays of labels."""

import numpy as np

from app.metrics._checks import check_same_length


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of rows whose predicted label equals the true label exactly.

    Reference: ``sklearn.metrics.accuracy_score``.

    >>> accuracy(np.array(["a", "b", "c"], dtype=object), np.array(["a", "b", "b"], dtype=object))
    0.6666666666666666
    """
    check_same_length(y_true, y_pred)
    return float(np.mean(y_true == y_pred))
