"""The shared scoring path: overall, public and private scores from one aligned key."""

import json
import subprocess
import sys

import pytest

from app.scoring.core import ScoringError, score_files
from tests.helpers import csv_bytes

KEY = csv_bytes(
    ["id", "label", "Usage"],
    ["a", "cat", "Public"],
    ["b", "dog", "Public"],
    ["c", "bird", "Private"],
    ["d", "dog", "Private"],
    ["e", "cat", "Ignored"],
)
SUB = csv_bytes(
    ["id", "label"], ["a", "cat"], ["b", "dog"], ["c", "bird"], ["d", "cat"], ["e", "dog"]
)


def _files(tmp_path, key=KEY, sub=SUB):
    (tmp_path / "key.csv").write_bytes(key)
    (tmp_path / "sub.csv").write_bytes(sub)
    return tmp_path / "key.csv", tmp_path / "sub.csv"


def test_a_class_absent_from_one_split_scores_zero_there(tmp_path):
    key, sub = _files(tmp_path)
    result = score_files(
        metric_name="class_f1", params={"label": "bird"}, answer_key=key, submission=sub
    )
    assert result.private == 1.0  # bird is only in the private rows
    assert result.public == 0.0  # no bird on either side of the public split
    assert result.score == 1.0


def test_a_class_absent_from_the_whole_file_is_still_rejected(tmp_path):
    key, sub = _files(tmp_path)
    with pytest.raises(ScoringError, match="neither"):
        score_files(
            metric_name="class_f1", params={"label": "fish"}, answer_key=key, submission=sub
        )


def test_ignored_rows_count_for_neither_split(tmp_path):
    key, sub = _files(tmp_path)
    result = score_files(metric_name="accuracy", params=None, answer_key=key, submission=sub)
    assert (result.score, result.public, result.private) == (0.75, 1.0, 0.5)


def test_cli_details_carry_the_confusion_matrix(tmp_path):
    key, sub = _files(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "score",
            "--metric",
            "macro_f1",
            "--details",
            str(key),
            str(sub),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    details = json.loads(out.stdout)["details"]
    assert details["labels"] == ["bird", "cat", "dog"]
    assert details["confusion_matrix"] == [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
