"""Registers every built-in metric. The names here are a public contract.

Each entry wires a pure function to the service: its params model, the columns it reads, which
way is better, and where it departs from a seed document or an older reference (``differences``,
which ``docs/metrics.md`` lists).
"""

from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel

from app.metrics import classification as cls
from app.metrics import multilabel_ranking as mlr
from app.metrics import params as p
from app.metrics import probabilistic as prob
from app.metrics import regression as reg
from app.metrics import text
from app.metrics.coleridge import coleridge_fbeta
from app.metrics.metric import Metric, NoParams
from app.metrics.ranking import mean_columnwise_roc_auc, roc_auc


def _call(fn: Callable[..., float], *param_names: str) -> Callable[..., float]:
    """Adapt ``fn(y_true, y_pred, **named_params)`` to the registry's calling convention."""

    def score(y_true: np.ndarray, y_pred: np.ndarray, *, params: BaseModel, extra: Any) -> float:
        return fn(y_true, y_pred, **{name: getattr(params, name) for name in param_names})

    score.__doc__ = fn.__doc__
    score.__wrapped__ = fn  # type: ignore[attr-defined]
    return score


def _weighted(fn: Callable[..., float]) -> Callable[..., float]:
    """Adapt a metric taking ``sample_weight`` to read it from the key column ``weight_column``."""

    def score(y_true: np.ndarray, y_pred: np.ndarray, *, params: BaseModel, extra: Any) -> float:
        column = getattr(params, "weight_column", None)
        weight = None if column is None else np.asarray(extra[column], dtype=np.float64)
        return fn(y_true, y_pred, sample_weight=weight)

    score.__doc__ = fn.__doc__
    score.__wrapped__ = fn  # type: ignore[attr-defined]
    return score


def _details(
    y_true: np.ndarray, y_pred: np.ndarray, *, params: BaseModel, extra: Any
) -> dict[str, Any]:
    return cls.classification_details(y_true, y_pred)


_SEED_004_F1 = (
    "Seed 004 computes F1 as 2PR/(P+R); Podium, like scikit-learn, as 2TP/(true + predicted), "
    "the same fraction, so equal F1s are equal floats (the seed's may differ in the last bit)."
)
_UNION = (
    "The classes are the sorted union of the labels in both files, as scikit-learn's default "
    "`labels`; a label only ever predicted is a class with F1 0."
)
_SEED_004_DETAILS = (
    "Details: seed 004 keeps its classes in its own order (news, fiction, government, learned) "
    "and names a pair in that order (news / government, 2 and 3); Podium sorts the labels, so "
    "the same pair is [government, news] with a_to_b 3 and b_to_a 2. Ties between pairs are "
    "broken as the seed's `pairs.sort(reverse=True)` breaks them, applied to the sorted labels."
)
_LABEL_PARAM = "A `label` in neither file is refused; scikit-learn warns and scores 0."


def _classification(
    name: str,
    fn: Callable[..., float],
    *,
    reference: str,
    summary: str,
    differences: tuple[str, ...],
    params: type[BaseModel] = NoParams,
    param_names: tuple[str, ...] = (),
) -> Metric:
    # Every single-label metric serves the same --details, so each lists the seed's differences.
    return Metric(
        name=name,
        score=_call(fn, *param_names),
        direction="maximize",
        cell="label",
        column_help="one text column holding one label per row",
        params=params,
        details=_details,
        reference=reference,
        summary=summary,
        differences=(*differences, _SEED_004_DETAILS),
    )


CATALOGUE: tuple[Metric, ...] = (
    # --- single-label classification -------------------------------------------------------
    _classification(
        "accuracy",
        cls.accuracy,
        reference="sklearn.metrics.accuracy_score",
        summary="Fraction of rows whose label is exactly right.",
        differences=(),
    ),
    _classification(
        "macro_f1",
        cls.macro_f1,
        reference='sklearn.metrics.f1_score(average="macro", zero_division=0)',
        summary="Unweighted mean of the per-class F1; a zero division counts as 0.",
        differences=(
            _UNION,
            _SEED_004_F1,
            'Seed 004 prints the accuracy-trap model\'s macro-F1 as "0.24"; it is 0.236842.',
        ),
    ),
    _classification(
        "micro_f1",
        cls.micro_f1,
        reference='sklearn.metrics.f1_score(average="micro", zero_division=0)',
        summary="F1 of the pooled decisions; on single-label rows it equals accuracy.",
        differences=(),
    ),
    _classification(
        "class_precision",
        cls.class_precision,
        reference="sklearn.metrics.precision_score(labels=[label], average=None, zero_division=0)",
        summary="Precision of the class `label`.",
        differences=(_LABEL_PARAM,),
        params=p.ClassParams,
        param_names=("label",),
    ),
    _classification(
        "class_recall",
        cls.class_recall,
        reference="sklearn.metrics.recall_score(labels=[label], average=None, zero_division=0)",
        summary="Recall of the class `label`.",
        differences=(_LABEL_PARAM,),
        params=p.ClassParams,
        param_names=("label",),
    ),
    _classification(
        "class_f1",
        cls.class_f1,
        reference="sklearn.metrics.f1_score(labels=[label], average=None, zero_division=0)",
        summary="F1 of the class `label`.",
        differences=(_LABEL_PARAM, _SEED_004_F1),
        params=p.ClassParams,
        param_names=("label",),
    ),
    # --- probabilistic and ranking ---------------------------------------------------------
    Metric(
        name="roc_auc",
        column_help="one column: 0/1 in the key, any real-valued score in the submission",
        score=_call(roc_auc),
        direction="maximize",
        cell="number",
        reference="sklearn.metrics.roc_auc_score",
        summary="Area under the ROC curve; 0/1 target, any real-valued score.",
        differences=(
            "Computed as the Mann-Whitney U statistic (ties count half) rather than by the "
            "trapezoid rule over the ROC curve: the same number up to rounding in the last bits.",
            "A key holding one class is refused (scikit-learn raises as well).",
        ),
    ),
    Metric(
        name="mean_columnwise_roc_auc",
        column_help="one column per target: 0/1 in the key, a score per column in the submission",
        score=_call(mean_columnwise_roc_auc),
        direction="maximize",
        cell="number",
        columns="many",
        reference='sklearn.metrics.roc_auc_score(average="macro") on a multilabel key',
        summary=(
            "Mean ROC AUC over several 0/1 target columns; the submission has the same columns."
        ),
        differences=("Any target column holding one class is refused (scikit-learn raises too).",),
    ),
    Metric(
        name="log_loss_binary",
        column_help="one column: 0/1 in the key, the probability of 1 in the submission",
        score=_call(prob.log_loss_binary, "eps"),
        direction="minimize",
        cell="number",
        params=p.LogLossBinaryParams,
        reference=(
            'Kaggle classic logloss (eps=1e-15); sklearn.metrics.log_loss >= 1.5 (eps="auto")'
        ),
        summary=(
            "Mean negative log-likelihood of a 0/1 target under the predicted probability of 1."
        ),
        differences=(
            "Older scikit-learn took `eps=1e-15` and clipped like Kaggle; scikit-learn >= 1.5 "
            "drops `eps`, clips to machine epsilon and refuses values outside [0, 1]: "
            '`eps="auto"`.',
            'With eps="auto" scikit-learn clips p and 1 - p separately (as Podium does then); '
            "with a numeric eps, 1 - p is taken after clipping p (Kaggle).",
        ),
    ),
    Metric(
        name="log_loss_multiclass",
        column_help=(
            "one column per class: one-hot 0/1 rows in the key, a probability per class in "
            "the submission"
        ),
        score=_call(prob.log_loss_multiclass, "eps", "renormalize"),
        direction="minimize",
        cell="number",
        columns="many",
        params=p.LogLossMulticlassParams,
        reference=(
            "Kaggle classic multiclass_log_loss (eps=1e-15, renormalize); sklearn.metrics.log_loss "
            '>= 1.5 (eps="auto")'
        ),
        summary=(
            "Mean negative log of the probability given to the true class; one-hot key, one "
            "probability column per class (the same columns as the key)."
        ),
        differences=(
            "Older scikit-learn clipped with eps=1e-15 and divided each row by its sum (Kaggle "
            "classic, the default here); scikit-learn >= 1.5 clips to machine epsilon and does "
            'not renormalise, it only warns when rows do not sum to 1 (eps="auto").',
            "A key row that is not one-hot is refused.",
        ),
    ),
    Metric(
        name="pfbeta",
        column_help=(
            "one column: 0/1 in the key, a probability in the submission (clipped to [0, 1])"
        ),
        score=_call(prob.pfbeta, "beta"),
        direction="maximize",
        cell="number",
        params=p.PFBetaParams,
        reference="Kaggle's corrected pfbeta (RSNA Screening Mammography Breast Cancer Detection)",
        summary="Probabilistic F-beta: precision and recall from summed predicted probabilities.",
        differences=(
            "Seed 002 also adds 1 - p of every positive row to the false positives; that was a "
            "bug Kaggle fixed, and Podium does not copy it.",
            "Kaggle's code divides by zero when every prediction is 0; Podium scores 0.",
            "A key with no positive rows is refused (the reference divides by zero).",
        ),
    ),
    Metric(
        name="label_ranking_loss",
        column_help=(
            "one column per label: 0/1 relevance in the key, a score per label in the "
            "submission; optionally a weight column in the key"
        ),
        score=_weighted(mlr.label_ranking_loss),
        direction="minimize",
        cell="number",
        columns="many",
        params=p.WeightParams,
        reference="sklearn.metrics.label_ranking_loss",
        summary=(
            "Mean fraction of (relevant, irrelevant) label pairs ranked wrongly; ties count as "
            "errors; rows with all or no labels relevant score 0."
        ),
        differences=(
            "Seed 001 says weights [-1, 2] on its worked example give 2.0; they give 1.5.",
            "A single label column is refused, as scikit-learn refuses it.",
        ),
    ),
    Metric(
        name="coverage_error",
        column_help=(
            "one column per label: 0/1 relevance in the key, a score per label in the "
            "submission; optionally a weight column in the key"
        ),
        score=_weighted(mlr.coverage_error),
        direction="minimize",
        cell="number",
        columns="many",
        params=p.WeightParams,
        reference="sklearn.metrics.coverage_error",
        summary=(
            "Mean number of top-scored labels needed to cover all relevant ones (ties count in)."
        ),
        differences=("A single label column is refused, as scikit-learn refuses it.",),
    ),
    Metric(
        name="label_ranking_average_precision",
        column_help=(
            "one column per label: 0/1 relevance in the key, a score per label in the "
            "submission; optionally a weight column in the key"
        ),
        score=_weighted(mlr.label_ranking_average_precision),
        direction="maximize",
        cell="number",
        columns="many",
        params=p.WeightParams,
        reference="sklearn.metrics.label_ranking_average_precision_score",
        summary="Label ranking average precision; rows with all or no labels relevant score 1.",
        differences=(
            "A single label column scores 1.0 (scikit-learn does the same; loss and coverage "
            "refuse it).",
        ),
    ),
    Metric(
        name="map_at_k",
        column_help=(
            "one text column: the relevant items in the key, the ranked predictions in the "
            "submission, space-separated"
        ),
        score=_call(text.map_at_k, "k"),
        direction="maximize",
        cell="labels",
        params=p.MapAtKParams,
        reference="Ben Hamner's apk/mapk (benhamner/Metrics, ml_metrics.average_precision)",
        summary=(
            "Mean average precision at k; each cell holds whitespace-separated items, the "
            "submission's in ranked order."
        ),
        differences=(
            "A repeated prediction counts once but takes its slot; the divisor is "
            "min(len(actual), k) with the key cell's items as written, as in apk.",
            "A row with no true items scores 0 and stays in the mean (some re-implementations "
            "skip such rows).",
        ),
    ),
    # --- regression -------------------------------------------------------------------------
    Metric(
        name="rmse",
        column_help="one numeric column",
        score=_call(reg.rmse),
        direction="minimize",
        cell="number",
        reference="sklearn.metrics.root_mean_squared_error",
        summary="Root mean squared error.",
    ),
    Metric(
        name="mae",
        column_help="one numeric column",
        score=_call(reg.mae),
        direction="minimize",
        cell="number",
        reference="sklearn.metrics.mean_absolute_error",
        summary="Mean absolute error.",
    ),
    Metric(
        name="r2",
        column_help="one numeric column (at least two rows)",
        score=_call(reg.r2),
        direction="maximize",
        cell="number",
        reference="sklearn.metrics.r2_score(force_finite=True)",
        summary=(
            "Coefficient of determination; a constant key scores 1.0 if matched exactly, else 0.0."
        ),
        differences=("One row is refused; scikit-learn returns NaN with a warning.",),
    ),
    Metric(
        name="rmsle",
        column_help="one numeric column, every value greater than -1",
        score=_call(reg.rmsle),
        direction="minimize",
        cell="number",
        reference="sklearn.metrics.root_mean_squared_log_error",
        summary="Root mean squared error of log(1 + value).",
        differences=(
            "Values <= -1 are refused; older scikit-learn versions refused every negative value.",
        ),
    ),
    Metric(
        name="quadratic_weighted_kappa",
        column_help="one column of integer ratings",
        score=_call(reg.quadratic_weighted_kappa),
        direction="maximize",
        cell="number",
        reference='sklearn.metrics.cohen_kappa_score(weights="quadratic")',
        summary="Cohen's kappa with quadratic weights on integer ratings.",
        differences=(
            "Ben Hamner's quadratic_weighted_kappa (older Kaggle competitions) spans every "
            "integer from the lowest to the highest rating and weighs by value difference; "
            "scikit-learn, and Podium, use only the rating values present, weighed by their "
            "position. The two differ when some rating in the range never occurs.",
            "Non-integer ratings, and a single rating value overall, are refused.",
        ),
    ),
    # --- text ---------------------------------------------------------------------------------
    Metric(
        name="multilabel_micro_f1",
        column_help="one text column of whitespace-separated tags (an empty cell: no tags)",
        score=_call(text.multilabel_micro_f1),
        direction="maximize",
        cell="labels",
        reference=(
            'sklearn.metrics.f1_score(average="micro", zero_division=0) on MultiLabelBinarizer '
            "indicators"
        ),
        summary="Micro F1 over (row, tag) pairs; each cell a whitespace-separated set of tags.",
        differences=("Every cell empty in both files scores 0.",),
    ),
    Metric(
        name="coleridge_fbeta",
        column_help="one text column of '|'-separated strings (an empty cell: none)",
        score=_call(coleridge_fbeta, "beta", "threshold"),
        direction="maximize",
        cell="labels",
        params=p.ColeridgeParams,
        reference=(
            'Coleridge Initiative "Show US the Data" evaluation (seed 000), as corrected by issue 3'
        ),
        summary=(
            "Micro F-beta over '|'-separated strings, a prediction matching a ground truth when "
            "their lower-cased word sets have Jaccard >= threshold."
        ),
        differences=(
            "Seed 000 returns NaN when there is no true positive; Podium scores 0.",
            "Seed 000 counts an empty cell as one empty string (an empty prediction is a false "
            "positive) and keeps segments with no words (which can divide by zero); Podium drops "
            "them, so empty cells contribute nothing.",
            'Seed 000\'s comment says a pair matches when its Jaccard is "less than 0.5"; its '
            "code, and Podium, match at >= threshold.",
        ),
    ),
)
