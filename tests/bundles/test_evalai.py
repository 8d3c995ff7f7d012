"""EvalAI challenge bundles, in the shapes EvalAI-Starters and EvalAI's upload path take."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.bundles import BundleError, read_bundle
from tests.bundles.builders import EVALAI_CONFIG, evalai_files, make_zip


def test_a_starters_bundle_gives_its_phases_columns_splits_and_program() -> None:
    competition = read_bundle(make_zip(evalai_files()))
    assert competition.source_format == "evalai"
    assert competition.title == "Random Number Generator Challenge"
    assert [c.key for c in competition.columns] == ["metric1", "metric2", "mean_error", "total"]
    assert [c.source_key for c in competition.columns] == [
        "Metric1",
        "Metric2",
        "Mean Error",
        "Total",
    ]
    assert competition.ranking == "total"
    dev, test = competition.phases
    assert (dev.name, dev.title, dev.program_phase) == ("dev", "Dev Phase", "dev")
    assert dev.start == datetime(2019, 1, 19, tzinfo=UTC)
    assert (dev.daily_submission_limit, dev.total_submission_limit) == (5, 50)
    assert dev.answer_key[0].path == "test_annotations_devsplit.json"
    assert dev.answer_key[0].data == b'{"a": 1, "b": 2}'
    assert dev.scorer is not None and dev.scorer.kind == "evalai"
    assert {f.path for f in dev.scorer.files} == {"__init__.py", "main.py", "utils.py"}
    assert test.scorer is dev.scorer


def test_phase_split_visibility_maps_to_public_private_and_hidden() -> None:
    competition = read_bundle(make_zip(evalai_files()))
    dev, test = competition.phases
    assert [(s.key, s.visibility) for s in dev.splits] == [("train_split", "hidden")]
    assert [(s.key, s.visibility) for s in test.splits] == [
        ("train_split", "public"),
        ("test_split", "hidden"),
    ]
    config = EVALAI_CONFIG.replace(
        "    dataset_split_id: 2\n    visibility: 1", "    dataset_split_id: 2\n    visibility: 2"
    )
    private = read_bundle(make_zip(evalai_files(config=config)))
    assert private.phases[1].splits[1].visibility == "private"


def test_leaderboard_public_false_is_a_hidden_board() -> None:
    dev, test = read_bundle(make_zip(evalai_files())).phases
    assert (dev.board, test.board) == ("hidden", "public")


def test_select_one_submission_is_counts_chosen_with_one() -> None:
    dev, test = read_bundle(make_zip(evalai_files())).phases
    assert (dev.counts, dev.final_selection_limit) == ("best", None)
    assert (test.counts, test.final_selection_limit) == ("chosen", 1)


def test_sort_ascending_metadata_overrides_the_split_order() -> None:
    columns = {c.key: c for c in read_bundle(make_zip(evalai_files())).columns}
    assert columns["mean_error"].direction == "minimize"
    assert columns["total"].direction == "maximize"


def test_a_phase_whose_precision_differs_gets_its_own_columns() -> None:
    competition = read_bundle(make_zip(evalai_files()))
    dev, test = competition.phases
    assert dev.columns is None
    assert test.columns is not None and {c.precision for c in test.columns} == {4}
    assert test.ranking == "total"


def test_default_order_by_not_among_the_labels_is_a_422_naming_file_and_field() -> None:
    config = EVALAI_CONFIG.replace('"default_order_by": "Total"', '"default_order_by": "Score"')
    with pytest.raises(BundleError) as caught:
        read_bundle(make_zip(evalai_files(config=config)))
    error = caught.value
    assert error.status_code == 422
    assert error.file == "bundle.zip/challenge_config.yaml"
    assert error.field == "leaderboard[0].schema.default_order_by"
    assert "'Score' is not one of the labels" in error.detail


def test_submission_meta_attributes_become_entry_fields() -> None:
    dev = read_bundle(make_zip(evalai_files())).phases[0]
    fields = {f.key: f for f in dev.entry_fields}
    assert fields["method_name"].on_board is True
    assert fields["textattribute"].type == "text"
    assert fields["singleoptionattribute"].type == "choice"
    assert fields["singleoptionattribute"].options == ("A", "B", "C")
    assert fields["singleoptionattribute"].required is True
    assert fields["truefalsefield"].type == "boolean"


def test_evaluation_script_given_as_a_directory_like_evalai_starters() -> None:
    competition = read_bundle(make_zip(evalai_files(script_as_dir=True)))
    assert competition.phases[0].scorer is not None
    assert {f.path for f in competition.phases[0].scorer.files} == {
        "__init__.py",
        "main.py",
        "utils.py",
    }


def test_relative_imports_in_the_script_are_not_missing_modules() -> None:
    competition = read_bundle(make_zip(evalai_files()))
    assert not [w for w in competition.warnings if "does not have" in w]


def test_a_wrapping_folder_and_macosx_junk_are_handled() -> None:
    competition = read_bundle(make_zip(evalai_files(), wrap="challenge", macosx=True))
    assert len(competition.phases) == 2


def test_description_html_is_sanitised() -> None:
    competition = read_bundle(make_zip(evalai_files()))
    assert "<script" not in competition.description.content
    assert "onclick" not in competition.description.content
    assert "Guess." in competition.description.content
    assert [p.kind for p in competition.pages] == ["evaluation", "page", "terms"]


def test_image_with_a_space_before_the_colon_is_the_logo() -> None:
    logo = read_bundle(make_zip(evalai_files())).logo
    assert logo is not None and logo.path == "logo.png"


def test_a_monthly_quota_is_named_as_not_imported() -> None:
    warnings = read_bundle(make_zip(evalai_files())).warnings
    assert any("max_submissions_per_month" in w for w in warnings)


def test_a_mean_error_sorted_descending_is_kept_and_named() -> None:
    config = EVALAI_CONFIG.replace('"metadata": {"Mean Error": {"sort_ascending": true}},', "")
    competition = read_bundle(make_zip(evalai_files(config=config)))
    assert {c.key: c.direction for c in competition.columns}["mean_error"] == "maximize"
    assert any("'mean_error'" in w and "looks like an error" in w for w in competition.warnings)


def test_remote_evaluation_and_docker_challenges_are_named() -> None:
    config = EVALAI_CONFIG.replace("remote_evaluation: False", "remote_evaluation: True").replace(
        "is_docker_based: False", "is_docker_based: True"
    )
    warnings = read_bundle(make_zip(evalai_files(config=config))).warnings
    assert any("remote_evaluation" in w for w in warnings)
    assert any("is_docker_based" in w for w in warnings)


def test_the_only_yaml_of_another_name_is_the_config_as_on_the_upload_path() -> None:
    files = evalai_files()
    files["zip_challenge.yaml"] = files.pop("challenge_config.yaml")
    assert len(read_bundle(make_zip(files)).phases) == 2


def test_two_yamls_prefer_challenge_config_like_the_evalai_examples() -> None:
    files = evalai_files()
    files["zip_challenge.yaml"] = "title: other\n"
    assert read_bundle(make_zip(files)).title == "Random Number Generator Challenge"


def test_an_annotation_file_that_is_missing_is_named() -> None:
    files = evalai_files()
    del files["annotations/test_annotations_devsplit.json"]
    with pytest.raises(BundleError) as caught:
        read_bundle(make_zip(files))
    assert caught.value.field == "challenge_phases[0].test_annotation_file"


def test_init_inside_a_folder_of_the_script_zip_is_used_and_named() -> None:
    files = evalai_files()
    files["evaluation_script.zip"] = make_zip(
        {
            "__init__.py": "from .main import evaluate\n",
            "main.py": "def evaluate(*a, **k):\n    return {}\n",
        },
        wrap="evaluation_script",
    )
    competition = read_bundle(make_zip(files))
    assert competition.phases[0].scorer is not None
    assert any("inside a folder" in w for w in competition.warnings)


def test_a_script_without_init_is_refused() -> None:
    files = evalai_files(script={"main.py": "def evaluate(*a):\n    pass\n", "other.py": ""})
    with pytest.raises(BundleError, match="no __init__.py"):
        read_bundle(make_zip(files))


def test_a_python2_script_is_converted_keeping_integer_division_and_iteritems() -> None:
    script = {
        "__init__.py": "from .main import evaluate\n",
        "main.py": (
            "def evaluate(a, b, c, **k):\n    print 'scoring', a\n"
            "    hits = {'x': 3}\n    for k, v in hits.iteritems():\n        pass\n"
            "    return {'result': [{'s': {'half': v / 2}}]}\n"
        ),
    }
    competition = read_bundle(make_zip(evalai_files(script=script)))
    scorer = competition.phases[0].scorer
    assert scorer is not None and not scorer.python2
    main = scorer.file("main.py")
    assert main is not None
    namespace: dict[str, object] = {}
    exec(compile(main.data, "main.py", "exec"), namespace)  # our own test script, converted
    evaluate = namespace["evaluate"]
    assert evaluate("a", "b", "c") == {"result": [{"s": {"half": 1}}]}  # 3 / 2 as Python 2
    (warning,) = [w for w in competition.warnings if "converted to Python 3" in w]
    assert "main.py" in warning and "integer division kept at 1" in warning


def test_a_python2_script_that_does_not_parse_is_flagged_with_file_and_line() -> None:
    script = {
        "__init__.py": "from .main import evaluate\n",
        "main.py": "def evaluate(a, b, c, **k):\n    print 'scoring', a\n    if a\n",
    }
    competition = read_bundle(make_zip(evalai_files(script=script)))
    assert competition.phases[0].scorer is not None and competition.phases[0].scorer.python2
    assert any("Python 2 (main.py line 2: a print statement" in w for w in competition.warnings)


def test_a_script_importing_nltk_is_named_once() -> None:
    script = {
        "__init__.py": "from .main import evaluate\n",
        "main.py": "import nltk\nfrom nltk.tokenize import word_tokenize\nimport numpy as np\n\ndef evaluate(*a, **k):\n    return {}\n",
    }
    warnings = read_bundle(make_zip(evalai_files(script=script))).warnings
    assert [w for w in warnings if "does not have" in w] == [
        "the evaluation script imports nltk (main.py line 1), which the scorer runtime does not have"
    ]


def test_an_unknown_split_id_is_named() -> None:
    config = EVALAI_CONFIG.replace("dataset_split_id: 2", "dataset_split_id: 9")
    with pytest.raises(BundleError) as caught:
        read_bundle(make_zip(evalai_files(config=config)))
    assert caught.value.field == "challenge_phase_splits[2].dataset_split_id"


def test_a_phase_ending_before_it_starts_is_refused() -> None:
    config = EVALAI_CONFIG.replace("end_date: 2099-04-25 23:59:59", "end_date: 2018-04-25 23:59:59")
    with pytest.raises(BundleError) as caught:
        read_bundle(make_zip(evalai_files(config=config)))
    assert caught.value.field == "challenge_phases[0].end_date"


def test_quoted_dates_read_as_unquoted_ones() -> None:
    test = read_bundle(make_zip(evalai_files())).phases[1]
    assert test.start == datetime(2019, 1, 1, tzinfo=UTC)


def test_labels_with_slashes_and_codenames_with_spaces_like_evalai_examples() -> None:
    config = (
        EVALAI_CONFIG.replace(
            '"labels": ["Metric1", "Metric2", "Mean Error", "Total"]',
            '"labels": ["yes/no", "number", "Mean Error", "Total"]',
        )
        .replace("codename: dev\n", "codename: Challenge phase codename\n")
        .replace("codename: train_split", "codename: codename of dataset split")
    )
    competition = read_bundle(make_zip(evalai_files(config=config)))
    assert [c.key for c in competition.columns][:2] == ["yes_no", "number"]
    dev = competition.phases[0]
    assert (dev.name, dev.program_phase) == ("challenge-phase-codename", "Challenge phase codename")
    assert dev.splits[0].key == "codename of dataset split"


def test_split_rows_without_precision_and_order_take_the_model_defaults() -> None:
    test = read_bundle(make_zip(evalai_files())).phases[1]
    assert test.splits[1].visibility == "hidden"  # its row gives neither precision nor order
    assert test.columns is not None and test.columns[0].precision == 4  # the public row's


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        (
            "test_annotation_file: annotations/test_annotations_devsplit.json",
            "test_annotation_file: ../../etc/passwd",
            "challenge_phases[0].test_annotation_file",
        ),
        (
            "evaluation_script: evaluation_script.zip",
            "evaluation_script: /etc/evaluation_script.zip",
            "evaluation_script",
        ),
        (
            "description: templates/description.html",
            "description: ../description.html",
            "description",
        ),
    ],
)
def test_a_config_path_that_points_outside_the_bundle_is_refused(
    key: str, value: str, field: str
) -> None:
    with pytest.raises(BundleError, match="points outside the bundle") as caught:
        read_bundle(make_zip(evalai_files(config=EVALAI_CONFIG.replace(key, value))))
    assert caught.value.field == field


def test_a_phase_description_given_inline_is_sanitised() -> None:
    config = EVALAI_CONFIG.replace(
        "description: templates/challenge_phase_2_description.html",
        "description: <b>Test</b><script>x()</script>",
    )
    assert read_bundle(make_zip(evalai_files(config=config))).phases[1].description == "<b>Test</b>"


def test_a_checkbox_attribute_is_a_single_choice_and_named() -> None:
    config = EVALAI_CONFIG.replace(
        "      - name: TrueFalseField\n",
        "      - name: MultipleChoiceAttribute\n        description: Sample\n        type: checkbox\n"
        '        options: ["alpha", "beta"]\n      - name: TrueFalseField\n',
    )
    competition = read_bundle(make_zip(evalai_files(config=config)))
    field = next(
        f for f in competition.phases[0].entry_fields if f.key == "multiplechoiceattribute"
    )
    assert (field.type, field.options) == ("choice", ("alpha", "beta"))
    assert any("several options" in w for w in competition.warnings)


def test_a_radio_attribute_without_options_is_refused() -> None:
    config = EVALAI_CONFIG.replace('        options: ["A", "B", "C"]\n', "")
    with pytest.raises(BundleError) as caught:
        read_bundle(make_zip(evalai_files(config=config)))
    assert caught.value.field == "challenge_phases[0].submission_meta_attributes[1].options"


def test_a_starters_repository_checked_out_as_a_directory(tmp_path: Path) -> None:
    for path, data in evalai_files(script_as_dir=True).items():
        target = tmp_path / "EvalAI-Starters" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode() if isinstance(data, str) else data)
    (tmp_path / "EvalAI-Starters/.git").mkdir()
    (tmp_path / "EvalAI-Starters/.git/config").write_text("[core]\n")
    competition = read_bundle(tmp_path / "EvalAI-Starters")
    assert [p.name for p in competition.phases] == ["dev", "test"]
