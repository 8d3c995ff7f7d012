"""Codabench v2 bundles, in the shape of Codabench's iris example."""

from datetime import UTC, datetime

import pytest

from app.bundles import BundleError, Computed, read_bundle
from tests.bundles.builders import CODABENCH_CONFIG, codabench_files, make_zip


def read(config: str = CODABENCH_CONFIG):  # type: ignore[no-untyped-def]
    return read_bundle(make_zip(codabench_files(config)))


def test_an_iris_shaped_bundle_gives_phases_columns_and_tasks() -> None:
    competition = read()
    assert competition.source_format == "codabench"
    assert competition.title == "Iris flowers"
    dev, final = competition.phases
    assert (dev.name, dev.title) == ("development", "Development")
    assert (dev.daily_submission_limit, dev.total_submission_limit, dev.execution_time_limit) == (
        5,
        100,
        500,
    )
    assert dev.answer_key[0].path == "iris_valid.solution"
    assert final.answer_key[0].path == "iris_test.solution"
    assert dev.scorer is not None and dev.scorer.kind == "codabench"
    assert dev.scorer.command == "python3 /app/program/score.py"
    assert final.scorer is dev.scorer


def test_month_first_dates_as_codabench_reads_them() -> None:
    dev, final = read().phases
    assert dev.start == datetime(2026, 1, 1, tzinfo=UTC)
    assert dev.end == datetime(2026, 8, 7, tzinfo=UTC)  # 8-7 is 7 August
    assert final.start == datetime(2026, 8, 8, tzinfo=UTC)


def test_a_last_phase_without_end_never_ends() -> None:
    assert read().phases[1].end is None


def test_columns_keep_sorting_precision_hidden_and_computation() -> None:
    competition = read()
    columns = {c.key: c for c in competition.columns}
    assert columns["set1_score"].precision == 4
    assert columns["set2_score"].precision == 2
    assert columns["duration"].hidden is True
    assert columns["duration"].source_key == "Duration"
    assert columns["mean_score"].computed == Computed(op="mean", of=("set1_score", "set2_score"))
    assert columns["mean_score"].source_key is None


def test_primary_index_is_the_ranking_column() -> None:
    assert read().ranking == "mean_score"


def test_a_duration_sorted_descending_is_kept_and_named() -> None:
    competition = read()
    assert {c.key: c.direction for c in competition.columns}["duration"] == "maximize"
    assert any(
        "'duration'" in w and "looks like an error or a cost" in w for w in competition.warnings
    )


def test_force_last_is_counts_last() -> None:
    assert {p.counts for p in read().phases} == {"last"}


def test_add_is_counts_chosen_with_one() -> None:
    phase = read(
        CODABENCH_CONFIG.replace("submission_rule: Force_Last", "submission_rule: Add")
    ).phases[0]
    assert (phase.counts, phase.final_selection_limit) == ("chosen", 1)


def test_an_invalid_submission_rule_is_refused_instead_of_hanging() -> None:
    with pytest.raises(BundleError) as caught:
        read(
            CODABENCH_CONFIG.replace(
                "submission_rule: Force_Last", "submission_rule: Add and Delete Multiple"
            )
        )
    assert caught.value.field == "leaderboards[0].submission_rule"


def test_the_fact_sheet_becomes_entry_fields_with_string_booleans() -> None:
    fields = {f.key: f for f in read().phases[0].entry_fields}
    assert (fields["method"].type, fields["method"].required, fields["method"].on_board) == (
        "text",
        True,
        True,
    )
    assert (fields["used_external_data"].type, fields["used_external_data"].required) == (
        "boolean",
        False,
    )


def test_an_ingestion_program_is_named_and_the_phase_still_takes_results() -> None:
    competition = read()
    assert any("ingestion program" in w and "Final Task" in w for w in competition.warnings)
    assert competition.phases[1].scorer is not None


def test_the_docker_image_is_recorded_and_named() -> None:
    competition = read()
    assert competition.docker_image == "codalab/codalab-legacy:py37"
    assert any("codalab/codalab-legacy:py37" in w for w in competition.warnings)


def test_pages_terms_and_markdown_are_kept_sanitised() -> None:
    competition = read()
    assert competition.description.content.startswith("Predict the species")
    assert [(p.title, p.kind, p.format) for p in competition.pages] == [
        ("Overview", "page", "html"),
        ("Data", "data", "markdown"),
        ("Evaluation", "evaluation", "html"),
        ("Terms", "terms", "markdown"),
    ]
    assert "<iframe" not in competition.pages[0].content


def test_a_wrapping_folder_is_descended_into_as_codabench_does() -> None:
    competition = read_bundle(make_zip(codabench_files(), wrap="iris_bundle", macosx=True))
    assert len(competition.phases) == 2


def test_the_singular_leaderboard_key_of_the_docs_is_accepted() -> None:
    competition = read(CODABENCH_CONFIG.replace("leaderboards:\n", "leaderboard:\n"))
    assert competition.ranking == "mean_score"


def test_a_computation_over_an_unknown_index_is_named() -> None:
    with pytest.raises(BundleError) as caught:
        read(CODABENCH_CONFIG.replace("computation_indexes: [0, 1]", "computation_indexes: [0, 7]"))
    assert caught.value.field == "leaderboards[0].columns[2].computation_indexes"


def test_a_phase_naming_an_unknown_task_is_named() -> None:
    with pytest.raises(BundleError) as caught:
        read(CODABENCH_CONFIG.replace("  tasks:\n  - 1\n", "  tasks:\n  - 5\n"))
    assert caught.value.field == "phases[1].tasks"


def test_a_task_kept_on_a_codabench_server_is_named() -> None:
    config = CODABENCH_CONFIG.replace(
        "- index: 1\n  name: Final Task\n",
        "- index: 1\n  key: 6c4f2a3e-0000-4000-8000-000000000000\n  name: Final Task\n",
    ).replace("  scoring_program: scoring_program\n  ingestion_program", "  ingestion_program")
    with pytest.raises(BundleError) as caught:
        read(config)
    assert caught.value.field == "tasks[1].key"


def test_a_scoring_program_without_a_command_is_refused() -> None:
    files = codabench_files()
    files["scoring_program/metadata.yaml"] = "description: no command here\n"
    with pytest.raises(BundleError, match="has no command"):
        read_bundle(make_zip(files))


def test_a_scoring_program_given_as_a_zip_inside_the_bundle() -> None:
    files = codabench_files()
    program = {
        k.removeprefix("scoring_program/"): files.pop(k)
        for k in list(files)
        if k.startswith("scoring_program/")
    }
    files["scoring_program.zip"] = make_zip(program)
    config = CODABENCH_CONFIG.replace(
        "scoring_program: scoring_program", "scoring_program: scoring_program.zip"
    )
    files["competition.yaml"] = config
    competition = read_bundle(make_zip(files))
    assert competition.phases[0].scorer is not None
    assert competition.phases[0].scorer.file("score.py") is not None


def test_hard_coded_app_paths_and_numpy_raise_no_warning() -> None:
    assert not [w for w in read().warnings if "does not have" in w]


def test_an_offset_date_is_converted_to_utc() -> None:
    phase = read(
        CODABENCH_CONFIG.replace(
            "start: 1-1-2026 # Month/Day/Year", "start: '2026-01-01T02:00:00+02:00'"
        )
    ).phases[0]
    assert phase.start == datetime(2026, 1, 1, 0, 0, tzinfo=UTC)


def test_a_version_that_is_neither_is_refused() -> None:
    with pytest.raises(BundleError) as caught:
        read(CODABENCH_CONFIG.replace("version: 2 #", "version: 3 #"))
    assert caught.value.field == "version"


def test_an_early_codabench_bundle_without_version_is_read_as_v2() -> None:
    competition = read(
        CODABENCH_CONFIG.replace("version: 2 # this means that it is a Codabench bundle\n", "")
    )
    assert competition.source_format == "codabench"
    assert any("has no version" in w for w in competition.warnings)


def test_a_cost_sorted_ascending_is_not_named() -> None:
    config = CODABENCH_CONFIG.replace(
        "title: Accuracy set 1\n    key: set1_score\n    index: 0\n    sorting: desc",
        "title: Average Cost\n    key: score\n    index: 0\n    sorting: asc",
    )
    competition = read(config.replace("computation_indexes: [0, 1]", "computation_indexes: [1]"))
    assert {c.key: c.direction for c in competition.columns}["score"] == "minimize"
    assert not [w for w in competition.warnings if "'score'" in w]


def test_a_computed_column_whose_inputs_sort_the_other_way_is_named() -> None:
    competition = read(
        CODABENCH_CONFIG.replace(
            "key: mean_score\n    index: 2\n    sorting: desc",
            "key: mean_score\n    index: 2\n    sorting: asc",
        )
    )
    assert any("computed column 'mean_score'" in w for w in competition.warnings)


def test_a_select_fact_sheet_of_true_and_false_reads_as_their_text() -> None:
    # Codabench's competition_v2_multi_task_fact_sheet.zip: selection [True, False], and ""
    # as the choice nobody made yet.
    config = CODABENCH_CONFIG.replace(
        "    type: checkbox\n    title: External data?\n    selection: [True, False]",
        '    type: select\n    title: External data?\n    selection: ["", True, False]',
    )
    assert config != CODABENCH_CONFIG
    competition = read(config)
    (field,) = [e for e in competition.phases[0].entry_fields if e.key == "used_external_data"]
    assert field.type == "choice" and field.options == ("True", "False")


TWO_TASK_PHASE = """
- index: 0
  name: Development
  start: 1-1-2026
  end: 8-7-2026
  tasks:
  - 0
  - 1
"""


def test_a_phase_of_several_tasks_keeps_each_tasks_program_reference_and_columns() -> None:
    start = CODABENCH_CONFIG.index("phases:\n") + len("phases:\n")
    end = CODABENCH_CONFIG.index("leaderboards:")
    (phase,) = read(CODABENCH_CONFIG[:start] + TWO_TASK_PHASE + CODABENCH_CONFIG[end:]).phases
    assert [(t.key, t.title) for t in phase.tasks] == [
        ("development-task", "Development Task"),
        ("final-task", "Final Task"),
    ]
    dev, final = phase.tasks
    assert dev.answer_key[0].path == "iris_valid.solution"
    assert final.answer_key[0].path == "iris_test.solution"
    assert dev.scorer is not None and final.ingestion is not None and dev.ingestion is None
    # Each task shows the leaderboard's columns, its ranking column first.
    assert [c.key for c in dev.columns][0] == "mean_score"
    assert phase.scorer is None and phase.answer_key == ()
    (average,) = phase.columns or ()
    assert phase.ranking == average.key == "average_rank"
    assert average.computed is not None
    assert average.computed.of == ("development-task.mean_score", "final-task.mean_score")
