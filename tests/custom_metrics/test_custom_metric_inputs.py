"""What a custom metric receives: the answer key and the submission as aligned DataFrames.

These run the child's reading code in the test process; test_custom_metric_sandbox.py shows the
same rejections reach the participant through a real child process.
"""

import numpy as np
import pytest

from app.custom_metrics.frames import AnswerKeyRejected, SubmissionRejected, load_inputs


def load(key, sub, *, id_column=None, solution_only_columns=()):
    return load_inputs(
        answer_key=key,
        submission=sub,
        id_column=id_column,
        solution_only_columns=list(solution_only_columns),
    )


@pytest.fixture
def key(csv_file):
    return csv_file(
        "key.csv",
        ["id", "label", "Usage"],
        [
            ["007", "NA", "Public"],
            ["b", "None", "Private"],
            ["c", "cat", "Ignored"],
        ],
    )


def test_the_submission_is_ordered_like_the_key_and_cells_are_literal(key, csv_file):
    sub = csv_file("sub.csv", ["label", "id"], [["null", "c"], ["", "007"], ["NA", "b"]])
    inputs = load(key, sub)
    assert list(inputs.solution.columns) == ["id", "label"]  # Usage is dropped
    assert list(inputs.submission.columns) == ["id", "label"]
    assert inputs.solution["id"].tolist() == ["007", "b", "c"]  # ids stay strings: "007", not 7
    assert inputs.submission["id"].tolist() == ["007", "b", "c"]
    assert inputs.solution["label"].tolist() == ["NA", "None", "cat"]
    assert inputs.submission["label"].tolist() == ["", "NA", "null"]


def test_usage_splits_the_rows_into_scored_public_and_private(key, csv_file):
    sub = csv_file("sub.csv", ["id", "label"], [["007", "x"], ["b", "y"], ["c", "z"]])
    inputs = load(key, sub)
    parts = inputs.parts()
    assert {name: mask.tolist() for name, mask in parts.items()} == {
        "score": [True, True, False],
        "public": [True, False, False],
        "private": [False, True, False],
    }
    solution, submission = inputs.frames(parts["private"])
    assert solution.to_dict("list") == {"id": ["b"], "label": ["None"]}
    assert submission.to_dict("list") == {"id": ["b"], "label": ["y"]}
    assert solution.index.tolist() == [0]


def test_a_part_without_rows_is_not_scored(csv_file):
    key = csv_file("key.csv", ["id", "y", "Usage"], [[1, 0.5, "Private"], [2, 0.1, "Ignored"]])
    sub = csv_file("sub.csv", ["id", "y"], [[1, 0.5], [2, 0.1]])
    assert set(load(key, sub).parts()) == {"score", "private"}


def test_without_usage_every_row_is_scored_once(csv_file):
    key = csv_file("key.csv", ["id", "y"], [[1, 0.5], [2, 0.1]])
    sub = csv_file("sub.csv", ["id", "y"], [[2, 0.2], [1, 0.4]])
    inputs = load(key, sub)
    assert inputs.parts() == {"score": None}
    solution, submission = inputs.frames(None)
    assert submission["y"].tolist() == [0.4, 0.2]
    assert solution["y"].dtype == np.float64


def test_each_call_gets_its_own_copy(csv_file):
    key = csv_file("key.csv", ["id", "y"], [[1, 0.5]])
    inputs = load(key, csv_file("sub.csv", ["id", "y"], [[1, 0.5]]))
    solution, _ = inputs.frames(None)
    del solution["id"]  # what many Kaggle metrics do first
    again, _ = inputs.frames(None)
    assert list(again.columns) == ["id", "y"]


def test_solution_only_columns_reach_the_metric_but_are_not_submitted(csv_file):
    key = csv_file("key.csv", ["row", "weight", "y"], [[1, 2.0, 0.5]])
    inputs = load(
        key,
        csv_file("sub.csv", ["row", "y"], [[1, 0.4]]),
        id_column="row",
        solution_only_columns=["weight"],
    )
    assert list(inputs.solution.columns) == ["row", "weight", "y"]
    assert inputs.target_columns == ["y"]


def _ids(n):
    return [[f"r{i}", 0.5] for i in range(n)]


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        (_ids(8) + [["x1", 0.5], ["x2", 0.5]], "2 id(s) are not in the answer key: 'x1', 'x2'"),
        (_ids(8) + [["r3", 0.1]], "1 id(s) appear more than once: 'r3'"),
        (_ids(1), "7 id(s) of the answer key are missing: 'r1', 'r2', 'r3', 'r4', 'r5'"),
        ([], "8 id(s) of the answer key are missing"),
    ],
)
def test_id_mismatches_are_rejected_naming_the_count_and_first_ids(csv_file, rows, reason):
    key = csv_file("key.csv", ["id", "y"], _ids(8))
    with pytest.raises(SubmissionRejected) as caught:
        load(key, csv_file("sub.csv", ["id", "y"], rows))
    assert reason in str(caught.value)


def test_a_very_long_id_is_cut_in_the_message(csv_file):
    key = csv_file("key.csv", ["id", "y"], _ids(1))
    with pytest.raises(SubmissionRejected) as caught:
        load(key, csv_file("sub.csv", ["id", "y"], [["r0", 1], ["z" * 5000, 1]]))
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (["id"], "missing column(s) 'y'; expected exactly id, y"),
        (["id", "y", "Usage"], "unexpected column(s) 'Usage'"),
        (["ID", "y"], "missing column(s) 'id' and unexpected column(s) 'ID'"),
        (["id", "y", "y"], "repeats column(s) 'y'"),
    ],
)
def test_column_mismatches_are_rejected_naming_the_columns(csv_file, header, reason):
    key = csv_file("key.csv", ["id", "y"], _ids(2))
    sub = csv_file("sub.csv", header, [["r0", 1, 1][: len(header)], ["r1", 1, 1][: len(header)]])
    with pytest.raises(SubmissionRejected) as caught:
        load(key, sub)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "the submission is empty"),
        (b"id,y\nr0,1\nr1,1,7\n", "could not be read as CSV"),
        (b"id,y\nr0,\xff\nr1,1\n", "not valid UTF-8"),
    ],
)
def test_unreadable_submissions_are_rejected(csv_file, tmp_path, content, reason):
    key = csv_file("key.csv", ["id", "y"], _ids(2))
    sub = tmp_path / "sub.csv"
    sub.write_bytes(content)
    with pytest.raises(SubmissionRejected) as caught:
        load(key, sub)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("header", "rows", "reason"),
    [
        (["id", "y"], [[1, 0.5], [1, 0.6]], "1 duplicate id(s): '1'"),
        (["id", "y", "Usage"], [[1, 0.5, "public"]], "Public, Private or Ignored"),
        (["id", "y", "Usage"], [[1, 0.5, "Ignored"]], "every row"),
        (["id", "Usage"], [[1, "Public"]], "no target column"),
        (["id", "y"], [], "no data rows"),
    ],
)
def test_unusable_answer_keys_are_the_hosts_problem(csv_file, header, rows, reason):
    key = csv_file("key.csv", header, rows)
    sub = csv_file("sub.csv", ["id", "y"], [[1, 0.5]])
    with pytest.raises(AnswerKeyRejected) as caught:
        load(key, sub)
    assert reason in str(caught.value)


def test_a_named_id_column_must_exist_in_the_key(csv_file):
    key = csv_file("key.csv", ["id", "y"], _ids(1))
    with pytest.raises(AnswerKeyRejected, match="no id column 'row_id'"):
        load(key, csv_file("sub.csv", ["id", "y"], _ids(1)), id_column="row_id")
