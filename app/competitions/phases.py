"""Phases: made with a competition, changed by hosts, found for an upload or a board.

The competition's own ``start`` and ``deadline`` follow its phases (the first start, the last
end): the deadline is when the competition ends, after which submissions are late.
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import false, update
from sqlalchemy.orm import Session

from app.audit.service import record, snapshot
from app.coderun.limits import CodeLimits, beyond, maxima
from app.competitions.schemas import PhaseConfig, PhasePublic, PhaseUpdate
from app.config import get_settings
from app.errors import Conflict, NotFound, Unprocessable
from app.evaluation.columns import check_columns, columns_for
from app.ledger.facts import phase_changed
from app.models import Competition, Phase, Submission, User
from app.models.phase import KIND_SIMULATION, LEGACY_PHASE
from app.scoring.columns import Column, ColumnError, is_program, reading_metric, shape
from app.scoring.tasks import flatten
from app.simulation.environments import (
    EnvironmentConfig,
    EnvironmentError_,
    stored_config,
    upload_of,
)
from app.simulation.environments import check as check_environment
from app.simulation.settings import SimulationSettings


class PhaseClosed(Conflict):
    code = "phase_closed"


def check_phase_columns(competition: Competition, config: PhaseConfig, index: int) -> None:
    """A phase's own columns must read files as the competition's do and rank the same way:
    the phase's key is read by the competition's metric, its board sorted by its direction."""
    if config.tasks:
        check_task_columns(competition, config, index)
        return
    if config.columns is None:
        return
    where = f"phases[{index}].columns"
    try:
        own = check_columns([c.model_dump(exclude_none=True) for c in config.columns], where)
    except ColumnError as exc:
        raise Unprocessable(exc.args[0], extra={"field": exc.field}) from None
    base = columns_for(competition)
    if own[0].direction != base[0].direction:
        raise Unprocessable(
            f"{where}[0]: the phase's ranking column sorts {own[0].direction}, the competition's "
            f"{base[0].direction}; a phase ranks the same way as its competition",
            extra={"field": f"{where}[0]"},
        )
    if is_program(own) or is_program(base):
        if is_program(own) != is_program(base):
            raise Unprocessable(
                f"{where}: a phase is scored as its competition is, by catalogue metrics or "
                "by an imported program, not the other",
                extra={"field": where},
            )
        return
    mine, theirs = reading_metric(own), reading_metric(base)
    if shape(mine.metric, mine.params) != shape(theirs.metric, theirs.params):  # type: ignore[arg-type]
        raise Unprocessable(
            f"{where}: the phase's columns read a submission differently from the competition's",
            extra={"field": where},
        )


def task_defs(config: PhaseConfig) -> list[dict[str, Any]]:
    """A multi-task phase's tasks as stored (their programs aside)."""
    return [
        {
            "key": t.key,
            "title": t.title or t.key,
            "columns": [c.model_dump(exclude_none=True) for c in t.columns],
        }
        for t in config.tasks or ()
    ]


def check_task_columns(competition: Competition, config: PhaseConfig, index: int) -> None:
    """A multi-task phase's columns: each task's scored by catalogue metrics (reading its own
    file of the submission and its own part of the key) or written by its imported program,
    the aggregates over them, the whole resolved as the board will resolve it."""
    where = f"phases[{index}]"
    aggregates = [c.model_dump(exclude_none=True) for c in config.columns or ()]
    try:
        own = check_columns(flatten(aggregates, task_defs(config)), f"{where}.columns")
    except ColumnError as exc:
        raise Unprocessable(exc.args[0], extra={"field": exc.field}) from None
    base = columns_for(competition)
    if not own[0].on_board and own[0].direction != base[0].direction:
        raise Unprocessable(
            f"{where}.columns[0]: the phase's ranking column sorts {own[0].direction}, the "
            f"competition's {base[0].direction}; a phase ranks the same way as its competition",
            extra={"field": f"{where}.columns[0]"},
        )


def make_phases(
    session: Session,
    competition: Competition,
    configs: list[PhaseConfig] | None,
    *,
    start: datetime,
    deadline: datetime | None,
) -> list[Phase]:
    """The competition's phases: the ones given, or one ``main`` with its legacy window."""
    if configs is None:
        configs = [PhaseConfig(name=LEGACY_PHASE, title="Main", start=start, end=deadline)]
    phases = []
    previous_end: datetime | None = None
    for i, config in enumerate(configs):
        # A phase without a start opens when the one before it ends (or when made).
        phase = Phase(competition_id=competition.id, name=config.name)
        configure_phase(
            phase, config, competition, index=i, start=config.start or previous_end or start
        )
        session.add(phase)
        phases.append(phase)
        previous_end = config.end
    check_migrations(phases)
    session.flush()
    session.refresh(competition, ["phases"])
    sync_window(competition)
    return phases


def configure_phase(
    phase: Phase, config: PhaseConfig, competition: Competition, *, index: int, start: datetime
) -> None:
    """Every setting of ``phase`` from its config (the competition's quotas where it gives
    none), checked as the API checks it: a new phase and a draft's revised one alike."""
    check_phase_columns(competition, config, index)
    check_code_limits(config.code_limits, f"phases[{index}].code_limits")
    if config.end is not None and config.end <= start:
        raise Unprocessable(
            f"phases[{index}].end: phase '{config.name}' must end after it starts "
            f"({start.isoformat()})",
            extra={"field": f"phases[{index}].end"},
        )
    phase.title = config.title or config.name.replace("-", " ").capitalize()
    phase.position = index
    phase.start = start
    phase.end = config.end
    phase.daily_submission_limit = (
        config.daily_submission_limit
        if config.daily_submission_limit is not None
        else competition.daily_submission_limit
    )
    phase.total_submission_limit = (
        config.total_submission_limit
        if config.total_submission_limit is not None
        else competition.total_submission_limit
    )
    phase.final_selection_limit = config.final_selection_limit or competition.final_selection_limit
    phase.board = config.board
    phase.counts = config.counts
    phase.columns = (
        [c.model_dump(exclude_none=True) for c in config.columns] if config.columns else None
    )
    # A task named again keeps its imported program (a draft's revision changes its columns).
    programs = {str(t["key"]): t.get("scorer") for t in phase.tasks or ()}
    phase.tasks = [
        {**task, "scorer": programs.get(task["key"])} for task in task_defs(config)
    ] or None
    phase.entry_fields = [f.model_dump(exclude_none=True) for f in config.entry_fields]
    phase.submission_kind = config.submission_kind
    phase.code_limits = config.code_limits.model_dump() if config.code_limits else None
    phase.environment, phase.simulation = simulation_fields(
        config.submission_kind, config.environment, config.simulation, f"phases[{index}]"
    )
    phase.migrate = config.migrate.model_dump(by_alias=True) if config.migrate else None


def check_migrations(phases: list[Phase]) -> None:
    """A phase migrates from another phase of the same competition."""
    names = [p.name for p in phases]
    for i, phase in enumerate(phases):
        source = (phase.migrate or {}).get("from")
        if source is not None and (source not in names or source == phase.name):
            raise Unprocessable(
                f"phases[{i}].migrate.from: '{source}' is not another phase of the competition "
                f"({', '.join(n for n in names if n != phase.name) or 'none'})",
                extra={"field": f"phases[{i}].migrate.from"},
            )


def sync_window(competition: Competition) -> None:
    """The competition's start and deadline from its phases."""
    phases = list(competition.phases)
    if not phases:
        return
    competition.start = min(p.start for p in phases)
    ends = [p.end for p in phases]
    competition.deadline = None if any(e is None for e in ends) else max(ends)  # type: ignore[type-var]


def get_phase(competition: Competition, name: str) -> Phase:
    for phase in competition.phases:
        if phase.name == name:
            return phase
    names = ", ".join(p.name for p in competition.phases)
    raise NotFound(f"'{competition.slug}' has no phase '{name}'; its phases: {names}")


def only_phase(competition: Competition, route: str) -> Phase:
    """The phase a route without a phase addresses: the competition's only one."""
    phases = list(competition.phases)
    if len(phases) != 1:
        names = ", ".join(p.name for p in phases)
        raise Conflict(
            f"'{competition.slug}' has {len(phases)} phases ({names}): use "
            f"/api/v1/competitions/{competition.slug}/phases/{{name}}/{route}",
            extra={"phases": [p.name for p in phases]},
        )
    return phases[0]


def board_phase(competition: Competition, name: str | None) -> Phase:
    """The phase a board shows: the one named, else the current one."""
    if name is not None:
        return get_phase(competition, name)
    phase = competition.current_phase
    if phase is None:
        raise NotFound(f"'{competition.slug}' has no phases")
    return phase


def upload_phase(
    competition: Competition, name: str | None, now: datetime, *, host: bool = False
) -> tuple[Phase, bool]:
    """The phase an upload files into and whether it is late (after the last phase ended).

    Named: that phase, which must be open (hosts' baselines may go into any phase). Unnamed:
    the one open now; several open is a 422 listing them. Outside every window: 409
    ``phase_closed`` naming the next phase and its start, or saying the competition has ended.
    """
    phases = list(competition.phases)
    if name is not None:
        phase = get_phase(competition, name)
        if host or phase.is_open(now):
            return phase, False
        if phase is phases[-1] and phase.has_ended(now) and _after_all(phases, now):
            return phase, True
        raise _closed(competition, phases, now, phase)
    open_now = [p for p in phases if p.is_open(now)]
    if len(open_now) == 1:
        return open_now[0], False
    if len(open_now) > 1:
        raise Unprocessable(
            "several phases are open ("
            + ", ".join(p.name for p in open_now)
            + "): say which this submission is for, with --phase NAME on the podium command "
            "line, the phase choice on the page, or the form field 'phase' in the API",
            extra={"field": "phase", "open_phases": [p.name for p in open_now]},
        )
    if host:
        return competition.current_phase or phases[0], False
    if _after_all(phases, now):
        # Late submissions exist only after the last phase: scored, shown to the team, unranked.
        return max(phases, key=lambda p: (p.end, p.position)), True  # type: ignore[arg-type,return-value]
    raise _closed(competition, phases, now, None)


def _after_all(phases: list[Phase], now: datetime) -> bool:
    return all(p.has_ended(now) for p in phases)


def _closed(
    competition: Competition, phases: list[Phase], now: datetime, named: Phase | None
) -> PhaseClosed:
    upcoming = sorted((p for p in phases if p.start > now), key=lambda p: p.start)
    open_now = [p.name for p in phases if p.is_open(now)]
    if named is not None:
        when = (
            f"it opens at {named.start.isoformat()}"
            if named.state(now) == "upcoming"
            else f"it ended at {named.end.isoformat()}"
            if named.end is not None
            else "it is closed"
        )
        others = (
            f"; open now: {', '.join(repr(n) for n in open_now)}"
            if open_now
            else f"; the next to open is '{upcoming[0].name}', at {upcoming[0].start.isoformat()}"
            if upcoming
            else ""
        )
        return PhaseClosed(
            f"phase '{named.name}' of '{competition.slug}' is not open: {when}{others}",
            extra={
                "phase": named.name,
                "state": named.state(now),
                "open_phases": open_now,
                "next_phase": upcoming[0].name if upcoming else None,
            },
        )
    if upcoming:
        nxt = upcoming[0]
        return PhaseClosed(
            f"no phase of '{competition.slug}' is open now: the next, '{nxt.name}', "
            f"opens at {nxt.start.isoformat()}",
            extra={"next_phase": nxt.name, "opens_at": nxt.start.isoformat()},
        )
    return PhaseClosed(
        f"the competition '{competition.slug}' has ended", extra={"next_phase": None}
    )


def to_public(phase: Phase, now: datetime | None = None) -> PhasePublic:
    return PhasePublic(
        name=phase.name,
        title=phase.title,
        start=phase.start,
        end=phase.end,
        state=phase.state(now or datetime.now(UTC)),  # type: ignore[arg-type]
        daily_submission_limit=phase.daily_submission_limit,
        total_submission_limit=phase.total_submission_limit,
        final_selection_limit=phase.final_selection_limit,
        board=phase.board,  # type: ignore[arg-type]
        counts=phase.counts,  # type: ignore[arg-type]
        columns=[dict(c) for c in phase.columns] if phase.columns else None,
        tasks=[
            {"key": t["key"], "title": t.get("title") or t["key"], "columns": t["columns"]}
            for t in phase.tasks
        ]
        if phase.tasks
        else None,
        entry_fields=[dict(f) for f in phase.entry_fields or []],
        has_answer_key=phase.board_key is not None,
        submission_kind=phase.submission_kind,  # type: ignore[arg-type]
        code_limits=code_limits(phase) if phase.takes_code else None,
        migrate=dict(phase.migrate) if phase.migrate else None,
        migrated_at=phase.migrated_at,
        environment=stored_config(phase.environment) if phase.environment else None,
        simulation=simulation_settings(phase) if phase.takes_agents else None,
    )


def simulation_settings(phase: Phase) -> SimulationSettings:
    return SimulationSettings.model_validate(phase.simulation or {})


def simulation_fields(
    kind: str,
    environment: EnvironmentConfig | None,
    settings: SimulationSettings | None,
    field: str,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """A simulation phase's environment (checked by making it, its defaults filled in) and
    settings as stored; a 422 naming the field where the environment cannot be made, is missing
    or is given to another kind of phase."""
    if kind != KIND_SIMULATION:
        if environment is not None or settings is not None:
            raise Unprocessable(
                f"{field}: 'environment' and 'simulation' belong to a simulation phase "
                "(submission_kind: simulation)",
                extra={"field": f"{field}.environment"},
            )
        return None, None
    if environment is None:
        raise Unprocessable(
            f"{field}.environment: a simulation phase needs an environment, e.g. "
            '{"name": "connectx", "configuration": {}}',
            extra={"field": f"{field}.environment"},
        )
    try:
        configuration = check_environment(environment)
    except EnvironmentError_ as exc:
        raise Unprocessable(str(exc), extra={"field": f"{field}.environment"}) from None
    return (
        {"name": environment.name, "configuration": configuration},
        (settings or SimulationSettings()).model_dump(),
    )


def code_limits(phase: Phase) -> CodeLimits:
    """The phase's limits for a run, the defaults where the host set none."""
    return CodeLimits.model_validate(phase.code_limits or {})


def check_code_limits(limits: CodeLimits | None, field: str) -> None:
    """A host's limits past the server's maxima are a 422 naming each, never silently lowered."""
    if limits is None:
        return
    over = beyond(limits, maxima(get_settings()))
    if over:
        raise Unprocessable("; ".join(over), extra={"field": field})


_NOT_NULL = {
    "title",
    "start",
    "daily_submission_limit",
    "final_selection_limit",
    "board",
    "counts",
    "submission_kind",
}


def update_phase(
    session: Session, *, competition: Competition, phase: Phase, data: PhaseUpdate, actor: User
) -> Phase:
    changes = data.model_dump(exclude_unset=True)
    cleared = sorted(n for n in _NOT_NULL if n in changes and changes[n] is None)
    if cleared:
        raise Unprocessable(f"these settings cannot be cleared: {', '.join(cleared)}")
    start, end = changes.get("start", phase.start), changes.get("end", phase.end)
    if end is not None and end <= start:
        raise Unprocessable(
            f"phase '{phase.name}': end must come after start", extra={"field": "end"}
        )
    if end is not None and competition.benchmark:
        raise Unprocessable(
            f"phase '{phase.name}': '{competition.slug}' is a benchmark, whose phases never "
            "end: leave the end empty (or turn benchmark mode off first)",
            extra={"field": "end"},
        )
    merge = competition.team_merge_deadline
    if merge is not None and merge < start and phase.position == 0:
        raise Unprocessable("team_merge_deadline must not come before the first phase's start")
    if data.code_limits is not None:
        check_code_limits(data.code_limits, "code_limits")
        changes["code_limits"] = data.code_limits.model_dump()
    hosted = bool(phase.environment and upload_of(phase.environment))
    kind = changes.get("submission_kind", phase.submission_kind)
    if hosted and kind == KIND_SIMULATION and "environment" not in changes:
        # The host's own environment stays (replaced only by another upload, or a named one).
        if "simulation" in changes:
            changes["simulation"] = (data.simulation or simulation_settings(phase)).model_dump()
    elif {"environment", "simulation", "submission_kind"} & set(changes):
        given = data.environment or (
            stored_config(phase.environment) if phase.environment else None
        )
        if kind != KIND_SIMULATION and "environment" not in changes:
            given = None
        settings = data.simulation or (
            SimulationSettings.model_validate(phase.simulation)
            if phase.simulation and kind == KIND_SIMULATION
            else None
        )
        changes["environment"], changes["simulation"] = simulation_fields(
            kind, given, settings, "phase"
        )
    if "migrate" in changes:
        changes["migrate"] = data.migrate.model_dump(by_alias=True) if data.migrate else None
        source = (changes["migrate"] or {}).get("from")
        if source is not None:
            get_phase(competition, source)  # 404 naming the phases
            if source == phase.name:
                raise Unprocessable("migrate.from: a phase cannot migrate from itself")
    before = snapshot(phase, list(changes))
    for name, value in changes.items():
        setattr(phase, name, value)
    sync_window(competition)
    if "end" in changes or "start" in changes:
        relabel_late(session, competition)
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="phase_change",
        target=f"{competition.slug}/{phase.name}",
        before=before,
        after=snapshot(phase, list(changes)),
    )
    if changes.keys() & {"start", "end", "board", "counts", "final_selection_limit", "columns"}:
        phase_changed(session, competition_id=competition.id, phase=phase)
    return phase


def relabel_late(session: Session, competition: Competition) -> None:
    """A moved end of the last phase moves what counts as late: the boards and selections
    follow it."""
    deadline = competition.deadline
    late = Submission.created_at >= deadline if deadline is not None else false()
    session.execute(
        update(Submission).where(Submission.competition_id == competition.id).values(late=late)
    )


def ranking_column(competition: Competition, phase: Phase | None) -> Column:
    return columns_for(competition, phase)[0]
