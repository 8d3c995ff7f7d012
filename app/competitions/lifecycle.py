"""A competition's life after creation: the launch checklist, publishing a draft, archiving,
and deleting one nobody has competed in.

The checklist is a list of items computed by :func:`checklist`, each an independent check: per
phase its answer key and each of its columns scoring the sample, then the dates and the
description.
"""

import logging
import math
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete as sa_delete
from sqlalchemy import exists, select
from sqlalchemy.orm import Session, object_session

from app.audit.service import record
from app.auth.hosts import is_owner
from app.competitions.benchmark import benchmark_problems
from app.competitions.schemas import Checklist, ChecklistItem
from app.competitions.service import sample_submission_csv
from app.competitions.visibility import require_writable
from app.config import Settings
from app.db import after_commit
from app.errors import AppError, Conflict, Forbidden
from app.evaluation.columns import columns_for
from app.evaluation.keys import intake_limits, key_table
from app.evaluation.metric import is_custom, label_set
from app.models import Competition, DataFile, Episode, Phase, Submission, User
from app.models.competition import ARCHIVED, DRAFT, PUBLISHED
from app.models.simulation import EPISODE_DONE, EPISODE_FAILED
from app.scoring.columns import Column
from app.scoring.core import ScoringError, score_columns_file
from app.scoring.tasks import runnable_task
from app.storage import delete_blob, remove_stored

log = logging.getLogger(__name__)


class NotReady(Conflict):
    code = "not_ready"


class HasSubmissions(Conflict):
    code = "has_submissions"


def _item(
    key: str, ok: bool, detail: str, *, phase: str | None = None, column: str | None = None
) -> ChecklistItem:
    return ChecklistItem(key=key, ok=ok, detail=detail, phase=phase, column=column)


def _name(base: str, phase: Phase, several_phases: bool, column: str | None = None) -> str:
    """An item's key: ``answer_key`` for a one-phase, one-column competition (as before phases),
    else ``phases.NAME.answer_key`` and ``...sample_scores.COLUMN``, so every key is unique."""
    key = f"phases.{phase.name}.{base}" if several_phases else base
    return f"{key}.{column}" if column is not None else key


def _answer_key(phase: Phase, several: bool) -> ChecklistItem:
    key = phase.board_key
    name = _name("answer_key", phase, several)
    where = f"phase '{phase.name}': " if several else ""
    if key is None:
        return _item(name, False, f"{where}no answer key yet: upload one", phase=phase.name)
    if phase.scorer is not None or phase.tasks:
        files = f"{key.n_rows:,} file{'s' if key.n_rows != 1 else ''}"
        detail = f"version {key.version}, the scoring program's reference data ({files})"
        return _item(name, True, where + detail, phase=phase.name)
    return _item(name, True, f"{where}version {key.version}, {key.n_rows:,} rows", phase=phase.name)


# What a phase's episodes and validations record when its environment failed (app.jobs.episodes).
_COULD_NOT_PLAY = ("the episode could not be played", "the validation episode could not be played")


def _environment(phase: Phase, several: bool) -> ChecklistItem:
    """A simulation phase's environment: named, and not failing its episodes. A host's own was
    made and reset in the jail at upload; one that misbehaves later (raises or hangs mid-episode,
    answers nonsense) fails its episodes and validations, and this item names the latest."""
    name = _name("environment", phase, several)
    where = f"phase '{phase.name}': " if several else ""
    environment = phase.environment or {}
    if not environment.get("name"):
        detail = "no environment: name one of kaggle-environments' or upload your own"
        return _item(name, False, where + detail, phase=phase.name)
    session = object_session(phase)
    failures = _environment_failures(session, phase) if session is not None else []
    if failures:
        latest = failures[0].strip()
        # Its start says what failed, its end (a traceback's last line) why.
        shown = latest if len(latest) <= 600 else f"{latest[:200]} … {latest[-400:]}"
        detail = f"its last {len(failures)} episode(s) could not be played: {shown}"
        return _item(name, False, where + detail, phase=phase.name)
    own = environment.get("upload") is not None
    detail = (
        f"your environment '{environment['name']}', made and reset in the jail at upload"
        if own
        else f"kaggle-environments' '{environment['name']}'"
    )
    return _item(name, True, where + detail, phase=phase.name)


def _environment_failures(session: Session, phase: Phase, recent: int = 10) -> list[str]:
    """The environment's failures among the phase's most recent episodes and validations (the
    run of them up to the first that went well), newest first."""
    episodes = session.execute(
        select(Episode.id, Episode.status, Episode.error)
        .where(Episode.phase_id == phase.id, Episode.status.in_((EPISODE_DONE, EPISODE_FAILED)))
        .order_by(Episode.id.desc())
        .limit(recent)
    ).all()
    validations = session.execute(
        select(Submission.id, Submission.host_error)
        .where(Submission.phase_id == phase.id, Submission.finished_at.is_not(None))
        .order_by(Submission.id.desc())
        .limit(recent)
    ).all()
    failures = []
    for _, status, error in episodes:
        if status == EPISODE_DONE or not (error or "").startswith(_COULD_NOT_PLAY):
            break
        failures.append(str(error))
    if not episodes:  # no ladder yet: the validations say whether it plays
        for _, host_error in validations:
            if not (host_error or "").startswith(_COULD_NOT_PLAY):
                break
            failures.append(str(host_error))
    return failures


def _sample_scores(
    competition: Competition, phase: Phase, several: bool, settings: Settings
) -> list[ChecklistItem]:
    """The phase's sample submission, built from its own key as participants download it,
    scored on each of the phase's columns by the one scoring function: a column that cannot
    score it would fail every first submission."""
    columns = columns_for(competition, phase)
    one = len(columns) == 1
    where = f"phase '{phase.name}': " if several else ""

    def item(column: Column, ok: bool, detail: str) -> ChecklistItem:
        name = _name("sample_scores", phase, several, None if one else column.key)
        label = "" if one else f"column '{column.key}': "
        return _item(name, ok, where + label + detail, phase=phase.name, column=column.key)

    key = phase.board_key
    if key is None:
        return [
            item(c, False, "needs an answer key to build the sample submission") for c in columns
        ]
    if phase.tasks:
        # Each task in turn (its catalogue metrics, or its imported program run in the jail):
        # the phase takes submissions if one of them can score.
        kinds = [
            f"task '{t['key']}' ("
            + (
                (t.get("scorer") or {}).get("kind") or "no program"
                if any(c.get("scorer") == "program" for c in t["columns"])
                else "catalogue metrics"
            )
            + ")"
            for t in phase.tasks
        ]
        ok = any(runnable_task(t) for t in phase.tasks)
        detail = "scored on each task, in turn: " + ", ".join(kinds)
        return [item(columns[0], ok, detail if ok else "no task can score a submission")]
    if phase.scorer is not None:
        # An imported program reads whatever its platform passed it: no sample CSV to score.
        kind, ok = phase.scorer.get("kind"), not phase.scorer.get("python2")
        if not kind:
            return [item(columns[0], False, "has no scoring program of its own")]
        detail = f"scored by its imported {kind} program, run in the jail for each submission"
        return [
            item(
                columns[0], ok, detail if ok else "its program is Python 2: import a converted one"
            )
        ]
    if is_custom(competition):
        if not competition.custom_metric_path:
            return [item(columns[0], False, "no metric file yet: upload your score() file")]
        # The metric file was run on the key in the jail when it (or the key) was uploaded.
        return [item(columns[0], True, "your metric file scored the answer key at upload")]
    try:
        sample = sample_submission_csv(competition, settings, key=key)
        table = key_table(competition, key, settings)
    except AppError as exc:
        return [item(c, False, f"the sample submission fails: {exc.detail}") for c in columns]
    with tempfile.TemporaryDirectory(prefix="podium-checklist-") as tmp:
        path = Path(tmp) / "sample.csv"
        path.write_bytes(sample)

        def score(chosen: list[Column]) -> dict[str, dict[str, float | None]]:
            return (
                score_columns_file(
                    path,
                    columns=chosen,
                    key=table,
                    limits=intake_limits(settings),
                    labels=label_set(competition),
                ).columns
                or {}
            )

        try:
            values = score(columns)
        except ScoringError as exc:
            # Which columns fail: each catalogue column alone (a computed one needs its inputs).
            values = {}
            failures: dict[str, str] = {}
            for column in columns:
                if column.computed:
                    failures[column.key] = "needs its input columns to score: " + ", ".join(
                        column.of
                    )
                    continue
                try:
                    values.update(score([column]))
                except ScoringError as alone:
                    failures[column.key] = alone.message
            if not failures:  # only together do they fail: name the one message
                failures = {c.key: exc.message for c in columns}
            return [
                item(c, False, f"the sample submission fails: {failures[c.key]}")
                if c.key in failures
                else item(c, True, _scored(c, values[c.key]["score"]))
                for c in columns
            ]
    return [
        item(c, False, "scores the sample as no number (NaN)")
        if _missing(values[c.key]["score"])
        else item(c, True, _scored(c, values[c.key]["score"]))
        for c in columns
    ]


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def _scored(column: Column, value: float | None) -> str:
    what = column.metric.name if column.metric is not None else f"{column.op} of columns"
    return f"{what} scores the sample at {value:.6g}"


def _dates(competition: Competition, now: datetime) -> ChecklistItem:
    """Each phase's window and the team merge deadline within them: the rules the source
    platforms enforce (EvalAI, Codabench), no more. Phases start in any order and may overlap
    (EvalAI runs a test phase beside its dev phase); a phase without an end is open until a host
    ends it (Codabench's "never ends"); past dates publish as they came, an ended competition
    whose late entries are scored unranked."""
    phases = list(competition.phases)
    several = len(phases) > 1
    problems = []
    for phase in phases:
        which = f"phase '{phase.name}'" if several else "the competition"
        if phase.end is not None and phase.end <= phase.start:
            problems.append(f"{which} must end after it starts")
    start, merge, deadline = (
        competition.start,
        competition.team_merge_deadline,
        competition.deadline,
    )
    if merge is not None and not start < merge:
        problems.append("the team merge deadline must come after the start")
    if merge is not None and deadline is not None and merge > deadline:
        problems.append("the team merge deadline must not come after the deadline")
    problems += benchmark_problems(
        benchmark=competition.benchmark,
        every_submission=competition.board_every_submission,
        public_board_mode=competition.public_board_mode,
        deadline=deadline,
        phase_ends=[(p.name, p.end) for p in phases],
    )
    if problems:
        return _item("dates", False, "; ".join(problems))
    windows = ", ".join(
        f"{p.name} {p.start.isoformat()} to "
        + (p.end.isoformat() if p.end is not None else "open-ended")
        for p in phases
    )
    detail = windows if several else windows.split(" ", 1)[1]
    if deadline is not None and deadline <= now:
        detail += f" (ended {deadline.isoformat()}: it publishes as an ended competition)"
    if competition.benchmark:
        detail += " (a benchmark: it never ends)"
    return _item("dates", True, detail)


def _description(competition: Competition) -> ChecklistItem:
    if not competition.description.strip():
        return _item("description", False, "no description: say what the task is and the data")
    return _item("description", True, f"{len(competition.description):,} characters")


def checklist(
    competition: Competition, *, settings: Settings, now: datetime | None = None
) -> Checklist:
    now = now or datetime.now(UTC)
    phases = list(competition.phases)
    several = len(phases) > 1
    # A simulation phase has no answer key: its environment is what must work.
    items = [
        _environment(p, several) if p.takes_agents else _answer_key(p, several) for p in phases
    ]
    for phase in phases:
        if not phase.takes_agents:
            items += _sample_scores(competition, phase, several, settings)
    items += [_dates(competition, now), _description(competition)]
    return Checklist(ready=all(i.ok for i in items), items=items)


def publish(
    session: Session, *, competition: Competition, actor: User, settings: Settings
) -> Competition:
    if competition.status != DRAFT:
        raise Conflict(f"'{competition.slug}' is {competition.status}, not a draft")
    found = checklist(competition, settings=settings)
    failing = [i for i in found.items if not i.ok]
    if failing:
        raise NotReady(
            "not ready to publish: " + "; ".join(f"{i.key}: {i.detail}" for i in failing),
            extra={"items": [i.model_dump() for i in failing]},
        )
    _set_status(session, competition, PUBLISHED, actor, action="publish")
    return competition


def _require_owner(session: Session, competition: Competition, actor: User, doing: str) -> None:
    if not (actor.is_admin or is_owner(session, competition, actor)):
        raise Forbidden(f"only the owner of '{competition.slug}' or an admin may {doing} it")


def archive(session: Session, *, competition: Competition, actor: User) -> Competition:
    """Close a competition for good: read-only for everyone, its boards kept (no unarchive)."""
    _require_owner(session, competition, actor, "archive")
    require_writable(competition)  # archiving twice says it is archived already
    _set_status(session, competition, ARCHIVED, actor, action="archive")
    return competition


def _set_status(
    session: Session, competition: Competition, status: str, actor: User, *, action: str
) -> None:
    before = competition.status
    competition.status = status
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action=action,
        target=competition.slug,
        before={"status": before},
        after={"status": status},
    )


def delete(session: Session, *, competition: Competition, actor: User, settings: Settings) -> None:
    """Delete a competition nobody has competed in, with its keys, files and stored blobs.

    The rows go in the request's transaction (the foreign keys cascade to keys, files, hosts,
    teams, baselines and audit entries); the blobs only after it commits. The other order could
    leave a competition whose key or files are gone when the commit fails; this one can at worst
    leave unreachable blobs when the store fails, which are logged and harm no one.
    """
    _require_owner(session, competition, actor, "delete")
    ranked = session.scalar(
        select(
            exists().where(
                Submission.competition_id == competition.id, Submission.baseline.is_(False)
            )
        )
    )
    if ranked:
        raise HasSubmissions(
            f"'{competition.slug}' has submissions and cannot be deleted; archive it instead "
            f"(POST /api/v1/competitions/{competition.slug}/archive) to close it and keep its boards"
        )
    refs = [k.path for k in competition.answer_keys]
    refs += session.scalars(
        select(Submission.path).where(Submission.competition_id == competition.id)
    ).all()
    if competition.custom_metric_path:
        refs.append(competition.custom_metric_path)
    # An imported phase's scoring program and reference data (app.competitions.bundles).
    refs += [p.scorer["ref"] for p in competition.phases if p.scorer and p.scorer.get("ref")]
    blobs = list(
        session.scalars(
            select(DataFile.storage_key).where(DataFile.competition_id == competition.id)
        )
    )
    slug = competition.slug
    # A core DELETE: the database's ON DELETE CASCADE removes every dependent row at once.
    session.execute(sa_delete(Competition).where(Competition.id == competition.id))
    session.expunge(competition)
    log.info("competition %s deleted by %s", slug, actor.name)
    after_commit(session, lambda: _remove_blobs(sorted(set(refs)), blobs, settings, slug))


def _remove_blobs(refs: list[str], blobs: list[str], settings: Settings, slug: str) -> None:
    for ref in refs:
        try:
            remove_stored(ref, settings=settings)
        except Exception:  # noqa: BLE001 - the rows are gone; a leftover blob is only garbage
            log.exception("deleted competition %s: could not remove %s", slug, ref)
    for blob in blobs:
        try:
            delete_blob(blob, settings=settings)
        except Exception:  # noqa: BLE001 - as above
            log.exception("deleted competition %s: could not remove %s", slug, blob)
