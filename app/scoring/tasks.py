"""Multi-task phases (Codabench's ``tasks``): a phase holds several tasks, each with its own
reference data, scoring program and columns, and a submission is scored on every task in one
pass.

Downstream of the scorer a task is nothing but columns: each task's columns appear in the
phase's one score row under task-qualified keys (``"{task}.{column}"``), beside the phase's own
aggregate columns (``average_rank`` over tasks, or ``mean`` ... of task columns), so the boards,
CSVs and score rows read them as any other columns. A task scored by catalogue metrics reads
its own file of the submission (a zip) and of the key: :func:`task_member`. Pure: no database,
no settings.
"""

import zipfile
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


def runnable_task(task: Mapping[str, Any]) -> bool:
    """Whether a task can score: by catalogue metrics, or by an imported program that runs here
    (one its bundle brought, not Python 2)."""
    scorer = task.get("scorer") or {}
    if scorer:
        return bool(scorer.get("kind")) and not scorer.get("python2")
    return not any(c.get("scorer") == "program" for c in task.get("columns") or ())


class TaskFileError(ValueError):
    """A zip without (or with more than one, or too large) file for a task."""


def task_member(archive: zipfile.ZipFile, task: str, *, max_bytes: int) -> tuple[str, bytes]:
    """The one file of ``task`` in a zip (a submission or a key of a multi-task phase whose
    task is scored by catalogue metrics): ``{task}.csv`` (any extension) at the top, or the
    only file under ``{task}/``; read within ``max_bytes``."""
    found = [
        info
        for info in archive.infolist()
        if not info.is_dir()
        and (
            ("/" not in info.filename and info.filename.split(".", 1)[0] == task)
            or info.filename.startswith(f"{task}/")
        )
        and not info.filename.rsplit("/", 1)[-1].startswith(".")
    ]
    if not found:
        raise TaskFileError(f"no file for task '{task}' (give {task}.csv, or one file in {task}/)")
    if len(found) > 1:
        names = ", ".join(i.filename for i in found[:3])
        raise TaskFileError(f"several files for task '{task}' ({names}); give one")
    (info,) = found
    if info.file_size > max_bytes:
        raise TaskFileError(
            f"the file for task '{task}' unpacks to {info.file_size:,} bytes, past the "
            f"{max_bytes:,}-byte limit"
        )
    with archive.open(info) as member:
        data = member.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise TaskFileError(f"the file for task '{task}' is larger than {max_bytes:,} bytes")
    return info.filename.rsplit("/", 1)[-1], data
