"""Podium's columns computed with numpy alone, for a Codabench bundle Podium exported.

Run as Codabench runs a scoring program: ``python3 score.py <input> <output>``, the answer key CSV
in ``<input>/ref``, the submission CSV in ``<input>/res``; writes ``<output>/scores.json``. The
columns, their metrics and the id column are in ``podium_scoring.json`` beside this file. Rows of
the answer key whose ``Usage`` is ``Private`` score into ``<key>__private`` (a key Codabench's board
does not show); ``Ignored`` rows are not scored.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from typing import Any

import numpy as np

MAX_CELLS = 50_000_000


def rmse(y: np.ndarray, p: np.ndarray, **_: Any) -> float:
    return float(np.sqrt(np.mean((y - p) ** 2)))


def mae(y: np.ndarray, p: np.ndarray, **_: Any) -> float:
    return float(np.mean(np.abs(p - y)))


def r2(y: np.ndarray, p: np.ndarray, **_: Any) -> float:
    if len(y) < 2:
        raise ValueError("R2 needs at least two rows")
    ss_res = float(np.sum((y - p) ** 2))
    ss_tot = float(np.sum((y - np.mean(y)) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else 0.0
    return 1.0 - ss_res / ss_tot


def rmsle(y: np.ndarray, p: np.ndarray, **_: Any) -> float:
    if np.any(y <= -1) or np.any(p <= -1):
        raise ValueError("values must be greater than -1")
    return float(np.sqrt(np.mean((np.log1p(p) - np.log1p(y)) ** 2)))


def log_loss_binary(y: np.ndarray, p: np.ndarray, eps: Any = 1e-15, **_: Any) -> float:
    if eps == "auto":
        if np.any((p < 0) | (p > 1)):
            raise ValueError("probabilities must lie in [0, 1]")
        eps = float(np.finfo(np.float64).eps)
    p = np.clip(p, eps, 1 - eps)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def roc_auc(y: np.ndarray, p: np.ndarray, **_: Any) -> float:
    positives = y == 1
    n_pos = int(np.sum(positives))
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("ROC AUC needs both classes in the answer key")
    order = np.argsort(p, kind="mergesort")
    ranks = np.empty(len(p), dtype=np.float64)
    sorted_p = p[order]
    i = 0
    while i < len(p):  # average ranks over ties (Mann-Whitney U)
        j = i
        while j + 1 < len(p) and sorted_p[j + 1] == sorted_p[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return float((np.sum(ranks[positives]) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


METRICS: dict[str, Any] = {
    "rmse": rmse,
    "mae": mae,
    "r2": r2,
    "rmsle": rmsle,
    "log_loss_binary": log_loss_binary,
    "roc_auc": roc_auc,
}


def read_csv(data: bytes) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    if not rows:
        raise ValueError("empty CSV")
    if len(rows) * len(rows[0]) > MAX_CELLS:
        raise ValueError("CSV too large")
    return rows[0], rows[1:]


def score(config: dict[str, Any], key_bytes: bytes, submission_bytes: bytes) -> dict[str, Any]:
    """Every column of ``config`` on the answer key and submission (CSV bytes)."""
    key_header, key_rows = read_csv(key_bytes)
    sub_header, sub_rows = read_csv(submission_bytes)
    id_col = config.get("id_column") or key_header[0]
    usage_at = key_header.index("Usage") if "Usage" in key_header else None
    target = [c for c in key_header if c not in (id_col, "Usage")]
    if len(target) != 1:
        raise ValueError("the exported scorer handles one target column")
    predicted = [c for c in sub_header if c != id_col]
    if id_col not in sub_header or len(predicted) != 1:
        raise ValueError(f"the submission must have the columns {id_col} and one prediction")
    predictions: dict[str, str] = {}
    for row in sub_rows:
        predictions[row[sub_header.index(id_col)]] = row[sub_header.index(predicted[0])]
    groups: dict[str, tuple[list[float], list[float]]] = {"Public": ([], []), "Private": ([], [])}
    for row in key_rows:
        usage = row[usage_at] if usage_at is not None else "Public"
        if usage == "Ignored":
            continue
        ident = row[key_header.index(id_col)]
        if ident not in predictions:
            raise ValueError(f"the submission has no row for id {ident}")
        group = groups["Private" if usage == "Private" else "Public"]
        group[0].append(float(row[key_header.index(target[0])]))
        group[1].append(float(predictions[ident]))
    scores: dict[str, Any] = {}
    for column in config["columns"]:
        fn = METRICS.get(column["metric"])
        if fn is None:
            continue
        for usage, suffix in (("Public", ""), ("Private", "__private")):
            y, p = groups[usage]
            if y:
                value = fn(np.asarray(y), np.asarray(p), **column.get("params", {}))
                scores[column["key"] + suffix] = None if math.isnan(value) else value
    return scores


def _only_file(folder: str, suffix: str = ".csv") -> bytes:
    names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    csvs = [n for n in names if n.lower().endswith(suffix)] or names
    if not csvs:
        raise ValueError(f"nothing in {folder}")
    with open(os.path.join(folder, csvs[0]), "rb") as handle:
        return handle.read()


def main(argv: list[str], here: str | None = None) -> None:
    input_dir = argv[1] if len(argv) > 1 else "/app/input"
    output_dir = argv[2] if len(argv) > 2 else "/app/output"
    here = here or os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "podium_scoring.json")) as handle:
        config = json.load(handle)
    key = _only_file(os.path.join(input_dir, "ref"))
    submission = _only_file(os.path.join(input_dir, "res"))
    scores = score(config, key, submission)
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "scores.json"), "w") as handle:
        json.dump(scores, handle)


if __name__ == "__main__":
    main(sys.argv)
