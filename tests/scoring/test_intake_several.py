"""A refused file names every problem found past parsing, the first few of each kind with their
lines and ids, not only the first (issue 42)."""

from pathlib import Path

import pytest

from app.metrics import get_metric
from app.scoring.intake import IntakeError, read_answer_key, read_submission

RMSE = get_metric("rmse")
KEY = b"id,y\na,1\nb,2\nc,3\nd,4\ne,5\n"


def _refusal(tmp_path: Path, data: bytes) -> IntakeError:
    (tmp_path / "key.csv").write_bytes(KEY)
    (tmp_path / "sub.csv").write_bytes(data)
    key = read_answer_key(tmp_path / "key.csv", metric=RMSE, params=RMSE.parse_params(None))
    with pytest.raises(IntakeError) as caught:
        read_submission(tmp_path / "sub.csv", key=key, metric=RMSE)
    return caught.value


def test_unknown_ids_and_bad_values_are_named_together(tmp_path):
    error = _refusal(tmp_path, b"id,y\na,1\nzz,2\nc,nan\nd,inf\ne,1e300\n")
    assert error.kinds[0] == "unknown_ids"
    assert set(error.kinds) >= {"unknown_ids", "nan_values", "infinite_values", "huge_values"}
    assert error.kind == "unknown_ids"
    message = error.message
    assert "'zz'" in message and "line 3" in message  # the unknown id and its line
    assert "NaN" in message and "line 4" in message
    assert "infinite" in message and "line 5" in message
    assert "beyond" in message and "line 6" in message


def test_one_problem_is_one_message_as_before(tmp_path):
    error = _refusal(tmp_path, b"id,y\na,1\nb,2\nc,3\nd,4\ne,nan\n")
    assert error.kinds == ["nan_values"] and "line 6" in error.message
    assert "unknown" not in error.message and "infinite" not in error.message
