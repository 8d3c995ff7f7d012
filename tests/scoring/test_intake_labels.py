"""check_labels: values outside a label set, counted by rows, the message bounded."""

import pytest

from app.scoring.intake import IntakeError
from app.scoring.intake_labels import check_labels, distinct_labels, parse_label_list
from tests.helpers import csv_bytes


def _file(tmp_path, labels):  # type: ignore[no-untyped-def]
    path = tmp_path / "sub.csv"
    path.write_bytes(csv_bytes(["id", "y"], *[[i, label] for i, label in enumerate(labels)]))
    return path


def test_values_outside_are_named_with_their_row_counts(tmp_path):
    path = _file(tmp_path, ["cat", "rabbit", "dog", "rabbit", "hamster"])
    with pytest.raises(IntakeError) as caught:
        check_labels(path, column="y", labels=["cat", "dog"])
    assert caught.value.kind == "unknown_labels"
    message = caught.value.message
    assert "2 value(s) outside the label set, 3 row(s) in all" in message
    assert message.index("'rabbit' in 2 row(s)") < message.index("'hamster' in 1 row(s)")


def test_a_long_list_of_outside_values_is_cut_with_a_count(tmp_path):
    path = _file(tmp_path, [f"x{n:02d}" for n in range(30)] + ["x00"])
    with pytest.raises(IntakeError) as caught:
        check_labels(path, column="y", labels=["cat"])
    message = caught.value.message
    assert "30 value(s) outside the label set, 31 row(s) in all" in message
    assert "'x00' in 2 row(s)" in message and "and 25 more in 25 row(s)" in message
    assert "'x29'" not in message and len(message) < 400


def test_a_file_within_the_set_passes_and_empty_cells_are_left_to_the_intake(tmp_path):
    check_labels(_file(tmp_path, ["cat", "dog", ""]), column="y", labels=["cat", "dog"])


def test_label_lists_from_a_command_line():
    assert parse_label_list('["a", "b", "a"]') == ["a", "b"]
    assert parse_label_list(" a, b ,c ") == ["a", "b", "c"]
    for bad in ("[1, ", "[]", " , ", '{"a": 1}'):
        with pytest.raises(ValueError):
            parse_label_list(bad)


def test_distinct_labels_of_a_key():
    import numpy as np

    assert distinct_labels(np.array(["b", "a", "b"], dtype=object)) == ["a", "b"]
    assert distinct_labels(np.array([str(n) for n in range(1001)], dtype=object)) is None
