"""The one scoring code path, shared by the server's jobs and ``podium score``."""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from app.metrics import Metric, MetricInputError, get_metric
from app.metrics.errors import LabelAbsent
from app.scoring.columns import Column, reading_metric, score_columns, tie_key
from app.scoring.intake import (
    IGNORED,
    PRIVATE,
    PUBLIC,
    AnswerKeyTable,
    IntakeError,
    IntakeLimits,
    read_answer_key,
    read_submission,
)
from app.scoring.intake_align import arrow_indices
from app.scoring.intake_cache import load_cached_key
from app.scoring.intake_errors import MAX_MESSAGE, SHOWN, cut, first_few
from app.scoring.intake_labels import check_labels
from app.scoring.intake_source import DEFAULT_LIMITS


@dataclass(frozen=True)
class ScoreResult:
    score: float
    public: float | None
    private: float | None
    details: dict[str, Any] | None = None
    # Without a Usage column every row counts for both boards, but the CLI reports no split.
    has_usage: bool = True
    # Every leaderboard column's (score, public, private), the three above being the ranking
    # column's; and the tie-breaking columns as strings that sort the board's way, per split.
    columns: dict[str, dict[str, float | None]] | None = None
    public_tie: str = ""
    private_tie: str = ""

    def as_json(self, metric_name: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metric": metric_name,
            "score": self.score,
            "public": self.public if self.has_usage else None,
            "private": self.private if self.has_usage else None,
        }
        if self.details is not None:
            out["details"] = self.details
        return out


class ScoringError(ValueError):
    """Scoring failed. ``source`` says whose data is at fault: "submission" or "answer_key"."""

    def __init__(self, message: str, *, source: str = "submission", kind: str = "invalid") -> None:
        message = cut(message, MAX_MESSAGE)
        super().__init__(message)
        self.message = message
        self.source = source
        self.kind = kind


def _subset(key: AnswerKeyTable, y_pred: np.ndarray, mask: np.ndarray | None):  # type: ignore[no-untyped-def]
    if mask is None:
        return key.y_true, y_pred, key.extra
    return key.y_true[mask], y_pred[mask], {k: v[mask] for k, v in key.extra.items()}


class SplitViews:
    """The key and the aligned predictions cut by split (all counted rows, public, private)
    once, for every column that scores them: a board of several columns copies no array twice.
    """

    def __init__(self, key: AnswerKeyTable, y_pred: np.ndarray) -> None:
        self.key, self.y_pred = key, y_pred
        self.masks: dict[str, np.ndarray | None] = {"score": None}
        if key.usage is not None:
            ignored = key.usage == IGNORED
            self.masks = {
                "score": ~ignored if ignored.any() else None,
                "public": key.usage == PUBLIC,
                "private": key.usage == PRIVATE,
            }
        self._cut: dict[str, Any] = {}

    def has(self, split: str) -> bool:
        mask = self.masks.get(split)
        return split in self.masks and (mask is None or bool(mask.any()))

    def cut(self, split: str):  # type: ignore[no-untyped-def]
        if split not in self._cut:
            self._cut[split] = _subset(self.key, self.y_pred, self.masks[split])
        return self._cut[split]


def _compute(
    metric: Metric,
    params: BaseModel,
    views: SplitViews,
    split: str,
) -> float:
    y_true, pred, extra = views.cut(split)
    try:
        value = metric.compute(y_true, pred, params, extra)
    except MetricInputError as exc:
        if split != "score" and isinstance(exc, LabelAbsent):
            # The whole file has the class; this split merely has no rows of it on either side.
            return 0.0
        raise _input_error(exc, views.key, views.masks[split]) from None
    if not math.isfinite(value):
        # The key scored itself finitely at upload and intake bounds every number, so it is
        # these predictions that drive the metric out of range: the participant's to fix.
        raise ScoringError(
            f"metric '{metric.name}' is not finite ({value}) for these predictions; "
            "predict values closer to the targets' range",
            source="submission",
            kind="non_finite",
        )
    return value


def _input_error(
    exc: MetricInputError, key: AnswerKeyTable, mask: np.ndarray | None
) -> ScoringError:
    """The metric's refusal, naming the first offending ids and how many more there are."""
    message = exc.message
    if exc.rows is not None and len(exc.rows):
        rows = np.asarray(exc.rows, dtype=np.int64)
        shown = rows[:SHOWN] if mask is None else np.flatnonzero(mask)[rows[:SHOWN]]
        ids = key.ids.take(arrow_indices(shown)).to_pylist()
        message += f" (id(s) {first_few(ids, total=len(rows))})"
    return ScoringError(message, source=exc.source, kind="metric_input")


def check_predictions(
    metric: Metric, params: BaseModel, key: AnswerKeyTable, y_pred: np.ndarray
) -> None:
    """The metric's checks of the predictions alone, on every row alike, before any split."""
    if metric.check_predictions is None:
        return
    try:
        metric.check_predictions(y_pred, params)
    except MetricInputError as exc:
        raise _input_error(exc, key, None) from None


def score_aligned(
    metric: Metric,
    params: BaseModel,
    key: AnswerKeyTable,
    y_pred: np.ndarray,
    *,
    details: bool = False,
    views: SplitViews | None = None,
) -> ScoreResult:
    """Score predictions already aligned with ``key``: overall, public and private (``views``:
    the splits already cut, shared by the columns of one pass)."""
    check_predictions(metric, params, key, y_pred)
    views = views or SplitViews(key, y_pred)
    overall = _compute(metric, params, views, "score")
    public: float | None
    private: float | None
    if key.usage is None:
        public = private = overall
    else:
        public = _compute(metric, params, views, "public") if views.has("public") else None
        private = _compute(metric, params, views, "private") if views.has("private") else None
    return ScoreResult(
        score=overall,
        public=public,
        private=private,
        details=_details(metric, params, key, y_pred) if details else None,
        has_usage=key.usage is not None,
    )


def _details(
    metric: Metric, params: BaseModel, key: AnswerKeyTable, y_pred: np.ndarray
) -> dict[str, Any] | None:
    """The metric's extra details (a confusion matrix, ...) over the rows that count."""
    if metric.details is None:
        return None
    counted = None if key.usage is None else key.usage != IGNORED
    y_true, pred, extra = _subset(key, y_pred, counted)
    return metric.details(y_true, pred, params=params, extra=extra)


def load_key(
    path: Path,
    *,
    metric: Metric,
    params: BaseModel,
    id_column: str | None,
    limits: IntakeLimits = DEFAULT_LIMITS,
    cache_dir: Path | None = None,
    sha256: str | None = None,
    check: bool = True,
) -> AnswerKeyTable:
    """Read an answer key and, with ``check``, prove the metric can score it (the key against
    itself, as at upload). With ``cache_dir`` the parsed key is kept on disk, once per version.
    """
    try:
        if cache_dir is None:
            key = read_answer_key(
                path, metric=metric, params=params, id_column=id_column, limits=limits
            )
        else:
            key = load_cached_key(
                path,
                cache_dir,
                metric=metric,
                params=params,
                id_column=id_column,
                sha256=sha256,
                limits=limits,
            )
    except IntakeError as exc:
        raise ScoringError(exc.message, source="answer_key", kind=exc.kind) from None
    if not check:
        return key
    try:
        score_aligned(metric, params, key, key.y_true)
    except ScoringError as exc:
        raise ScoringError(exc.message, source="answer_key", kind=exc.kind) from None
    return key


def _read_predictions(
    path: Path,
    *,
    key: AnswerKeyTable,
    metric: Metric,
    limits: IntakeLimits,
    labels: Sequence[str] | None,
) -> np.ndarray:
    """The file's predictions aligned with the key; with ``labels``, a label outside them is an
    error. Intake's refusals become the submission's scoring errors."""
    try:
        y_pred = read_submission(path, key=key, metric=metric, limits=limits)
        if labels is not None:
            check_labels(path, column=key.target_columns[0], labels=labels, limits=limits)
    except IntakeError as exc:
        raise ScoringError(exc.message, source="submission", kind=exc.kind) from None
    return y_pred


def score_submission_file(
    path: Path,
    *,
    metric: Metric,
    params: BaseModel,
    key: AnswerKeyTable,
    details: bool = False,
    limits: IntakeLimits = DEFAULT_LIMITS,
    labels: Sequence[str] | None = None,
) -> ScoreResult:
    """Score a submission file; with ``labels``, a label outside them is an error."""
    y_pred = _read_predictions(path, key=key, metric=metric, limits=limits, labels=labels)
    return score_aligned(metric, params, key, y_pred, details=details)


def score_columns_file(
    path: Path,
    *,
    columns: Sequence[Column],
    key: AnswerKeyTable,
    details: bool = False,
    limits: IntakeLimits = DEFAULT_LIMITS,
    labels: Sequence[str] | None = None,
) -> ScoreResult:
    """Score a submission file on every leaderboard column in one pass: the file is read,
    aligned and validated once (by the reading column's metric), then each column's metric runs
    on the same arrays and the computed columns follow."""
    reading = reading_metric(columns)
    metric, params = reading.metric, reading.params
    assert metric is not None and params is not None  # a catalogue column reads
    y_pred = _read_predictions(path, key=key, metric=metric, limits=limits, labels=labels)
    views = SplitViews(key, y_pred)
    values = score_columns(
        columns, key, y_pred, lambda m, p, k, y: score_aligned(m, p, k, y, views=views)
    )
    ranking = values[columns[0].key]
    return ScoreResult(
        score=ranking["score"],  # type: ignore[arg-type]
        public=ranking["public"],
        private=ranking["private"],
        details=_details(metric, params, key, y_pred) if details else None,
        has_usage=key.usage is not None,
        columns=values,
        public_tie=tie_key(columns, values, "public"),
        private_tie=tie_key(columns, values, "private"),
    )


def score_files(
    *,
    metric_name: str,
    params: dict[str, Any] | None,
    answer_key: Path,
    submission: Path,
    id_column: str | None = None,
    details: bool = False,
    limits: IntakeLimits = DEFAULT_LIMITS,
    labels: Sequence[str] | None = None,
) -> ScoreResult:
    """Score two files, as ``podium score`` does.

    The key is not scored against itself first: a key the metric cannot use fails the one real
    scoring with the same answer-key error, and a large file is not scored twice. Without
    ``labels`` a single-label metric's classes are those found in the files (scikit-learn's
    semantics); with them, a label outside them in either file is an error.
    """
    metric = get_metric(metric_name)
    parsed = metric.parse_params(params)
    if labels is not None and metric.cell != "label":
        raise ScoringError(
            f"labels apply to single-label classification metrics only, not '{metric.name}'",
            source="options",
            kind="bad_option",
        )
    key = load_key(
        answer_key, metric=metric, params=parsed, id_column=id_column, limits=limits, check=False
    )
    if labels is not None:
        try:
            check_labels(answer_key, column=key.target_columns[0], labels=labels, limits=limits)
        except IntakeError as exc:
            raise ScoringError(exc.message, source="answer_key", kind=exc.kind) from None
    return score_submission_file(
        submission,
        metric=metric,
        params=parsed,
        key=key,
        details=details,
        limits=limits,
        labels=labels,
    )
