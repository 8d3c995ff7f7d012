"""The program runner's contract: layouts and commands built, program outputs read as scores."""

from pathlib import Path

import numpy as np
import pytest

from app.bundles import BundleFile, Column, Computed, Phase, Program, Split
from app.bundles.runner import (
    ProgramOutputError,
    coda_layout,
    evalai_call,
    map_coda_scores,
    map_evalai_result,
    materialise,
    parse_scores,
    substitute,
    to_number,
)
from tests.bundles.builders import make_zip

COLUMNS = (
    Column(key="metric1", title="Metric1", direction="maximize", source_key="Metric1"),
    Column(key="total", title="Total", direction="maximize", source_key="Total"),
)
SPLITS = (Split("train_split", "Train", "public"), Split("test_split", "Test", "private"))


def test_evalai_results_map_split_by_split_to_public_and_private() -> None:
    output = {
        "result": [
            {"train_split": {"Metric1": np.float64(0.5), "Total": np.float32(1.0)}},
            {"test_split": {"Metric1": 0.25, "Total": "0.75"}},
        ],
        "submission_result": {"note": "shown to the team"},
    }
    scores = map_evalai_result(output, columns=COLUMNS, splits=SPLITS)
    assert scores.scores == {
        "metric1": {"public": 0.5, "private": 0.25},
        "total": {"public": 1.0, "private": 0.75},
    }
    assert scores.extra == {"note": "shown to the team"}


def test_evalai_missing_labels_are_blank_and_extra_labels_noted() -> None:
    output = {"result": [{"train_split": {"Metric1": 1, "Bonus": 3}}]}
    scores = map_evalai_result(output, columns=COLUMNS, splits=SPLITS)
    assert scores.scores["total"] == {"public": None}
    assert scores.notes == ("train_split: 'Bonus' is not a column; ignored",)


def test_evalai_a_split_not_linked_to_the_phase_fails_the_submission() -> None:
    with pytest.raises(ProgramOutputError, match="'val_split' is not a split of this phase"):
        map_evalai_result({"result": [{"val_split": {"Total": 1}}]}, columns=COLUMNS, splits=SPLITS)


@pytest.mark.parametrize(
    "output", [{}, {"result": {"train_split": {}}}, None, {"result": [{"a": {}, "b": {}}]}]
)
def test_evalai_output_without_a_result_list_fails(output: object) -> None:
    with pytest.raises(ProgramOutputError):
        map_evalai_result(output, columns=COLUMNS, splits=SPLITS)


def test_evalai_computed_columns_follow_per_split() -> None:
    columns = (
        *COLUMNS,
        Column(
            key="avg",
            title="Avg",
            direction="maximize",
            computed=Computed("mean", ("metric1", "total")),
        ),
    )
    output = {
        "result": [
            {"train_split": {"Metric1": 0.5, "Total": 1.0}},
            {"test_split": {"Metric1": 0.0, "Total": 1.0}},
        ]
    }
    scores = map_evalai_result(output, columns=columns, splits=SPLITS)
    assert scores.scores["avg"] == {"public": 0.75, "private": 0.5}


def test_evalai_call_passes_the_codename_and_the_annotation() -> None:
    program = Program(
        kind="evalai", files=(BundleFile("__init__.py", b"from .main import evaluate\n"),)
    )
    phase = Phase(
        name="dev-phase",
        title="Dev",
        start=None,
        end=None,
        scorer=program,
        program_phase="dev",
        answer_key=(BundleFile("annotations.json", b"{}"),),
    )
    call = evalai_call(phase, submission_metadata={"method_name": "x"})
    assert (call.phase_codename, call.annotation.path) == ("dev", "annotations.json")
    assert call.package == program.files


def test_substitute_replaces_the_legacy_variables() -> None:
    assert (
        substitute("python $program/evaluate.py $input $output")
        == "python /app/program/evaluate.py /app/input /app/output"
    )
    assert (
        substitute("cp -r $hidden $shared/x ${predictions}", root="/run")
        == "cp -r /run/input/ref /run/shared/x /run/input/res"
    )
    assert substitute("python $scoring_program/x.py") == "python $scoring_program/x.py"


PROGRAM = Program(
    kind="codalab",
    files=(
        BundleFile("evaluate.py", b"print('hi')"),
        BundleFile("metadata", b"command: python $program/evaluate.py $input $output"),
    ),
    command="python $program/evaluate.py $input $output",
)


def test_a_zipped_submission_is_unzipped_into_input_res() -> None:
    layout = coda_layout(
        PROGRAM,
        (BundleFile("answer.txt", b"3.14"),),
        make_zip({"pi.txt": "3.1"}, macosx=True),
        submission_name="sub.zip",
    )
    assert layout.files == {
        "program/evaluate.py": b"print('hi')",
        "program/metadata": b"command: python $program/evaluate.py $input $output",
        "input/ref/answer.txt": b"3.14",
        "input/res/pi.txt": b"3.1",
        # As Codabench's prediction step leaves it: v1.5 scorers read elapsedTime there.
        "input/res/metadata": b"exitCode: 0\nelapsedTime: 0\n",
    }
    assert layout.argv == ("python", "/app/program/evaluate.py", "/app/input", "/app/output")
    assert "output" in layout.dirs and "shared" in layout.dirs


def test_a_submissions_own_metadata_file_is_kept() -> None:
    layout = coda_layout(
        PROGRAM, (), make_zip({"metadata": "elapsedTime: 12"}), submission_name="sub.zip"
    )
    assert layout.files["input/res/metadata"] == b"elapsedTime: 12"


def test_a_plain_submission_is_placed_as_is() -> None:
    layout = coda_layout(PROGRAM, (), b"3.1", submission_name="../../pi.txt")
    assert layout.files["input/res/pi.txt"] == b"3.1"


def test_a_hostile_zip_submission_is_refused() -> None:
    with pytest.raises(Exception, match="escapes its folder"):
        coda_layout(PROGRAM, (), make_zip({"../x": "y"}), submission_name="sub.zip")


def test_materialise_writes_the_layout(tmp_path: Path) -> None:
    layout = coda_layout(
        PROGRAM, (BundleFile("answer.txt", b"3.14"),), b"3.1", submission_name="pi.txt"
    )
    materialise(layout, tmp_path)
    assert (tmp_path / "input/ref/answer.txt").read_bytes() == b"3.14"
    assert (tmp_path / "output").is_dir()


def test_scores_txt_without_a_space_after_the_colon_as_codalab_read_it() -> None:
    scores, notes = parse_scores({"scores.txt": b"Difference:0\ncorrect:1"})
    assert scores == {"Difference": 0.0, "correct": 1.0}
    assert notes == ()


def test_scores_txt_with_numpy_ish_values_and_junk_lines() -> None:
    scores, notes = parse_scores(
        {
            "scores.txt": b"a: 0.5\nb: nan\nc: np.float64(0.25)\n\nDuration: 12.5\nno colon here\nd: high\n"
        }
    )
    assert (
        scores["a"] == 0.5
        and np.isnan(scores["b"])
        and scores["c"] == 0.25
        and scores["Duration"] == 12.5
    )
    assert notes == (
        "scores.txt line 6: no 'key: value'; ignored",
        "scores.txt line 7: 'high' is not a number; ignored",
    )


def test_scores_json_is_preferred_over_scores_txt() -> None:
    scores, _ = parse_scores(
        {"scores.json": b'{"set1_score": 0.9, "x": NaN}', "scores.txt": b"set1_score: 0.1"}
    )
    assert scores["set1_score"] == 0.9 and np.isnan(scores["x"])


def test_no_scores_file_is_the_platform_s_message() -> None:
    with pytest.raises(ProgramOutputError, match="neither scores.json nor scores.txt"):
        parse_scores({"metadata": b""})


def test_a_scores_json_that_is_not_an_object_fails() -> None:
    with pytest.raises(ProgramOutputError, match="JSON object"):
        parse_scores({"scores.json": b"[1, 2]"})


def test_coda_scores_drop_unknown_keys_and_fill_computed() -> None:
    columns = (
        Column(key="set1_score", title="S1", direction="maximize"),
        Column(key="duration", title="Duration", direction="minimize", source_key="Duration"),
        Column(
            key="sum",
            title="Sum",
            direction="maximize",
            computed=Computed("sum", ("set1_score", "duration")),
        ),
    )
    scores = map_coda_scores({"set1_score": 0.5, "Duration": 2.0, "extra": 1.0}, columns=columns)
    assert scores.scores == {
        "set1_score": {"public": 0.5},
        "duration": {"public": 2.0},
        "sum": {"public": 2.5},
    }
    assert scores.notes == ("'extra' is not a column; ignored",)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (1, 1.0),
        ("0.5", 0.5),
        (" 2 ", 2.0),
        ("numpy.float32(1.5)", 1.5),
        (np.int64(3), 3.0),
        (True, None),
        ("x", None),
        (None, None),
    ],
)
def test_to_number(raw: object, expected: float | None) -> None:
    assert to_number(raw) == expected
