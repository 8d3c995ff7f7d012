"""Checking an uploaded metric file without running it."""

import pytest

from app.custom_metrics.sandbox import InvalidMetricSource, validate_metric_source

KAGGLE_STYLE = b"""
import pandas as pd

class ParticipantVisibleError(Exception):
    pass

def score(solution: pd.DataFrame, submission: pd.DataFrame, row_id_column_name: str) -> float:
    return 0.0
"""


def test_a_kaggle_style_metric_file_is_accepted():
    validate_metric_source(KAGGLE_STYLE)


def test_validation_does_not_run_the_file(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').close()\ndef score(a, b, c):\n    return 1.0\n"
    validate_metric_source(source.encode())
    assert not marker.exists()


@pytest.mark.parametrize(
    "source",
    [
        b"def score(*args, **params):\n    return 1.0\n",
        b"def score(solution, submission, row_id_column_name, *, beta=1.0):\n    return beta\n",
        b"\xef\xbb\xbfdef score(a, b, c):\n    return 1.0\n",  # a UTF-8 byte-order mark
    ],
)
def test_other_usable_signatures_are_accepted(source):
    validate_metric_source(source)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (b"def scor(solution, submission, row_id_column_name):\n    return 1.0\n", "def score"),
        (b"", "def score"),
        (b"class M:\n    def score(self, a, b, c):\n        return 1.0\n", "top-level"),
        (b"def score(a, b, c):\n    return 1.0\nscore = None\n", "other than 'def'"),
        (b"from sklearn.metrics import r2_score as score\n", "other than 'def'"),
        (b"async def score(a, b, c):\n    return 1.0\n", "async"),
        (b"def score(solution, submission):\n    return 1.0\n", "2 positional"),
        (b"def score(a, b, c)\n    return 1.0\n", "syntax error on line 1"),
        (b"def score(a, b, c):\n    return 1.0\nreturn 2\n", "syntax error on line 3"),
        (b"x = 1\n\n\tdef score(a, b, c):\n  return 1\n", "syntax error"),
        (b"def score(a, b, c):\n    return '\xe9'\n", "not UTF-8 text (line 2)"),
        (b"def score(a, b, c):\n    return 1.0\n\x00", "NUL"),
    ],
)
def test_unusable_files_are_rejected_with_the_reason(source, reason):
    with pytest.raises(InvalidMetricSource) as caught:
        validate_metric_source(source)
    assert reason in str(caught.value)
    assert isinstance(caught.value, ValueError)
