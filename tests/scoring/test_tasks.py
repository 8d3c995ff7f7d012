"""Multi-task phases' columns: each task's under "{task}.{column}", an average rank over them."""

import pytest

from app.scoring.columns import ColumnError, combine, resolve_columns
from app.scoring.tasks import average_rank_column, flatten

TASKS = [
    {
        "key": "faces",
        "title": "Faces",
        "columns": [
            {"key": "acc", "scorer": "program", "direction": "maximize"},
            {"key": "err", "scorer": "program", "direction": "minimize", "source_key": "error"},
        ],
    },
    {
        "key": "cars",
        "title": "Cars",
        "columns": [
            {"key": "acc", "scorer": "program", "direction": "maximize"},
            {"key": "both", "computed": {"op": "mean", "of": ["acc"]}},
        ],
    },
]


def test_each_tasks_columns_are_qualified_by_its_key_and_read_under_their_own_name() -> None:
    columns = resolve_columns(flatten([average_rank_column(TASKS)], TASKS))
    assert [c.key for c in columns] == [
        "average_rank",
        "faces.acc",
        "faces.err",
        "cars.acc",
        "cars.both",
    ]
    by_key = {c.key: c for c in columns}
    assert by_key["faces.err"].source_key == "error"
    assert by_key["faces.acc"].source_key == "acc"
    assert (by_key["faces.acc"].task, by_key["average_rank"].task) == ("faces", None)
    assert by_key["cars.both"].of == ("cars.acc",)  # a task's computed column stays in it


def test_an_average_rank_ranks_lower_first_and_takes_inputs_sorted_either_way() -> None:
    ranked = resolve_columns(
        flatten(
            [{"key": "avg", "computed": {"op": "average_rank", "of": ["faces.acc", "faces.err"]}}],
            TASKS,
        )
    )[0]
    assert ranked.on_board and ranked.direction == "minimize"


def test_an_average_rank_of_columns_of_no_task_is_refused() -> None:
    with pytest.raises(ColumnError, match="belongs to no task"):
        resolve_columns(
            [
                {"key": "avg", "computed": {"op": "average_rank", "of": ["a"]}},
                {"key": "a", "scorer": "program", "direction": "maximize"},
            ]
        )


def test_no_column_reads_an_average_rank_which_exists_only_on_a_board() -> None:
    with pytest.raises(ColumnError, match="exists only on a board"):
        resolve_columns(
            flatten(
                [
                    {"key": "m", "computed": {"op": "mean", "of": ["avg"]}},
                    average_rank_column(TASKS) | {"key": "avg"},
                ],
                TASKS,
            )
        )


def test_a_row_holds_no_average_rank_of_its_own_and_blanks_a_missing_tasks_columns() -> None:
    columns = resolve_columns(flatten([average_rank_column(TASKS)], TASKS))
    scored = {
        "faces.acc": {"score": 0.9, "public": 0.9, "private": 0.9},
        "faces.err": {"score": 0.1, "public": 0.1, "private": 0.1},
        "cars.acc": dict.fromkeys(("score", "public", "private")),
    }
    values = combine(columns, scored)
    assert values["average_rank"]["public"] is None  # the board computes it
    assert values["cars.both"]["public"] is None  # the missing task's columns stay blank


def test_each_task_holds_as_many_columns_as_a_phase() -> None:
    many = [{"key": f"c{i}", "scorer": "program", "direction": "maximize"} for i in range(15)]
    tasks = [{"key": "a", "columns": many}, {"key": "b", "columns": many}]
    assert len(resolve_columns(flatten([], tasks))) == 30
