"""Column definitions: program-written columns (imported bundles), and computed columns that
read columns shown after them (the ranking column first, a mean of the others)."""

import pytest

from app.scoring.columns import ColumnError, combine, is_program, resolve_columns


def program(key: str, direction: str = "maximize") -> dict[str, object]:
    return {"key": key, "scorer": "program", "source_key": key.upper(), "direction": direction}


def test_program_columns_resolve_with_their_stated_direction_and_source_key() -> None:
    columns = resolve_columns([program("acc"), program("err", "minimize")])
    assert [(c.key, c.direction, c.source_key, c.program) for c in columns] == [
        ("acc", "maximize", "ACC", True),
        ("err", "minimize", "ERR", True),
    ]
    assert is_program(columns)


def test_a_program_column_must_state_its_direction() -> None:
    with pytest.raises(ColumnError) as caught:
        resolve_columns([{"key": "acc", "scorer": "program"}])
    assert caught.value.field == "columns[0].direction"


def test_program_and_catalogue_columns_do_not_mix() -> None:
    with pytest.raises(ColumnError) as caught:
        resolve_columns([{"key": "auc", "metric": {"name": "roc_auc"}}, program("acc")])
    assert "one or the other" in caught.value.message


def test_a_computed_ranking_column_may_read_the_columns_after_it() -> None:
    columns = resolve_columns(
        [
            {"key": "mean", "computed": {"op": "mean", "of": ["a", "b"]}, "direction": "maximize"},
            program("a"),
            program("b"),
        ]
    )
    assert [c.key for c in columns] == ["mean", "a", "b"]
    values = combine(columns, {"a": {"score": 1.0}, "b": {"score": 3.0}})
    assert values["mean"]["score"] == 2.0


def test_computed_columns_reading_each_other_are_refused() -> None:
    with pytest.raises(ColumnError) as caught:
        resolve_columns(
            [
                program("a"),
                {"key": "x", "computed": {"op": "sum", "of": ["y"]}},
                {"key": "y", "computed": {"op": "sum", "of": ["x"]}},
            ]
        )
    assert "cycle" in caught.value.message


def test_a_stated_direction_must_agree_with_the_metric() -> None:
    with pytest.raises(ColumnError) as caught:
        resolve_columns([{"key": "rmse", "metric": {"name": "rmse"}, "direction": "maximize"}])
    assert caught.value.field == "columns[0].direction"
