"""Creating competitions, storing versioned answer keys, building sample submissions."""

from contextlib import nullcontext
from datetime import UTC, datetime
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import Select, func, select, update
from sqlalchemy.orm import Session, selectinload

from app.audit.service import record, snapshot
from app.auth.hosts import make_owner
from app.competitions.benchmark import benchmark_problems
from app.competitions.phases import make_phases, relabel_late
from app.competitions.phases import to_public as phase_public
from app.competitions.schemas import (
    CompetitionCreate,
    CompetitionPublic,
    CompetitionUpdate,
    MetricConfig,
    check_timeline,
)
from app.competitions.task_keys import upload_task_key
from app.competitions.visibility import load_competition, visible_competitions
from app.config import Settings
from app.custom_metrics.sandbox import (
    CustomMetricFailure,
    InvalidMetricSource,
    validate_metric_source,
)
from app.db import no_transaction
from app.errors import Conflict, NotFound, Unprocessable
from app.evaluation.columns import check_columns, columns_for, public_column
from app.evaluation.custom import check_key_with_custom_metric, custom_metrics_refused
from app.evaluation.keys import cached_key, key_table
from app.evaluation.metric import (
    CUSTOM,
    PROGRAM,
    custom_metric,
    is_custom,
    label_set,
    metric_for,
    program_metric,
)
from app.ledger.facts import UNSELECTED, fact, key_published, phase_changed
from app.metrics import Metric, MetricParamsError, UnknownMetric, get_metric
from app.models import AnswerKey, Competition, Phase, Submission, Team, User
from app.pagination import Page, Paged, paginate
from app.scoring.columns import ColumnError, is_program, reading_metric
from app.scoring.core import ScoringError
from app.scoring.intake import PRIVATE, PUBLIC, AnswerKeyTable
from app.scoring.intake_errors import first_few, plural
from app.scoring.intake_labels import distinct_labels
from app.storage import StoredFile, local_file, remove_stored, store_stream
from app.teams.notices import notify


def create_competition(session: Session, *, data: CompetitionCreate, owner: User) -> Competition:
    metric, params, columns = _metric_and_columns(data)
    if session.scalar(select(Competition.id).where(Competition.slug == data.slug)) is not None:
        raise Conflict(f"a competition with slug '{data.slug}' already exists")
    labels = _checked_labels(metric, data.labels)
    # Whole seconds: a page pre-fills it, and "2026-12-04T22:08:01.123456" reads as a glitch.
    start = data.start or datetime.now(UTC).replace(microsecond=0)
    competition = Competition(
        slug=data.slug,
        title=data.title,
        description=data.description,
        status=data.status,
        metric_name=metric.name,
        metric_params=params.model_dump(mode="json"),
        columns=columns,
        id_column=data.id_column,
        start=start,
        team_merge_deadline=data.team_merge_deadline,
        deadline=data.deadline,
        daily_submission_limit=data.daily_submission_limit,
        total_submission_limit=data.total_submission_limit,
        final_selection_limit=data.final_selection_limit,
        max_team_size=data.max_team_size,
        score_decimals=data.score_decimals,
        labels=labels,
        scoring_time_limit_seconds=data.scoring_time_limit_seconds,
        # A program-scored board's direction is its ranking column's (app.evaluation.metric).
        custom_metric_direction=metric.direction if metric.name == PROGRAM else None,
        public_board_mode=data.public_board_mode,
        ladder_step=data.ladder_step,
        score_intervals=data.score_intervals,
        registration=data.registration,
        rules=data.rules,
        rules_version=1 if data.rules.strip() else 0,
        allow=data.allow,
        deny=data.deny,
        benchmark=data.benchmark,
        board_every_submission=data.board_every_submission,
        created_by_id=owner.id,
    )
    session.add(competition)
    session.flush()
    make_phases(session, competition, data.phases, start=start, deadline=data.deadline)
    try:
        check_timeline(competition.start, competition.team_merge_deadline, competition.deadline)
    except ValueError as exc:
        raise Unprocessable(str(exc)) from None
    make_owner(session, competition=competition, user=owner)
    return competition


def _metric_and_columns(
    data: CompetitionCreate,
) -> tuple[Metric, Any, list[dict[str, Any]] | None]:
    """The metric that reads files (the ranking column's), its params, and the column list to
    store (None for a body with one ``metric``: one column named after it)."""
    if data.columns is None:
        assert data.metric is not None  # the schema asks for one or the other
        try:
            metric = custom_metric() if data.metric.name == CUSTOM else get_metric(data.metric.name)
            return metric, metric.parse_params(data.metric.params), None
        except UnknownMetric as exc:
            raise Unprocessable(f"{exc}; or '{CUSTOM}' to upload your own metric file") from None
        except MetricParamsError as exc:
            raise Unprocessable(str(exc)) from None
    definitions = [c.model_dump(exclude_none=True) for c in data.columns]
    try:
        columns = check_columns(definitions)
    except ColumnError as exc:
        raise Unprocessable(exc.args[0], extra={"field": exc.field}) from None
    if is_program(columns):
        metric = program_metric(columns[0].direction)
        return metric, metric.parse_params({}), definitions
    reading = reading_metric(columns)
    return reading.metric, reading.params, definitions  # type: ignore[return-value]


def _checked_labels(metric: Metric, labels: list[str] | None) -> list[str] | None:
    if labels is None:
        return None
    if metric.cell != "label":
        raise Unprocessable(
            f"labels apply to single-label classification metrics only, not '{metric.name}'"
        )
    return list(dict.fromkeys(labels))


def _check_key_within(key_labels: list[str] | None, labels: list[str] | None) -> None:
    """The host's label set must hold every label of the live key, or no one could be right."""
    if not key_labels or not labels:
        return
    missing = sorted(set(key_labels) - set(labels))
    if missing:
        raise Unprocessable(
            f"the answer key holds {plural(len(missing), 'label')} outside the label set: "
            f"{first_few(missing)}; add them to labels"
        )


def list_competitions(
    session: Session, viewer: User | None = None, *, status: str | None = None
) -> list[Competition]:
    """The competitions ``viewer`` may see (None: an anonymous visitor), newest first."""
    return list(session.scalars(_newest_first(viewer, status)))


def competitions_page(
    session: Session, *, page: Page, viewer: User, status: str | None = None
) -> Paged[Competition]:
    # Each competition's view reads its phases and key versions: loaded for the whole page at
    # once.
    return paginate(
        session,
        _newest_first(viewer, status),
        page,
        options=[
            selectinload(Competition.answer_keys),
            selectinload(Competition.phases).selectinload(Phase.answer_keys),
        ],
    )


def _newest_first(viewer: User | None, status: str | None) -> Select[tuple[Competition]]:
    query = visible_competitions(viewer)
    if status is not None:
        query = query.where(Competition.status == status)
    return query.order_by(Competition.created_at.desc(), Competition.id.desc())


def create_checked(
    session: Session, *, data: CompetitionCreate, owner: User, dry_run: bool = False
) -> CompetitionPublic:
    """:func:`create_competition` answered as the API shows it; ``dry_run`` runs every check
    inside a savepoint that is rolled back, so nothing is kept."""
    if not dry_run:
        return to_public(create_competition(session, data=data, owner=owner))
    savepoint = session.begin_nested()
    try:
        shown = to_public(create_competition(session, data=data, owner=owner))
    finally:
        savepoint.rollback()
    return shown


def to_public(competition: Competition) -> CompetitionPublic:
    metric = metric_for(competition)
    key = competition.board_key
    now = datetime.now(UTC)
    return CompetitionPublic(
        slug=competition.slug,
        title=competition.title,
        description=competition.description,
        status=competition.status,  # type: ignore[arg-type]
        metric=MetricConfig(name=competition.metric_name, params=competition.metric_params),
        direction=metric.direction,
        id_column=key.id_column if key else competition.id_column,
        columns=[key.id_column, *key.target_columns] if key else None,
        leaderboard_columns=[public_column(c) for c in columns_for(competition)],
        phases=[phase_public(p, now) for p in competition.phases],
        start=competition.start,
        team_merge_deadline=competition.team_merge_deadline,
        deadline=competition.deadline,
        daily_submission_limit=competition.daily_submission_limit,
        total_submission_limit=competition.total_submission_limit,
        final_selection_limit=competition.final_selection_limit,
        max_team_size=competition.max_team_size,
        score_decimals=competition.score_decimals,
        public_board_mode=competition.public_board_mode,
        ladder_step=competition.ladder_step,
        score_intervals=competition.score_intervals,
        has_answer_key=key is not None,
        has_metric_file=bool(competition.custom_metric_path) if is_custom(competition) else None,
        labels=label_set(competition),
        created_at=competition.created_at,
        registration=competition.registration,  # type: ignore[arg-type]
        rules=competition.rules,
        rules_version=competition.rules_version,
        benchmark=competition.benchmark,
        board_every_submission=competition.board_every_submission,
    )


_NOT_NULL = {
    "title",
    "start",
    "daily_submission_limit",
    "final_selection_limit",
    "max_team_size",
    "score_decimals",
    "public_board_mode",
    "score_intervals",
    "registration",
    "rules",
    "benchmark",
    "board_every_submission",
}


def update_competition(
    session: Session, *, competition: Competition, data: CompetitionUpdate, actor: User
) -> Competition:
    changes = data.model_dump(exclude_unset=True)
    cleared = sorted(name for name in _NOT_NULL if name in changes and changes[name] is None)
    if cleared:
        raise Unprocessable(f"these settings cannot be cleared: {', '.join(cleared)}")
    try:
        check_timeline(
            *(
                changes.get(name, getattr(competition, name))
                for name in ("start", "team_merge_deadline", "deadline")
            )
        )
    except ValueError as exc:
        raise Unprocessable(str(exc)) from None
    _write_through_to_phase(competition, changes)
    _check_benchmark(competition, changes)
    if "labels" in changes:
        changes["labels"] = _checked_labels(metric_for(competition), changes["labels"])
        key = competition.board_key
        _check_key_within(key.labels if key else None, changes["labels"])
    if "rules" in changes and changes["rules"] != competition.rules:
        # Each participant accepts the new version before their next submission.
        changes["rules_version"] = competition.rules_version + 1
    before = snapshot(competition, list(changes))
    for name, value in changes.items():
        setattr(competition, name, value)
    if "deadline" in changes:
        relabel_late(session, competition)
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="settings_change",
        target=competition.slug,
        before=before,
        after=snapshot(competition, list(changes)),
    )
    # What the record's replay of the boards reads (app.ledger.facts.rules) changed too.
    if changes.keys() & {
        "start",
        "deadline",
        "final_selection_limit",
        "metric_name",
        "metric_params",
        "columns",
        "custom_metric_direction",
    }:
        for phase in competition.phases:
            phase_changed(session, competition_id=competition.id, phase=phase)
    if "deadline" in changes:
        _unselect_late(session, competition, actor)
    return competition


def _check_benchmark(competition: Competition, changes: dict[str, Any]) -> None:
    """A benchmark's rules over the settings as they will stand (the phases' ends already
    written through: a one-phase competition's deadline is its phase's end)."""

    def setting(name: str) -> Any:
        return changes.get(name, getattr(competition, name))

    problems = benchmark_problems(
        benchmark=setting("benchmark"),
        every_submission=setting("board_every_submission"),
        public_board_mode=setting("public_board_mode"),
        deadline=setting("deadline"),
        phase_ends=[(p.name, p.end) for p in competition.phases],
    )
    if problems:
        raise Unprocessable("; ".join(problems))


_PHASE_FIELDS = {
    "start": "start",
    "deadline": "end",
    "daily_submission_limit": "daily_submission_limit",
    "total_submission_limit": "total_submission_limit",
    "final_selection_limit": "final_selection_limit",
}


def _write_through_to_phase(competition: Competition, changes: dict[str, Any]) -> None:
    """A competition's window and quotas are its one phase's: a change to them is the phase's
    too. With several phases each has its own, changed through the phase route."""
    touched = [name for name in _PHASE_FIELDS if name in changes]
    if not touched:
        return
    phases = list(competition.phases)
    if len(phases) != 1:
        names = ", ".join(p.name for p in phases)
        raise Conflict(
            f"'{competition.slug}' has {len(phases)} phases ({names}), each with its own "
            f"{', '.join(touched)}: change a phase's on Host → Settings → Phases, with "
            f"`podium competitions phase {competition.slug} NAME`, or with PATCH "
            f"/api/v1/competitions/{competition.slug}/phases/{{name}}",
            extra={"phases": [p.name for p in phases]},
        )
    for name in touched:
        setattr(phases[0], _PHASE_FIELDS[name], changes[name])


def _unselect_late(session: Session, competition: Competition, actor: User) -> None:
    """A submission the moved deadline made late cannot stay selected: it loses its selection,
    its team gets a notice and the audit log an entry."""
    rows = session.execute(
        select(Submission.id, Submission.team_id, Team.name)
        .join(Team, Team.id == Submission.team_id)
        .where(
            Submission.competition_id == competition.id,
            Submission.late.is_(True),
            Submission.selected.is_(True),
        )
        .order_by(Submission.team_id, Submission.id)
    ).all()
    if not rows:
        return
    session.execute(
        update(Submission).where(Submission.id.in_([r.id for r in rows])).values(selected=False)
    )
    deadline = competition.deadline.isoformat() if competition.deadline else "none"
    still_open = ""
    if competition.deadline is not None and not competition.is_past_deadline(datetime.now(UTC)):
        still_open = " You may select on-time submissions until then."
    by_team: dict[tuple[int, str], list[int]] = {}
    for submission_id, team_id, name in rows:
        by_team.setdefault((team_id, name), []).append(submission_id)
    for (team_id, name), ids in by_team.items():
        listed = ", ".join(f"#{i}" for i in ids)
        notify(
            session,
            team_id=team_id,
            kind="selection_late",
            message=f"The deadline moved to {deadline}: submission(s) {listed} now came after it, "
            f"so they are late and no longer selected.{still_open}",
        )
        record(
            session,
            competition=competition,
            actor=actor,
            action="selection_cleared",
            target=name,
            before={"selected": ids},
            after={"selected": [], "reason": f"late after the deadline moved to {deadline}"},
        )
        for submission_id in ids:
            fact(
                session,
                competition_id=competition.id,
                kind=UNSELECTED,
                submission=submission_id,
                team=team_id,
                reason="late",
            )


def _scoring_setup(competition: Competition, phase: Phase | None = None) -> tuple[Any, ...]:
    """What a key or metric file is checked against: if it changed while the file was checked
    (with no transaction open), the check no longer holds."""
    key = phase.board_key if phase is not None else competition.board_key
    return (
        competition.metric_name,
        competition.metric_params,
        competition.id_column,
        competition.labels,
        competition.custom_metric_sha256,
        competition.custom_metric_direction,
        key.id if key is not None else None,
    )


def _changed_meanwhile() -> Conflict:
    return Conflict(
        "the competition's metric, labels or answer key changed while your file was checked; "
        "upload it again"
    )


def upload_answer_key(
    session: Session,
    *,
    competition: Competition,
    phase: Phase,
    source: BinaryIO,
    uploader: User,
    settings: Settings,
    pause: bool = True,
) -> AnswerKey:
    """Validate and store a new key version of a phase; the phase's first version goes live at
    once.

    The file is stored, parsed and checked (by the competition's metric file too) with no
    transaction open and the request's database slot given back, so the API never waits on it.
    ``pause=False`` keeps the transaction: for a competition made in this same unit of work (a
    bundle's import), which nobody else sees and so nothing can change meanwhile.
    """
    if phase.tasks:
        return upload_task_key(
            session,
            competition=competition,
            phase=phase,
            source=source,
            uploader=uploader,
            settings=settings,
        )
    if phase.scorer is not None:
        # Its answer key is the program's reference data as the bundle brought it (a zip of its
        # files), not a table this route could check.
        raise Conflict(
            f"phase '{phase.name}' is scored by the scoring program imported with its bundle; "
            "its reference data comes with the bundle: import the corrected bundle instead"
        )
    metric = metric_for(competition)
    params = metric.parse_params(competition.metric_params)
    setup = _scoring_setup(competition, phase)
    stored = None
    try:
        with no_transaction(session) if pause else nullcontext():
            stored = store_stream(
                source,
                prefix=f"answer-keys/{competition.id}",
                settings=settings,
                max_bytes=settings.max_upload_bytes,
            )
            table, key_labels = _checked_key(
                competition, stored=stored, metric=metric, params=params, settings=settings
            )
        session.refresh(competition)
        session.refresh(phase)
        if _scoring_setup(competition, phase) != setup:
            raise _changed_meanwhile()
    except (Unprocessable, Conflict):
        if stored is not None and not _is_referenced(session, stored.ref):
            remove_stored(stored.ref, settings=settings)
        raise
    latest = session.scalar(
        select(func.max(AnswerKey.version)).where(AnswerKey.phase_id == phase.id)
    )
    now = datetime.now(UTC)
    previous = phase.board_key
    key = AnswerKey(
        competition_id=competition.id,
        phase_id=phase.id,
        version=(latest or 0) + 1,
        path=stored.ref,
        sha256=stored.sha256,
        id_column=table.id_column,
        target_columns=table.target_columns,
        n_rows=table.n_rows,
        n_public=table.count(PUBLIC),
        n_private=table.count(PRIVATE),
        labels=key_labels,
        uploaded_by_id=uploader.id,
        published_at=now if previous is None else None,
    )
    session.add(key)
    session.flush()
    session.refresh(competition, ["answer_keys"])
    session.refresh(phase, ["answer_keys"])
    several = len(competition.phases) > 1
    record(
        session,
        competition=competition,
        actor=uploader,
        action="answer_key_upload",
        target=f"phase {phase.name} version {key.version}" if several else f"version {key.version}",
        before={"board_version": previous.version if previous else None},
        after={
            "version": key.version,
            "sha256": key.sha256,
            "rows": key.n_rows,
            "published": key.published_at is not None,
        },
    )
    if key.published_at is not None:
        key_published(session, competition_id=competition.id, phase=phase, key=key)
    return key


def _checked_key(
    competition: Competition,
    *,
    stored: StoredFile,
    metric: Metric,
    params: Any,
    settings: Settings,
) -> tuple[AnswerKeyTable, list[str] | None]:
    """The parsed key and its labels, or Unprocessable; reads only what is loaded already."""
    try:
        table = cached_key(
            path=stored.path,
            sha256=stored.sha256,
            metric=metric,
            params=params,
            id_column=competition.id_column,
            settings=settings,
        )
        if is_custom(competition) and competition.custom_metric_path:
            check_key_with_custom_metric(
                competition,
                metric_path=local_file(competition.custom_metric_path, settings=settings),
                key_path=stored.path,
                settings=settings,
            )
    except CustomMetricFailure as exc:
        raise Unprocessable(f"answer key rejected by your metric: {exc.host_message}") from None
    except ScoringError as exc:
        raise Unprocessable(f"answer key rejected: {exc.message}") from None
    key_labels = distinct_labels(table.y_true) if metric.cell == "label" else None
    _check_key_within(key_labels, competition.labels)
    return table, key_labels


MAX_METRIC_FILE_BYTES = 1 << 20


def upload_custom_metric(
    session: Session,
    *,
    competition: Competition,
    source: BinaryIO,
    direction: str,
    settings: Settings,
    actor: User,
) -> Competition:
    """Store an organiser's Kaggle-style metric file, after proving it can score the key.

    The metric runs on the key with no transaction open and the request's database slot given
    back (it may take up to the custom-metric timeout).
    """
    if not is_custom(competition):
        raise Conflict(
            f"this competition scores with '{competition.metric_name}'; a metric file needs a "
            f"competition created with metric name '{CUSTOM}'"
        )
    key = competition.board_key
    key_ref = key.path if key is not None else None
    setup = _scoring_setup(competition)
    with no_transaction(session):
        refused = custom_metrics_refused(settings)  # the jail's self-test, once per process
        if refused is not None:
            raise Conflict(refused)
        # A .py name: the sandbox imports the file as a module.
        stored = store_stream(
            source,
            prefix=f"metrics/{competition.id}",
            settings=settings,
            max_bytes=MAX_METRIC_FILE_BYTES,
            suffix=".py",
        )
        try:
            validate_metric_source(stored.path.read_bytes())
            if key_ref is not None:
                check_key_with_custom_metric(
                    competition,
                    metric_path=stored.path,
                    key_path=local_file(key_ref, settings=settings),
                    settings=settings,
                )
        except InvalidMetricSource as exc:
            remove_stored(stored.ref, settings=settings)
            raise Unprocessable(f"metric file rejected: {exc}") from None
        except CustomMetricFailure as exc:
            remove_stored(stored.ref, settings=settings)
            raise Unprocessable(
                f"metric file cannot score the answer key: {exc.host_message}"
            ) from None
    session.refresh(competition)
    if _scoring_setup(competition) != setup:
        if stored.sha256 != competition.custom_metric_sha256:
            remove_stored(stored.ref, settings=settings)
        raise _changed_meanwhile()
    before = {
        "sha256": competition.custom_metric_sha256,
        "direction": competition.custom_metric_direction,
    }
    competition.custom_metric_path = stored.ref
    competition.custom_metric_sha256 = stored.sha256
    competition.custom_metric_direction = direction
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="metric_upload",
        target=competition.slug,
        before=before,
        after={"sha256": stored.sha256, "direction": direction},
    )
    return competition


def _is_referenced(session: Session, ref: str) -> bool:
    # Identical uploads share one stored file; never delete one an earlier version still uses.
    return session.scalar(select(AnswerKey.id).where(AnswerKey.path == ref)) is not None


def sample_submission_csv(
    competition: Competition, settings: Settings, *, key: AnswerKey | None = None
) -> bytes:
    """Every id of the key (``key``, else the current phase's), sorted (never in the key file's
    order, which may follow its Usage), with a filler value taken from public information only;
    fields quoted only when needed."""
    key_row = key or competition.board_key
    if key_row is None:
        raise NotFound("this competition has no answer key yet")
    if key_row.phase is not None and key_row.phase.tasks:
        files = ", ".join(f"{k}.csv" for k in key_row.phase.task_keys)
        raise Conflict(
            f"phase '{key_row.phase.name}' has tasks: a submission is a zip of each task's file "
            f"({files}), each as that task's columns read it; no one sample file is made"
        )
    metric = metric_for(competition)
    table = key_table(competition, key_row, settings)
    ids = table.ids.take(pc.sort_indices(table.ids)).cast(pa.large_string())
    filler = _text(_csv_field(_placeholder(metric, competition, len(table.target_columns))))
    fields = [_csv_fields(ids), *[filler] * len(table.target_columns)]
    rows = pc.binary_join_element_wise(*fields, _text(","))
    rows = pc.binary_join_element_wise(rows, _text(""), _text("\n"))  # a line break after each
    header = ",".join(_csv_field(name) for name in [table.id_column, *table.target_columns])
    return (header + "\n").encode() + _string_data(rows)


def _placeholder(metric: Metric, competition: Competition, n_columns: int) -> str:
    """A value every row may legally hold, chosen from what the competition publishes and never
    from the key's rows or split: a uniform probability, the first of the published labels (a
    label drawn from the public rows would tell which labels the public split holds), an empty
    set."""
    if metric.cell == "number":
        return repr(1.0 / n_columns if n_columns > 1 else 0.5)
    if metric.cell == "label":
        labels = label_set(competition)
        return sorted(labels)[0] if labels else ""
    return ""


def _csv_field(value: str) -> str:
    if any(c in value for c in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _csv_fields(values: pa.Array) -> pa.Array:
    """RFC 4180 quoting, only where a value holds a comma, a quote or a line break."""
    needs = pc.match_substring_regex(values, '[,"\r\n]')
    if not pc.any(needs).as_py():
        return values
    quote = _text('"')
    escaped = pc.replace_substring(values, '"', '""')
    quoted = pc.binary_join_element_wise(quote, escaped, quote, _text(""))
    return pc.if_else(needs, quoted, values)


def _text(value: str) -> pa.Scalar:
    return pa.scalar(value, pa.large_string())


def _string_data(lines: pa.Array) -> bytes:
    """The bytes of a string array's values, end to end (one copy, no Python string per row)."""
    lines = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
    start, stop = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    return lines.buffers()[2].to_pybytes()[start:stop]


def get_competition_by_slug(
    session: Session, slug: str, viewer: User | None = None, *, writing: bool = False
) -> Competition:
    """The competition as ``viewer`` may see it (None: anonymous, who never sees a draft)."""
    return load_competition(session, slug, viewer, writing=writing)
