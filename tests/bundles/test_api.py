"""The model as issue 21's competition body."""

from app.bundles import read_bundle, to_api_body
from tests.bundles.builders import codabench_files, evalai_files, make_zip


def test_the_body_puts_the_ranking_column_first_and_keeps_the_rest_in_order() -> None:
    body = to_api_body(read_bundle(make_zip(codabench_files())))
    assert [c["key"] for c in body["columns"]] == [
        "mean_score",
        "set1_score",
        "set2_score",
        "duration",
    ]
    assert body["columns"][0] == {
        "key": "mean_score",
        "title": "Mean accuracy",
        "computed": {"op": "mean", "of": ["set1_score", "set2_score"]},
        "direction": "maximize",
        "precision": 2,
        "hidden": False,
    }
    assert body["columns"][3] == {
        "key": "duration",
        "title": "Duration",
        "scorer": "program",
        "source_key": "Duration",
        "direction": "maximize",
        "precision": 2,
        "hidden": True,
    }


def test_the_body_phases_carry_dates_quotas_rules_and_fields() -> None:
    body = to_api_body(read_bundle(make_zip(evalai_files())), slug="rng")
    assert body["slug"] == "rng"
    dev, test = body["phases"]
    assert dev == {
        "name": "dev",
        "title": "Dev Phase",
        "start": "2019-01-19T00:00:00Z",
        "end": "2099-04-25T23:59:59Z",
        "daily_submission_limit": 5,
        "total_submission_limit": 50,
        "board": "hidden",
        "counts": "best",
        "entry_fields": [
            {
                "key": "method_name",
                "title": "Method name",
                "type": "text",
                "required": False,
                "on_board": True,
            },
            {
                "key": "textattribute",
                "title": "TextAttribute",
                "type": "text",
                "required": False,
                "on_board": False,
            },
            {
                "key": "singleoptionattribute",
                "title": "SingleOptionAttribute",
                "type": "choice",
                "required": True,
                "on_board": False,
                "options": ["A", "B", "C"],
            },
            {
                "key": "truefalsefield",
                "title": "TrueFalseField",
                "type": "boolean",
                "required": False,
                "on_board": False,
            },
        ],
    }
    assert test["counts"] == "chosen" and test["final_selection_limit"] == 1
    assert [c["key"] for c in test["columns"]] == ["total", "metric1", "metric2", "mean_error"]
