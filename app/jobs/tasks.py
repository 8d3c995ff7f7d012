"""Scoring a submission to a multi-task phase: each task's imported program on the task's own
reference data (or its catalogue metrics on its own file of the submission and of the key),
in turn, into the phase's one score row.

Each task's columns land under ``"{task}.{column}"`` (app.scoring.tasks), the phase's aggregates
are computed from them, and the row is written once, like any other: nothing downstream knows a
row came from several programs. A task that fails (or has no program) leaves its columns blank
and says why in the row's details; the submission fails only when every task did.
"""

import hashlib
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.config import Settings
from app.evaluation.keys import cached_key, intake_limits
from app.jobs.program import ProgramOutcome, TaskPlan, score_with_program
from app.scoring.columns import SPLITS, combine, reading_metric, resolve_columns, tie_key
from app.scoring.core import ScoreResult, ScoringError, score_columns_file
from app.scoring.tasks import TaskFileError, qualified, task_member

NO_PROGRAM = "the task has no scoring program of its own; it scores nothing"
KEY_PROBLEM = "the answer key could not score this task; the host has been notified"


def score_tasks(
    tasks: Sequence[TaskPlan],
    *,
    columns: Sequence[Mapping[str, Any]],
    submission_path: Path,
    key_path: Path,
    settings: Settings,
    submission_id: int,
    maximize: bool,
    id_column: str | None = None,
) -> ProgramOutcome:
    """Score on every task; ``columns`` are the phase's (aggregates and qualified task columns),
    ``maximize`` its competition's direction (what picks a team's standing entry)."""
    resolved = resolve_columns(columns)
    scored: dict[str, dict[str, float | None]] = {
        c.key: dict.fromkeys(SPLITS) for c in resolved if not c.computed
    }
    details: dict[str, Any] = {}
    failures: list[tuple[str, ProgramOutcome]] = []  # each task that scored nothing, and why
    has_usage = False
    for task in tasks:
        if task.program is not None:
            outcome = score_with_program(
                task.program,
                submission_path=submission_path,
                key_path=key_path,
                columns=task.columns,
                settings=settings,
                submission_id=submission_id,
            )
        elif any(c.get("scorer") == "program" for c in task.columns):
            outcome = ProgramOutcome(None, NO_PROGRAM, NO_PROGRAM)
        else:
            outcome = score_catalogue_task(
                task,
                submission_path=submission_path,
                key_path=key_path,
                id_column=id_column,
                settings=settings,
            )
        if outcome.result is None:
            failures.append((task.key, outcome))
            # A score row's details are its hosts' (the metric_details of their view).
            details[task.key] = {"error": outcome.error, "host_error": outcome.host_error}
            continue
        has_usage = has_usage or outcome.result.has_usage
        details[task.key] = outcome.result.details
        for key, cell in (outcome.result.columns or {}).items():
            name = qualified(task.key, key)
            if name in scored:
                scored[name] = dict(cell)
    if len(failures) == len(tasks):
        key, first = failures[0]
        return ProgramOutcome(
            None,
            f"task '{key}': {first.error}",
            f"task '{key}': {first.host_error}" if first.host_error else None,
            first.participants_fault,
        )
    values = combine(resolved, scored)
    ranking = dict(values[resolved[0].key])
    if resolved[0].on_board:
        # An average rank exists only over a board: the row's score is how many of its inputs
        # it lacks (fewer is better), which picks a team's standing entry; the standings keep
        # the best the competition's way, so a maximizing one reads it negated.
        sign = -1.0 if maximize else 1.0
        ranking = {
            s: sign * sum(values[k][s] is None for k in resolved[0].of) + 0.0 for s in SPLITS
        }
    return ProgramOutcome(
        ScoreResult(
            score=ranking["score"],  # type: ignore[arg-type]
            public=ranking["public"],
            private=ranking["private"],
            details={"tasks": details},
            has_usage=has_usage,
            columns=values,
            public_tie=tie_key(resolved, values, "public"),
            private_tie=tie_key(resolved, values, "private"),
        )
    )


def score_catalogue_task(
    task: TaskPlan,
    *,
    submission_path: Path,
    key_path: Path,
    id_column: str | None,
    settings: Settings,
) -> ProgramOutcome:
    """A task scored by catalogue metrics: its file of the submission (a zip) against its file
    of the key, read, aligned and scored once, as a single-task phase's file is."""
    columns = resolve_columns(task.columns)
    reading = reading_metric(columns)
    assert reading.metric is not None and reading.params is not None
    limit = settings.max_decompressed_bytes
    try:
        with zipfile.ZipFile(key_path) as archive:
            key_name, key_data = task_member(archive, task.key, max_bytes=limit)
    except (zipfile.BadZipFile, TaskFileError) as exc:
        return ProgramOutcome(None, KEY_PROBLEM, f"task '{task.key}': the answer key: {exc}")
    try:
        with zipfile.ZipFile(submission_path) as archive:
            name, data = task_member(archive, task.key, max_bytes=limit)
    except zipfile.BadZipFile:
        words = "a multi-task phase takes a zip with one file per task"
        return ProgramOutcome(None, words, None, participants_fault=True)
    except TaskFileError as exc:
        return ProgramOutcome(None, str(exc), None, participants_fault=True)
    with tempfile.TemporaryDirectory(prefix="podium-task-") as tmp:
        key_file = Path(tmp) / "key" / key_name
        key_file.parent.mkdir()
        key_file.write_bytes(key_data)
        submitted = Path(tmp) / name
        submitted.write_bytes(data)
        try:
            table = cached_key(
                path=key_file,
                sha256=hashlib.sha256(key_data).hexdigest(),
                metric=reading.metric,
                params=reading.params,
                id_column=id_column,
                settings=settings,
            )
            result = score_columns_file(
                submitted, columns=columns, key=table, limits=intake_limits(settings)
            )
        except ScoringError as exc:
            if exc.source == "submission":
                return ProgramOutcome(None, exc.message, None, participants_fault=True)
            return ProgramOutcome(None, KEY_PROBLEM, f"task '{task.key}': {exc.message}")
    return ProgramOutcome(result)
