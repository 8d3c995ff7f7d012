"""CodaLab v1.5 bundles, in the shapes of CodaLab's hello-world and compute-pi examples."""

from datetime import UTC, datetime

import pytest

from app.bundles import BundleError, Computed, read_bundle
from tests.bundles.builders import CODALAB_CONFIG, CODALAB_EVALUATE_PY2, codalab_files, make_zip


def read(config: str = CODALAB_CONFIG):  # type: ignore[no-untyped-def]
    return read_bundle(make_zip(codalab_files(config)))


def test_a_bundle_without_version_is_codalab() -> None:
    competition = read()
    assert competition.source_format == "codalab"
    assert [p.title for p in competition.phases] == ["Development", "Final"]


def test_an_open_ended_phase_ends_where_the_next_begins() -> None:
    dev, final = read().phases
    assert dev.start == datetime(2013, 6, 30, tzinfo=UTC)
    assert dev.end == datetime(2013, 9, 30, tzinfo=UTC) == final.start


def test_the_last_phase_ends_at_end_date_or_never() -> None:
    assert read().phases[1].end == datetime(2013, 12, 31, tzinfo=UTC)
    assert read(CODALAB_CONFIG.replace("end_date: 2013-12-31\n", "")).phases[1].end is None


def test_columns_tied_by_a_yaml_anchor_keep_sort_rank_and_numeric_format() -> None:
    competition = read()
    assert [c.key for c in competition.columns] == ["correct", "difference"]  # by rank
    correct, difference = competition.columns
    assert (correct.title, correct.direction, correct.precision) == ("Correct", "minimize", 2)
    assert (difference.direction, difference.precision) == ("maximize", 6)
    assert competition.ranking == "correct"


def test_a_difference_sorted_descending_is_kept_and_named() -> None:
    warnings = read().warnings
    assert any("'difference'" in w and "looks like an error" in w for w in warnings)


def test_zips_inside_the_zip_are_the_program_and_reference_data() -> None:
    dev = read().phases[0]
    assert dev.answer_key[0].path == "answer.txt"
    assert dev.scorer is not None and dev.scorer.kind == "codalab"
    assert dev.scorer.command == "python $program/evaluate.py $input $output"


def test_the_python3_scorer_is_not_flagged() -> None:
    competition = read()
    assert competition.phases[0].scorer is not None and not competition.phases[0].scorer.python2


def test_a_python2_scorer_is_converted_at_import_and_named() -> None:
    competition = read_bundle(make_zip(codalab_files(evaluate=CODALAB_EVALUATE_PY2)))
    scorer = competition.phases[0].scorer
    assert scorer is not None and not scorer.python2
    program = scorer.file("evaluate.py")
    assert program is not None
    text = program.data.decode()
    # print became a function, and the text written to a file opened 'wb' is written as text.
    assert 'print("%s doesn\'t exist" % submit_dir)' in text
    assert "open(output_filename, 'w')" in text
    assert any(
        "the program is Python 2 and was converted to Python 3 at import by fissix" in w
        and "evaluate.py" in w
        for w in competition.warnings
    )


def test_a_python2_scorer_that_does_not_parse_is_flagged_with_file_and_line() -> None:
    unparseable = 'print "scoring"\nif True\n    pass\n'
    competition = read_bundle(make_zip(codalab_files(evaluate=unparseable)))
    assert competition.phases[0].scorer is not None and competition.phases[0].scorer.python2
    assert any(
        "is Python 2 (evaluate.py line 1: a print statement" in w for w in competition.warnings
    )


def test_hide_results_is_a_hidden_board_and_named() -> None:
    competition = read()
    assert [p.board for p in competition.phases] == ["public", "hidden"]
    assert any("hide_results" in w for w in competition.warnings)


def test_counts_follow_force_best_and_force_submission() -> None:
    dev, final = read().phases
    assert (dev.counts, dev.final_selection_limit) == ("chosen", 1)
    assert final.counts == "best"
    forced = read("force_submission_to_leaderboard: True\n" + CODALAB_CONFIG).phases[0]
    assert forced.counts == "last"


def test_codalab_quota_defaults() -> None:
    final = read().phases[1]
    assert (final.daily_submission_limit, final.total_submission_limit) == (999, 3)


def test_html_pages_overview_is_the_description() -> None:
    competition = read()
    assert "Compute pi." in competition.description.content
    assert "Compute pi as precisely" in competition.description.content
    assert [(p.title, p.kind) for p in competition.pages] == [
        ("Evaluation", "evaluation"),
        ("Terms", "terms"),
        ("Data", "data"),
    ]


def test_an_avg_computed_column_is_imported_as_a_mean_and_the_difference_named() -> None:
    config = CODALAB_CONFIG.replace(
        "        correct:\n",
        "        average:\n            leaderboard: *RESULTS\n            label: Average\n            rank: 3\n"
        "            computed:\n                operation: Avg\n                fields: Difference, correct\n"
        "        correct:\n",
    )
    competition = read(config)
    average = next(c for c in competition.columns if c.key == "average")
    assert average.computed == Computed(op="mean", of=("difference", "correct"))
    assert any("averaged the participants' ranks" in w for w in competition.warnings)


def test_a_column_of_no_leaderboard_is_named() -> None:
    with pytest.raises(BundleError) as caught:
        read(
            CODALAB_CONFIG.replace(
                "leaderboard: *RESULTS\n            label: Correct",
                "leaderboard: Nope\n            label: Correct",
            )
        )
    assert caught.value.field == "leaderboard.columns.correct.leaderboard"


def test_a_dataset_kept_on_a_codalab_server_is_named() -> None:
    config = CODALAB_CONFIG.replace(
        "reference_data: reference.zip\n        color",
        "reference_data: 4f0c2b0e-dataset-key\n        color",
    )
    # CodaLab imports it on the server that keeps the dataset (the coopetition and video
    # forecasting hackathons' bundles): here the phase comes without it, named with the fix.
    competition = read(config)
    assert competition.phases[0].answer_key == ()
    (warning,) = [w for w in competition.warnings if "CodaLab server" in w]
    assert "'4f0c2b0e-dataset-key'" in warning and "upload its answer key" in warning


def test_a_scoring_program_kept_on_a_codalab_server_leaves_the_phase_without_one() -> None:
    config = CODALAB_CONFIG.replace("scoring_program: program.zip", "scoring_program: 0a1b-key")
    competition = read(config)
    assert [p.scorer for p in competition.phases] == [None, None]
    assert any(
        "'0a1b-key' is a dataset kept on a CodaLab server" in w for w in competition.warnings
    )


def test_phases_starting_together_run_side_by_side() -> None:
    # Codabench's competition_18.zip: CodaLab 1.8 children phases with one start date.
    config = CODALAB_CONFIG.replace("start_date: 2013-09-30", "start_date: 2013-06-30")
    competition = read(config)
    dev, final = competition.phases
    assert dev.start == final.start and dev.end == final.end  # both until end_date
    assert any("open side by side" in w for w in competition.warnings)


def test_parallel_phases_of_codalab_18_drop_the_parent() -> None:
    config = CODALAB_CONFIG.replace(
        'label: "Development"', 'label: "Development"\n        is_parallel_parent: True'
    )
    competition = read(config)
    assert [p.title for p in competition.phases] == ["Final"]
    assert any("1.8" in w for w in competition.warnings)


def test_code_submission_phases_are_named() -> None:
    config = CODALAB_CONFIG.replace(
        "max_submissions: 3\n", "max_submissions: 3\n        is_scoring_only: False\n"
    )
    assert any("code submissions" in w for w in read(config).warnings)


def test_phase_numbers_given_as_strings_sort_as_numbers() -> None:
    config = CODALAB_CONFIG.replace(
        "    1:\n        phasenumber: 1", "    '9':\n        phasenumber: '9'"
    ).replace("    2:\n        phasenumber: 2", "    '10':\n        phasenumber: '10'")
    competition = read(config)
    assert [p.title for p in competition.phases] == ["Development", "Final"]


def test_a_stale_end_date_before_the_last_phase_leaves_it_open_and_is_named() -> None:
    competition = read(CODALAB_CONFIG.replace("end_date: 2013-12-31", "end_date: 2013-02-14"))
    assert competition.phases[1].end is None
    assert any(
        "end_date (2013-02-14) is before the last phase starts" in w for w in competition.warnings
    )


def test_phases_out_of_order_are_refused_naming_the_phase() -> None:
    with pytest.raises(BundleError) as caught:
        read(CODALAB_CONFIG.replace("start_date: 2013-09-30", "start_date: 2013-01-30"))
    assert caught.value.field == "phases.2.start_date"


def test_a_column_without_leaderboard_belongs_to_the_only_one() -> None:
    config = CODALAB_CONFIG.replace(
        "            leaderboard: *RESULTS\n            label: Correct\n",
        "            label: Correct\n",
    )
    assert config.count("leaderboard: *RESULTS") == 1
    competition = read(config)
    assert [c.key for c in competition.columns] == ["correct", "difference"]


def test_a_phase_label_that_yaml_reads_as_a_date_is_text() -> None:
    competition = read(CODALAB_CONFIG.replace('label: "Final"', "label: 2013-09-30"))
    assert competition.phases[1].title == "2013-09-30"
