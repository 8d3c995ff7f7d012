"""Single-label classification metrics on arrays of labels.

The classes are the sorted union of the labels in both arrays, compared exactly (code-point
order, no case folding or trimming). Every metric here is read off one confusion matrix, so the
per-class numbers of ``--details`` and the score always agree.
"""

from typing import Any

import numpy as np

from app.metrics._checks import check_one_column
from app.metrics.errors import LabelAbsent


def encode_labels(
    y_true: np.ndarray, y_pred: np.ndarray
) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """Sorted union of the labels, and both arrays as integer codes into it."""
    labels = sorted(set(y_true.tolist()) | set(y_pred.tolist()))
    index = {label: code for code, label in enumerate(labels)}
    # map() over a C method keeps the per-row work out of the interpreter loop.
    true_codes = np.fromiter(map(index.__getitem__, y_true), dtype=np.intp, count=len(y_true))
    pred_codes = np.fromiter(map(index.__getitem__, y_pred), dtype=np.intp, count=len(y_pred))
    return labels, true_codes, pred_codes


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Labels and the confusion matrix: rows are true labels, columns predicted, in label order.

    Reference: ``sklearn.metrics.confusion_matrix`` with ``labels`` the sorted union.

    >>> y_true = np.array(["a", "b", "b"], dtype=object)
    >>> confusion_matrix(y_true, np.array(["a", "a", "b"], dtype=object))
    (['a', 'b'], array([[1, 0],
           [1, 1]]))
    """
    check_one_column(y_true, y_pred)
    labels, t, p = encode_labels(y_true, y_pred)
    k = len(labels)
    counts = np.bincount(t * k + p, minlength=k * k).reshape(k, k)
    return labels, counts


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Elementwise division where a zero denominator gives 0 (``zero_division=0``)."""
    out = np.zeros(np.shape(numerator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def per_class_scores(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 and support of each class of a confusion matrix.

    F1 is ``2·tp / (true + predicted)`` as scikit-learn computes it, so two classes whose F1 is
    the same fraction get the same float (which the hardest-class tie rule relies on).
    """
    tp = np.diag(counts)
    predicted = counts.sum(axis=0)
    true = counts.sum(axis=1)
    precision = _divide(tp, predicted)
    recall = _divide(tp, true)
    f1 = _divide(2.0 * tp, 1.0 * true + predicted)
    return precision, recall, f1, true


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of rows whose predicted label equals the true label exactly.

    Reference: ``sklearn.metrics.accuracy_score``.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        The answer key's labels.
    y_pred : ndarray of str, shape (n,)
        The predicted labels, aligned with ``y_true``.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> accuracy(np.array(["a", "b", "c"], dtype=object), np.array(["a", "b", "b"], dtype=object))
    0.6666666666666666
    """
    check_one_column(y_true, y_pred)
    return float(np.count_nonzero(y_true == y_pred) / len(y_true))


def macro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Unweighted mean of the per-class F1 over every label in either array.

    Reference: ``sklearn.metrics.f1_score(average="macro", zero_division=0)``.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        The answer key's labels.
    y_pred : ndarray of str, shape (n,)
        The predicted labels, aligned with ``y_true``.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> macro_f1(np.array(["a", "a", "b"], dtype=object), np.array(["a", "b", "b"], dtype=object))
    0.6666666666666666
    """
    _, counts = confusion_matrix(y_true, y_pred)
    return float(np.mean(per_class_scores(counts)[2]))


def micro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """F1 of the pooled decisions; for single-label rows it equals accuracy.

    Reference: ``sklearn.metrics.f1_score(average="micro", zero_division=0)``.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        The answer key's labels.
    y_pred : ndarray of str, shape (n,)
        The predicted labels, aligned with ``y_true``.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> micro_f1(np.array(["a", "a", "b"], dtype=object), np.array(["a", "b", "b"], dtype=object))
    0.6666666666666666
    """
    check_one_column(y_true, y_pred)
    tp = np.count_nonzero(y_true == y_pred)
    return float(2.0 * tp / (1.0 * len(y_true) + len(y_pred)))


def _class_index(labels: list[Any], label: str) -> int:
    try:
        return labels.index(label)
    except ValueError:
        raise LabelAbsent(
            f"the metric's label {label!r} is in neither the answer key nor the predictions",
            source="answer_key",
        ) from None


def class_precision(y_true: np.ndarray, y_pred: np.ndarray, *, label: str) -> float:
    """Precision of one class: right predictions of ``label`` over all predictions of it.

    Reference: ``sklearn.metrics.precision_score(labels=[label], average=None, zero_division=0)``.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        The answer key's labels.
    y_pred : ndarray of str, shape (n,)
        The predicted labels, aligned with ``y_true``.
    label : str
        The class to score; it must occur in ``y_true`` or ``y_pred``.

    Returns
    -------
    float
        In [0, 1]; 0 when ``label`` is never predicted.

    Examples
    --------
    >>> y_true = np.array(["a", "a", "b"], dtype=object)
    >>> class_precision(y_true, np.array(["a", "b", "b"], dtype=object), label="b")
    0.5
    """
    labels, counts = confusion_matrix(y_true, y_pred)
    return float(per_class_scores(counts)[0][_class_index(labels, label)])


def class_recall(y_true: np.ndarray, y_pred: np.ndarray, *, label: str) -> float:
    """Recall of one class: rows of ``label`` predicted as ``label`` over all rows of it.

    Reference: ``sklearn.metrics.recall_score(labels=[label], average=None, zero_division=0)``.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        The answer key's labels.
    y_pred : ndarray of str, shape (n,)
        The predicted labels, aligned with ``y_true``.
    label : str
        The class to score; it must occur in ``y_true`` or ``y_pred``.

    Returns
    -------
    float
        In [0, 1]; 0 when ``label`` never occurs in ``y_true``.

    Examples
    --------
    >>> y_true = np.array(["a", "a", "b"], dtype=object)
    >>> class_recall(y_true, np.array(["a", "b", "b"], dtype=object), label="a")
    0.5
    """
    labels, counts = confusion_matrix(y_true, y_pred)
    return float(per_class_scores(counts)[1][_class_index(labels, label)])


def class_f1(y_true: np.ndarray, y_pred: np.ndarray, *, label: str) -> float:
    """F1 of one class.

    Reference: ``sklearn.metrics.f1_score(labels=[label], average=None, zero_division=0)``.

    Parameters
    ----------
    y_true : ndarray of str, shape (n,)
        The answer key's labels.
    y_pred : ndarray of str, shape (n,)
        The predicted labels, aligned with ``y_true``.
    label : str
        The class to score; it must occur in ``y_true`` or ``y_pred``.

    Returns
    -------
    float
        In [0, 1]; higher is better.

    Examples
    --------
    >>> y_true = np.array(["a", "a", "b"], dtype=object)
    >>> class_f1(y_true, np.array(["a", "b", "b"], dtype=object), label="a")
    0.6666666666666666
    """
    labels, counts = confusion_matrix(y_true, y_pred)
    return float(per_class_scores(counts)[2][_class_index(labels, label)])


def classification_details(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, Any]:
    """The confusion matrix and the diagnoses seed 004 reads off it.

    ``hardest_class`` is the lowest F1, ties to the alphabetically first label.
    ``most_confused_pair`` is the unordered pair with the largest sum of its two cross cells; ties
    are resolved as seed 004's ``pairs.sort(reverse=True)`` over ``(total, a, b, a_to_b,
    b_to_a)`` resolves them, i.e. to the alphabetically last pair. ``tied`` says whether another
    class (pair) shared the winning value. With one label there is no pair: ``None``.

    >>> y_true = np.array(["a", "b"], dtype=object)
    >>> d = classification_details(y_true, np.array(["b", "b"], dtype=object))
    >>> d["hardest_class"], d["most_confused_pair"]["pair"]
    ({'label': 'a', 'f1': 0.0, 'tied': False}, ['a', 'b'])
    """
    labels, counts = confusion_matrix(y_true, y_pred)
    precision, recall, f1, support = per_class_scores(counts)
    hardest = int(np.argmin(f1))  # first of the minima = alphabetically first label
    details: dict[str, Any] = {
        "labels": list(labels),
        "confusion_matrix": counts.tolist(),
        "per_class": {
            label: {
                "precision": float(precision[i]),
                "recall": float(recall[i]),
                "f1": float(f1[i]),
                "support": int(support[i]),
            }
            for i, label in enumerate(labels)
        },
        "hardest_class": {
            "label": labels[hardest],
            "f1": float(f1[hardest]),
            "tied": bool(np.count_nonzero(f1 == f1[hardest]) > 1),
        },
        "most_confused_pair": None,
    }
    if len(labels) >= 2:
        i, j = np.triu_indices(len(labels), 1)
        totals = counts[i, j] + counts[j, i]
        best = np.flatnonzero(totals == totals.max())
        # Pairs are listed with i ascending, then j: the last of the tied ones has the largest
        # (labels[i], labels[j]), which is what a reverse sort of the seed's tuples puts first.
        w = best[-1]
        a, b = int(i[w]), int(j[w])
        details["most_confused_pair"] = {
            "pair": [labels[a], labels[b]],
            "a_to_b": int(counts[a, b]),
            "b_to_a": int(counts[b, a]),
            "total": int(totals[w]),
            "tied": bool(best.size > 1),
        }
    return details
