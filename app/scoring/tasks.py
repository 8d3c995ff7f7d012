"""Multi-task phases (Codabench's ``tasks``): a phase holds several tasks, each with its own
reference data, scoring program and columns, and a submission is scored on every task in one
pass.

Downstream of the scorer a task is nothing but columns: each task's columns appear in the
phase's one score row under task-qualified keys (``"{task}.{column}"``), beside the phase's own
aggregate columns (``average_rank`` over tasks, or ``mean`` ... of task columns), so the boards,
CSVs and score rows read them as any other columns. Pure: definitions in, definitions out.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from app.scoring.columns import AVERAGE_RANK

SEPARATOR = "."


def qualified(task: str, column: str) -> str:
    """A task's column as the phase's score row and board name it."""
    return f"{task}{SEPARATOR}{column}"


def task_columns(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One task's columns, qualified by its key and marked with it; a column its program
    writes is still read under its own (unqualified) name."""
    name = str(task["key"])
    out = []
    for raw in task.get("columns") or ():
        column = dict(raw)
        column["key"] = qualified(name, str(raw["key"]))
        column["task"] = name
        if column.get("scorer") == "program":
            column["source_key"] = str(raw.get("source_key") or raw["key"])
        computed = raw.get("computed")
        if computed is not None:
            column["computed"] = {
                **computed,
                "of": [qualified(name, str(k)) for k in computed.get("of") or ()],
            }
        out.append(column)
    return out


def flatten(
    aggregates: Sequence[Mapping[str, Any]] | None, tasks: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """A multi-task phase's columns in board order: its own aggregates first (the first ranks),
    then each task's, task by task. Without aggregates the first task's first column ranks."""
    out = [dict(c) for c in aggregates or ()]
    for task in tasks:
        out.extend(task_columns(task))
    return out


def average_rank_column(tasks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The aggregate an imported multi-task phase ranks by: each task's ranking column's rank
    on the board, averaged."""
    return {
        "key": AVERAGE_RANK,
        "title": "Average rank",
        "computed": {
            "op": AVERAGE_RANK,
            "of": [qualified(str(t["key"]), str(t["columns"][0]["key"])) for t in tasks],
        },
        "precision": 2,
    }
