"""Revising a draft's plan, its leaderboard columns and its phases, as the New competition
page's steps save them: the same schemas and checks as creating one through the API, applied to
a competition that exists already, so each step is saved and the host can leave and come back.

Only a draft is revised this way; once published, phases change through
``PATCH .../phases/{name}`` (audited, one field at a time), and columns no longer change.
"""

from typing import Any

from sqlalchemy import delete, exists, select
from sqlalchemy.orm import Session

from app.audit.service import record, snapshot
from app.competitions.phases import (
    check_migrations,
    configure_phase,
    relabel_late,
    sync_window,
)
from app.competitions.schemas import ColumnConfig, PhaseConfig
from app.errors import Conflict, Unprocessable
from app.evaluation.columns import check_columns, columns_for
from app.ledger.facts import phase_changed
from app.models import Competition, Phase, Submission, User
from app.models.competition import DRAFT
from app.scoring.columns import ColumnError, is_program, reading_metric, shape


def _require_draft(competition: Competition) -> None:
    if competition.status != DRAFT:
        raise Conflict(
            f"'{competition.slug}' is {competition.status}: only a draft's columns and phases "
            f"are revised this way (a phase's dates and rules: PATCH "
            f"/api/v1/competitions/{competition.slug}/phases/NAME)"
        )


def revise_columns(
    session: Session, *, competition: Competition, columns: list[ColumnConfig], actor: User
) -> Competition:
    """Replace a draft's leaderboard columns. With an answer key stored, the new columns must
    read a file as the old ones did: the key was checked against that reading when uploaded."""
    _require_draft(competition)
    definitions = [c.model_dump(exclude_none=True) for c in columns]
    try:
        resolved = check_columns(definitions)
    except ColumnError as exc:
        raise Unprocessable(exc.args[0], extra={"field": exc.field}) from None
    current = columns_for(competition)
    if is_program(resolved) or is_program(current):
        # An imported program scores the files: its columns change titles, order and display,
        # never into catalogue metrics (nor back), which read files the program never checked.
        if is_program(resolved) != is_program(current):
            raise Unprocessable(
                "columns: this competition is scored by "
                + ("its imported program" if is_program(current) else "catalogue metrics")
                + ", and a draft's columns keep to that",
                extra={"field": "columns"},
            )
        competition.custom_metric_direction = resolved[0].direction
    else:
        reading = reading_metric(resolved)
        if competition.answer_keys:
            old = reading_metric(current)
            if shape(reading.metric, reading.params) != shape(old.metric, old.params):  # type: ignore[arg-type]
                raise Conflict(
                    f"columns: the answer keys of '{competition.slug}' were read for "
                    f"{old.metric.name}, and {reading.metric.name} reads files differently; "  # type: ignore[union-attr]
                    "keep a metric that reads the same columns",
                    extra={"field": "columns"},
                )
        competition.metric_name = reading.metric.name  # type: ignore[union-attr]
        competition.metric_params = reading.params.model_dump(mode="json")  # type: ignore[union-attr]
    before = competition.columns
    competition.columns = definitions
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="columns_change",
        target=competition.slug,
        before={"columns": before},
        after={"columns": definitions},
    )
    return competition


def revise_phases(
    session: Session, *, competition: Competition, phases: list[PhaseConfig], actor: User
) -> list[Phase]:
    """Replace a draft's phases, every setting of each as given (what the API takes to create
    one): a phase keeps its keys and baselines when its name stays; a phase that goes must have
    neither (409 naming it)."""
    _require_draft(competition)
    existing = {p.name: p for p in competition.phases}
    wanted = {c.name for c in phases}
    for name, phase in existing.items():
        if name not in wanted:
            _require_empty(session, phase)
    before = [_summary(p) for p in competition.phases]
    previous_end = None
    revised = []
    for i, config in enumerate(phases):
        phase = existing.get(config.name) or Phase(competition_id=competition.id, name=config.name)
        start = config.start or previous_end or phase.start or competition.start
        # Replaced whole, as the page shows it: a phase's own columns or entry fields left out
        # are gone (the competition's columns again, no fields asked).
        configure_phase(phase, config, competition, index=i, start=start)
        session.add(phase)
        revised.append(phase)
        previous_end = config.end
    check_migrations(revised)
    gone = [p.id for name, p in existing.items() if name not in wanted]
    if gone:
        session.execute(delete(Phase).where(Phase.id.in_(gone)))
    session.flush()
    session.expire(competition, ["phases"])
    sync_window(competition)
    relabel_late(session, competition)
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="phases_change",
        target=competition.slug,
        before={"phases": before},
        after={"phases": [_summary(p) for p in competition.phases]},
    )
    for phase in competition.phases:
        phase_changed(session, competition_id=competition.id, phase=phase)
    return list(competition.phases)


def _require_empty(session: Session, phase: Phase) -> None:
    if phase.answer_keys or session.scalar(select(exists().where(Submission.phase_id == phase.id))):
        raise Conflict(
            f"phases: phase '{phase.name}' has an answer key or submissions and cannot be "
            "removed; keep it (rename the others around it)",
            extra={"field": "phases"},
        )


# What the audit log keeps of a revised phase: every setting the page changes.
_AUDITED = [
    "name",
    "start",
    "end",
    "daily_submission_limit",
    "total_submission_limit",
    "final_selection_limit",
    "board",
    "counts",
    "columns",
    "tasks",
    "entry_fields",
    "submission_kind",
    "code_limits",
]


def _summary(phase: Phase) -> dict[str, Any]:
    return snapshot(phase, _AUDITED)
