"""The average rank, computed over a board's rows: a missing value ranks last."""

from app.leaderboard.ranks import with_board_columns
from app.scoring.columns import resolve_columns
from app.scoring.tasks import average_rank_column, flatten

TASKS = [
    {"key": "a", "columns": [{"key": "acc", "scorer": "program", "direction": "maximize"}]},
    {"key": "b", "columns": [{"key": "loss", "scorer": "program", "direction": "minimize"}]},
]
COLUMNS = resolve_columns(flatten([average_rank_column(TASKS)], TASKS))


def row(acc: float | None, loss: float | None) -> dict[str, dict[str, float | None]]:
    return {"a.acc": {"public": acc}, "b.loss": {"public": loss}}


def test_each_rows_rank_per_task_column_is_averaged_each_column_its_own_way() -> None:
    rows = {1: row(0.9, 0.5), 2: row(0.5, 0.1), 3: row(0.7, 0.3)}
    ranked = with_board_columns(COLUMNS, rows, "public")
    # acc (higher better): 1, 3, 2; loss (lower better): 3, 1, 2.
    assert {r: v["average_rank"]["public"] for r, v in ranked.items()} == {1: 2.0, 2: 2.0, 3: 2.0}
    rows[3] = row(0.95, 0.05)
    ranked = with_board_columns(COLUMNS, rows, "public")
    assert ranked[3]["average_rank"]["public"] == 1.0


def test_equal_values_share_the_better_rank() -> None:
    rows = {1: row(0.9, 0.1), 2: row(0.9, 0.1), 3: row(0.1, 0.9)}
    ranked = with_board_columns(COLUMNS, rows, "public")
    assert [ranked[r]["average_rank"]["public"] for r in (1, 2, 3)] == [1.0, 1.0, 3.0]


def test_a_task_not_scored_ranks_last_behind_every_row_that_scored_it() -> None:
    rows = {1: row(0.1, None), 2: row(0.2, 0.9), 3: row(0.3, 0.8)}
    ranked = with_board_columns(COLUMNS, rows, "public")
    # b: rows 3 (1st), 2 (2nd), 1 missing → 3rd, last; a: 3, 2, 1.
    assert ranked[1]["average_rank"]["public"] == 3.0
    assert ranked[3]["average_rank"]["public"] == 1.0
    assert rows[1]["b.loss"]["public"] is None  # the input is left as it was
