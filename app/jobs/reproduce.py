"""Running the hosts' reproductions of the winners (app.coderun.reproduce): each queued row is
claimed under a lease (app.jobs.claims), its submission's code runs again in the jail on the
competition's data files, exactly as its first run did (app.jobs.code_run), the
``submission.csv`` it writes is scored against the key its recorded score was computed on, and
the two compared: the output file's SHA-256, every column's values, the inputs' digest and the
runtime fingerprint. The result is written on the row and appended to the record (``reproduced``)
in one transaction; the record says equal or not and the hashes, never a sealed value.

It runs where code runs already: a :class:`Reproducer` loop in the server's processes beside the
embedded scoring backend, or in each ``podium worker`` of the ``code`` queue under Celery.
"""

import logging
import math
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.coderun.runner import file_sha256
from app.coderun.runtime import runtime_fingerprint
from app.config import Settings
from app.db import unit_of_work
from app.jobs.claims import claim_due
from app.jobs.code_run import run_submission_code
from app.jobs.lease import now
from app.jobs.score import Outcome, ScoringPlan, _code_plan, _evaluate
from app.jobs.woken import WokenLoop
from app.ledger import facts
from app.models import Reproduction, Score, Submission
from app.models.reproduction import DIFFERS, DONE, EQUAL, FAILED
from app.storage import local_file

log = logging.getLogger(__name__)

# Held while a run goes on: longer than any phase's wall limit (app.coderun.limits caps it).
LEASE = timedelta(hours=3)
MAX_ATTEMPTS = 3
SPLITS = ("score", "public", "private")


def run_due(factory: sessionmaker[Session], settings: Settings, *, batch: int = 1) -> int:
    """Run the reproductions due (a batch at a time); how many were taken."""
    taken = claim_due(factory, Reproduction, at=now(), lease=LEASE, batch=batch)
    for row_id in taken:
        reproduce(factory, settings, row_id)
    return len(taken)


def reproduce(factory: sessionmaker[Session], settings: Settings, row_id: int) -> None:
    with factory() as session:
        found = _plan(session, row_id)
    if found is None:
        return
    plan, recorded = found
    try:
        reproduced = _run(plan, settings, recorded["submission"])
    except Exception as exc:  # noqa: BLE001 - a store away: the lease lapses and it is taken again
        log.warning("reproduction %s could not run: %r", row_id, exc)
        with unit_of_work(factory) as session:
            row = session.get(Reproduction, row_id)
            if row is not None and row.attempts >= MAX_ATTEMPTS:
                _finish(session, row, FAILED, {"error": f"could not be run: {exc}"})
        return
    recorded["output_sha256"] = _recorded_output_sha256(recorded, settings)
    outcome, details = compare(recorded, reproduced)
    with unit_of_work(factory) as session:
        row = session.get(Reproduction, row_id)
        if row is not None and row.status != DONE:
            _finish(session, row, outcome, details)


def _plan(session: Session, row_id: int) -> tuple[ScoringPlan, dict[str, Any]] | None:
    row = session.get(Reproduction, row_id)
    if row is None or row.status == DONE:
        return None
    submission = session.get(Submission, row.submission_id)
    key = submission.phase.board_key if submission is not None else None
    score = (
        session.scalar(
            select(Score).where(Score.submission_id == submission.id, Score.answer_key_id == key.id)
        )
        if submission is not None and key is not None
        else None
    )
    if submission is None or key is None or score is None or not submission.phase.takes_code:
        _finish(session, row, FAILED, {"error": "the submission has no score to reproduce"})
        session.commit()
        return None
    code = _code_plan(session, submission, submission.competition)
    plan = ScoringPlan.read(submission, submission.competition, key, code=code)
    # The code itself, not the file its first run wrote (what a rescore reads).
    plan = replace(plan, submission_path=submission.path)
    recorded = {
        "submission": submission.id,
        "team": submission.team_id,
        "key": key.id,
        "code_sha256": submission.code_sha256,
        "inputs_sha256": submission.inputs_sha256,
        "runtime_fingerprint": submission.runtime_fingerprint,
        "output_path": submission.output_path,
        "columns": _columns(score.columns, score.score, score.public_score, score.private_score),
    }
    return plan, recorded


def _columns(
    columns: dict[str, Any] | None, score: Any, public: Any, private: Any
) -> dict[str, dict[str, Any]]:
    if columns:
        return {k: dict(v or {}) for k, v in columns.items()}
    return {"score": {"score": score, "public": public, "private": private}}


def _run(plan: ScoringPlan, settings: Settings, submission_id: int) -> dict[str, Any]:
    """The code run again and its output scored: what came of it."""
    assert plan.code is not None
    fetched = plan.fetched(settings)
    with run_submission_code(
        plan.code, Path(fetched.submission_path), settings, submission_id=submission_id
    ) as run:
        out: dict[str, Any] = {
            "code_sha256": run.record.code_sha256,
            "inputs_sha256": run.record.inputs_sha256,
            "runtime_fingerprint": run.record.runtime_fingerprint or runtime_fingerprint(),
        }
        if run.output is None:
            return {**out, "error": run.error or run.host_error or "the run failed"}
        out["output_sha256"] = file_sha256(run.output)
        scored: Outcome = _evaluate(
            replace(fetched, code=None, submission_path=str(run.output)),
            settings,
            submission_id=submission_id,
        )
    if scored.result is None:
        return {**out, "error": scored.error or scored.host_error or "its output did not score"}
    result = scored.result
    out["columns"] = _columns(result.columns, result.score, result.public, result.private)
    return out


def _recorded_output_sha256(recorded: dict[str, Any], settings: Settings) -> str | None:
    path = recorded.get("output_path")
    if not path:
        return None
    try:
        return file_sha256(local_file(path, settings=settings))
    except OSError:
        return None


def compare(recorded: dict[str, Any], reproduced: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``equal`` when the output's SHA-256 (where the first run's file was kept) and every
    recorded value are the same again; ``failed`` when the run failed; else ``differs``."""
    details: dict[str, Any] = {
        "recorded": {k: v for k, v in recorded.items() if k != "output_path"},
        "reproduced": reproduced,
        "same_code": recorded.get("code_sha256") == reproduced.get("code_sha256"),
        "same_inputs": recorded.get("inputs_sha256") == reproduced.get("inputs_sha256"),
        "same_runtime": recorded.get("runtime_fingerprint")
        == reproduced.get("runtime_fingerprint"),
    }
    if "error" in reproduced:
        return FAILED, details
    differences = []
    before = recorded.get("output_sha256")
    if before is not None and before != reproduced.get("output_sha256"):
        differences.append("the output file differs")
    for column, cells in recorded["columns"].items():
        again = reproduced.get("columns", {}).get(column, {})
        for split in SPLITS:
            if not _same(cells.get(split), again.get(split)):
                differences.append(
                    f"{column} {split}: {cells.get(split)!r} recorded, {again.get(split)!r} now"
                )
    details["differences"] = differences
    return (DIFFERS if differences else EQUAL), details


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _finish(session: Session, row: Reproduction, outcome: str, details: dict[str, Any]) -> None:
    row.status, row.outcome, row.details = DONE, outcome, details
    row.finished_at, row.lease_expires_at = now(), None
    reproduced = details.get("reproduced") or {}
    facts.fact(
        session,
        competition_id=row.competition_id,
        kind=facts.REPRODUCED,
        submission=row.submission_id,
        team=row.team_id,
        request=row.request,
        outcome=outcome,
        output_sha256=reproduced.get("output_sha256"),
        code_sha256=reproduced.get("code_sha256"),
        inputs_sha256=reproduced.get("inputs_sha256"),
        runtime_fingerprint=reproduced.get("runtime_fingerprint"),
        same_runtime=details.get("same_runtime"),
    )


class Reproducer(WokenLoop):
    """The server's runner of reproductions: a pass every ``interval`` seconds; several
    processes may run one (each row is claimed under a lease)."""

    def __init__(
        self, factory: sessionmaker[Session], settings: Settings, *, interval: float = 10.0
    ) -> None:
        super().__init__("podium-reproduce", lambda: run_due(factory, settings), interval=interval)
