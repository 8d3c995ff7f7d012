"""Scoring a submission to a multi-task phase: each task's imported program on the task's own
reference data, in turn, into the phase's one score row.

Each task's columns land under ``"{task}.{column}"`` (app.scoring.tasks), the phase's aggregates
are computed from them, and the row is written once, like any other: nothing downstream knows a
row came from several programs. A task that fails (or has no program) leaves its columns blank
and says why in the row's details; the submission fails only when every task did.
"""

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.config import Settings
from app.jobs.program import ProgramOutcome, TaskPlan, score_with_program
from app.scoring.columns import SPLITS, combine, resolve_columns, tie_key
from app.scoring.core import ScoreResult
from app.scoring.tasks import qualified

log = logging.getLogger(__name__)

NO_PROGRAM = "the task has no scoring program of its own; it scores nothing"


def score_tasks(
    tasks: Sequence[TaskPlan],
    *,
    columns: Sequence[Mapping[str, Any]],
    submission_path: Path,
    key_path: Path,
    settings: Settings,
    submission_id: int,
    maximize: bool,
) -> ProgramOutcome:
    """Score on every task; ``columns`` are the phase's (aggregates and qualified task columns),
    ``maximize`` its competition's direction (what picks a team's standing entry)."""
    resolved = resolve_columns(columns)
    scored: dict[str, dict[str, float | None]] = {
        c.key: dict.fromkeys(SPLITS) for c in resolved if not c.computed
    }
    details: dict[str, Any] = {}
    failures: list[tuple[str, ProgramOutcome]] = []
    has_usage = False
    for task in tasks:
        if task.program is None:
            failures.append((task.key, ProgramOutcome(None, NO_PROGRAM, NO_PROGRAM)))
            details[task.key] = {"error": NO_PROGRAM}
            continue
        outcome = score_with_program(
            task.program,
            submission_path=submission_path,
            key_path=key_path,
            columns=task.columns,
            settings=settings,
            submission_id=submission_id,
        )
        if outcome.result is None:
            failures.append((task.key, outcome))
            details[task.key] = {"error": outcome.error}
            if outcome.host_error:
                log.warning(
                    "submission %s: task %s failed: %s", submission_id, task.key, outcome.host_error
                )
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
    if resolved[0].on_board and maximize:
        # The row holds how many tasks it lacks (fewer is better); the standings keep a team's
        # best row the competition's way, so a maximizing one reads it negated.
        ranking = {s: -v if v is not None else None for s, v in ranking.items()}
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
