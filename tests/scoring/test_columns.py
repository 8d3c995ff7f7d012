"""The column engine: definitions resolved or refused by field, every column scored in one pass
exactly as each metric scores alone, computed columns, and tie keys that sort the board's way."""

import math
from pathlib import Path

import numpy as np
import pytest

from app.metrics import get_metric
from app.scoring.columns import ColumnError, combine, resolve_columns, sortable, tie_key
from app.scoring.core import SplitViews, load_key, score_aligned, score_columns_file
from app.scoring.intake import AnswerKeyTable
from tests.helpers import csv_bytes


def test_a_column_of_each_kind_resolves_with_its_direction():
    columns = resolve_columns(
        [
            {"key": "rmse", "metric": {"name": "rmse"}},
            {"key": "r2", "metric": {"name": "r2"}, "precision": 3, "hidden": True},
            {"key": "worst", "computed": {"op": "max", "of": ["rmse"]}},
        ]
    )
    assert [(c.key, c.direction) for c in columns] == [
        ("rmse", "minimize"),
        ("r2", "maximize"),
        ("worst", "minimize"),
    ]
    assert columns[1].precision == 3 and columns[1].hidden


@pytest.mark.parametrize(
    ("definitions", "field"),
    [
        ([], "columns"),
        ([{"key": "a", "computed": {"op": "mean", "of": ["a"]}}], "columns[0].computed.of"),
        (
            [{"key": "a", "metric": {"name": "rmse", "params": {"nope": 1}}}],
            "columns[0].metric.params",
        ),
        (
            [
                {"key": "a", "metric": {"name": "rmse"}},
                {"key": "b", "computed": {"op": "median", "of": ["a"]}},
            ],
            "columns[1].computed.op",
        ),
    ],
)
def test_bad_definitions_name_their_field(definitions, field):
    with pytest.raises(ColumnError) as caught:
        resolve_columns(definitions)
    assert caught.value.field == field


@pytest.mark.parametrize("op", ["mean", "sum", "min", "max"])
def test_computed_columns_follow_their_inputs_and_a_missing_split_stays_missing(op):
    columns = resolve_columns(
        [
            {"key": "a", "metric": {"name": "rmse"}},
            {"key": "b", "metric": {"name": "mae"}},
            {"key": "c", "computed": {"op": op, "of": ["a", "b"]}},
        ]
    )
    values = combine(
        columns,
        {
            "a": {"score": 1.0, "public": 2.0, "private": None},
            "b": {"score": 3.0, "public": 4.0, "private": 5.0},
        },
    )
    expected = {"mean": 2.0, "sum": 4.0, "min": 1.0, "max": 3.0}[op]
    assert values["c"]["score"] == expected
    assert values["c"]["private"] is None


def test_sortable_strings_sort_as_the_numbers_do_best_first():
    rng = np.random.default_rng(1)
    numbers = [*rng.normal(scale=1e3, size=200).tolist(), 0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300]
    for maximize in (False, True):
        by_string = sorted(numbers, key=lambda v: sortable(v, maximize))
        by_value = sorted(numbers, key=lambda v: -v if maximize else v)
        assert by_string == by_value
    assert sortable(None, False) > sortable(1e308, False)
    assert sortable(math.nan, True) == sortable(None, True)


def test_the_tie_key_orders_by_the_next_columns_in_turn():
    columns = resolve_columns(
        [
            {"key": "a", "metric": {"name": "rmse"}},
            {"key": "b", "metric": {"name": "r2"}},
            {"key": "c", "metric": {"name": "mae"}},
        ]
    )
    rows = {
        "x": {"a": {"public": 1.0}, "b": {"public": 0.5}, "c": {"public": 9.0}},
        "y": {"a": {"public": 1.0}, "b": {"public": 0.7}, "c": {"public": 9.0}},
        "z": {"a": {"public": 1.0}, "b": {"public": 0.7}, "c": {"public": 1.0}},
    }
    ordered = sorted(rows, key=lambda r: tie_key(columns, rows[r], "public"))  # type: ignore[arg-type]
    assert ordered == ["z", "y", "x"]  # r2 higher first, then mae lower


def _key_table(directory: Path, rows: int, seed: int) -> tuple[AnswerKeyTable, np.ndarray]:
    rng = np.random.default_rng(seed)
    usage = rng.choice(["Public", "Private", "Ignored"], size=rows)
    truth = rng.normal(size=rows)
    path = directory / "key.csv"
    path.write_bytes(
        csv_bytes(
            ["id", "y", "Usage"],
            *[[i, t, u] for i, (t, u) in enumerate(zip(truth, usage, strict=True))],
        )
    )
    metric = get_metric("rmse")
    key = load_key(path, metric=metric, params=metric.parse_params({}), id_column=None, check=False)
    return key, truth + rng.normal(scale=0.3, size=rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_pass_scores_every_column_as_each_metric_scores_alone(seed, tmp_path):
    key, predictions = _key_table(tmp_path, 500, seed)
    submission = tmp_path / "sub.csv"
    submission.write_bytes(csv_bytes(["id", "y"], *[[i, p] for i, p in enumerate(predictions)]))
    names = ["rmse", "mae", "r2"]
    columns = resolve_columns([{"key": n, "metric": {"name": n}} for n in names])
    result = score_columns_file(submission, columns=columns, key=key)
    for name in names:
        metric = get_metric(name)
        alone = score_aligned(metric, metric.parse_params({}), key, predictions)
        assert result.columns[name] == {  # type: ignore[index]
            "score": pytest.approx(alone.score, rel=1e-12),
            "public": pytest.approx(alone.public, rel=1e-12),
            "private": pytest.approx(alone.private, rel=1e-12),
        }
    assert result.score == result.columns["rmse"]["score"]  # type: ignore[index]
    # The shared split views give the same numbers as fresh ones.
    views = SplitViews(key, predictions)
    metric = get_metric("mae")
    assert score_aligned(
        metric, metric.parse_params({}), key, predictions, views=views
    ).public == pytest.approx(
        result.columns["mae"]["public"]  # type: ignore[index]
    )
