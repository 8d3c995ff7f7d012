"""Reference implementations the metrics are checked against, copied as their authors wrote them.

Where the issue corrects a seed, both the seed's code (to show the difference) and the corrected
reference are here.
"""

# ruff: noqa: B905  (the references are kept as written, zip() and all)

import numpy as np
from scipy.special import xlogy

# --- Ben Hamner, benhamner/Metrics Python/ml_metrics/average_precision.py --------------------


def apk(actual, predicted, k=10):
    if len(predicted) > k:
        predicted = predicted[:k]

    score = 0.0
    num_hits = 0.0

    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            num_hits += 1.0
            score += num_hits / (i + 1.0)

    if not actual:
        return 0.0

    return score / min(len(actual), k)


def mapk(actual, predicted, k=10):
    return np.mean([apk(a, p, k) for a, p in zip(actual, predicted)])


# --- Ben Hamner, ml_metrics/quadratic_weighted_kappa.py (the older Kaggle QWK) ---------------


def hamner_quadratic_weighted_kappa(rater_a, rater_b):
    min_rating = min(min(rater_a), min(rater_b))
    max_rating = max(max(rater_a), max(rater_b))
    num_ratings = int(max_rating - min_rating + 1)
    conf_mat = [[0 for _ in range(num_ratings)] for _ in range(num_ratings)]
    for a, b in zip(rater_a, rater_b):
        conf_mat[a - min_rating][b - min_rating] += 1
    num_scored_items = float(len(rater_a))
    hist_a = [0] * num_ratings
    for r in rater_a:
        hist_a[r - min_rating] += 1
    hist_b = [0] * num_ratings
    for r in rater_b:
        hist_b[r - min_rating] += 1
    numerator = 0.0
    denominator = 0.0
    for i in range(num_ratings):
        for j in range(num_ratings):
            expected_count = hist_a[i] * hist_b[j] / num_scored_items
            d = pow(i - j, 2.0) / pow(num_ratings - 1, 2.0)
            numerator += d * conf_mat[i][j] / num_scored_items
            denominator += d * expected_count / num_scored_items
    return 1.0 - numerator / denominator


# --- Kaggle's corrected pfbeta (https://www.kaggle.com/code/sohier/probabilistic-f-score) ----


def kaggle_pfbeta(labels, predictions, beta=1):
    y_true_count = 0
    ctp = 0
    cfp = 0

    for idx in range(len(labels)):
        prediction = min(max(predictions[idx], 0), 1)
        if labels[idx]:
            y_true_count += 1
            ctp += prediction
        else:
            cfp += prediction

    beta_squared = beta * beta
    c_precision = ctp / (ctp + cfp)
    c_recall = ctp / y_true_count
    if c_precision > 0 and c_recall > 0:
        result = (
            (1 + beta_squared) * (c_precision * c_recall) / (beta_squared * c_precision + c_recall)
        )
        return result
    else:
        return 0


def seed_002_pfbeta(labels, predictions, beta):
    """Seed 002's version, with the bug Kaggle fixed (1 - p of positives added to cfp)."""
    y_true_count = 0
    probabilistic_tp = 0
    probabilistic_fp = 0
    for idx in range(len(labels)):
        prediction = min(max(predictions[idx], 0), 1)
        if labels[idx]:
            y_true_count += 1
            probabilistic_tp += prediction
            probabilistic_fp += 1 - prediction
        else:
            probabilistic_fp += prediction
    beta_squared = beta * beta
    c_precision = probabilistic_tp / (probabilistic_tp + probabilistic_fp)
    c_recall = probabilistic_tp / y_true_count
    if c_precision > 0 and c_recall > 0:
        return (
            (1 + beta_squared) * (c_precision * c_recall) / (beta_squared * c_precision + c_recall)
        )
    return 0


# --- Kaggle classic log losses and scikit-learn < 1.5's log_loss ------------------------------


def kaggle_logloss(act, pred):
    epsilon = 1e-15
    pred = np.maximum(epsilon, pred)
    pred = np.minimum(1 - epsilon, pred)
    ll = sum(act * np.log(pred) + np.subtract(1, act) * np.log(np.subtract(1, pred)))
    ll = ll * -1.0 / len(act)
    return ll


def kaggle_multiclass_log_loss(y_true, y_pred, eps=1e-15):
    """y_true: class index per row."""
    predictions = np.clip(y_pred, eps, 1 - eps)
    predictions /= predictions.sum(axis=1)[:, np.newaxis]
    actual = np.zeros(y_pred.shape)
    n_samples = actual.shape[0]
    actual[np.arange(n_samples), y_true.astype(int)] = 1
    vectsum = np.sum(actual * np.log(predictions))
    loss = -1.0 / n_samples * vectsum
    return loss


def sklearn_old_log_loss(transformed_labels, y_pred, eps=1e-15):
    """scikit-learn 1.4's log_loss after label binarisation: clip, renormalise, xlogy."""
    y_pred = np.clip(y_pred, eps, 1 - eps)
    if y_pred.ndim == 1:
        y_pred = y_pred[:, np.newaxis]
    if y_pred.shape[1] == 1:
        y_pred = np.append(1 - y_pred, y_pred, axis=1)
    y_pred_sum = y_pred.sum(axis=1)
    y_pred = y_pred / y_pred_sum[:, np.newaxis]
    loss = -xlogy(transformed_labels, y_pred).sum(axis=1)
    return np.average(loss)


# --- Seed 000: the Coleridge evaluation, verbatim, and the corrected version ----------


class ColeridgeEvaluation:
    @classmethod
    def evaluate_samples(cls, y_true_list, y_pred_list):
        tp_fp_fn_list = []
        for sample_y_true, sample_y_pred in zip(y_true_list, y_pred_list):
            sample_tp_fp_fn = cls.evaluate_sample(sample_y_true, sample_y_pred)
            tp_fp_fn_list.append(sample_tp_fp_fn)
        tp, fp, fn = np.array(tp_fp_fn_list).sum(axis=0)
        sample_fbeta = cls.compute_fbeta(tp, fp, fn)
        return sample_fbeta

    @classmethod
    def evaluate_sample(cls, y_true_str, y_pred_str):
        y_true_labels = y_true_str.split("|")
        y_pred_labels = sorted(y_pred_str.split("|"))
        gt_p_jaccards = np.array(
            [
                [cls.jaccard(pred_label, true_label) for pred_label in y_pred_labels]
                for true_label in y_true_labels
            ]
        )
        matched_preds_mt = np.apply_along_axis(cls._get_matched_preds, 1, gt_p_jaccards)
        return cls.compute_sample_cf_metrics(matched_preds_mt)

    @classmethod
    def jaccard(cls, str1, str2):
        a = set(str1.lower().split())
        b = set(str2.lower().split())
        c = a.intersection(b)
        return float(len(c)) / (len(a) + len(b) - len(c))

    @classmethod
    def _get_matched_preds(cls, jacc_scores):
        true_pred_flags = np.zeros(len(jacc_scores))
        best_jacc_score = jacc_scores.max()
        if best_jacc_score < 0.5:
            return true_pred_flags
        best_score_positions = np.nonzero(jacc_scores == best_jacc_score)[0]
        best_score_pos = best_score_positions[0]
        true_pred_flags[best_score_pos] = 1
        return true_pred_flags

    @classmethod
    def compute_sample_cf_metrics(cls, matched_preds_mt, beta=0.5):
        sample_tp = matched_preds_mt.sum()
        sample_fp = (~matched_preds_mt.any(axis=0)).sum()
        sample_fn = (~matched_preds_mt.any(axis=1)).sum()
        return sample_tp, sample_fp, sample_fn

    @classmethod
    def compute_fbeta(cls, tp, fp, fn, beta=0.5):
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        fbeta = (1 + beta**2) * precision * recall / ((beta**2 * precision) + recall)
        return fbeta


def coleridge_corrected(y_true_list, y_pred_list, beta=0.5, threshold=0.5):
    """Seed 000 with issue 3's corrections, written as plainly as possible (loops)."""

    def words(s):
        return set(s.lower().split())

    tp = fp = fn = 0
    for true_str, pred_str in zip(y_true_list, y_pred_list):
        truths = [s for s in true_str.split("|") if s.split()]
        preds = sorted(s for s in pred_str.split("|") if s.split())
        marked = [False] * len(preds)
        for t in truths:
            best, best_j = None, -1.0
            for j, pr in enumerate(preds):
                a, b = words(t), words(pr)
                c = a & b
                jac = float(len(c)) / (len(a) + len(b) - len(c))
                if jac > best_j:
                    best, best_j = j, jac
            if best is not None and best_j >= threshold:
                tp += 1
                marked[best] = True
            else:
                fn += 1
        fp += marked.count(False)
    if tp == 0:
        return 0.0
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    return (1 + beta**2) * precision * recall / ((beta**2 * precision) + recall)


# --- Seed 004: the worked classification example ----------------------------------------------

SEED_004_GENRES = ["news", "fiction", "government", "learned"]
SEED_004_MATRIX = [
    [9, 0, 2, 1],
    [0, 11, 0, 1],
    [3, 0, 7, 2],
    [1, 1, 1, 9],
]


def seed_004_counts(M, i):
    tp = M[i][i]
    fp = sum(M[r][i] for r in range(len(M))) - tp
    fn = sum(M[i]) - tp
    return tp, fp, fn


def seed_004_prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def seed_004_most_confused(genres, M):
    pairs = []
    for i in range(len(genres)):
        for j in range(i + 1, len(genres)):
            total = M[i][j] + M[j][i]
            pairs.append((total, genres[i], genres[j], M[i][j], M[j][i]))
    pairs.sort(reverse=True)
    return pairs


def rows_from_matrix(labels, M):
    """Label arrays whose confusion matrix (rows true, columns predicted) is ``M``."""
    y_true, y_pred = [], []
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            y_true += [a] * M[i][j]
            y_pred += [b] * M[i][j]
    return np.array(y_true, dtype=object), np.array(y_pred, dtype=object)
