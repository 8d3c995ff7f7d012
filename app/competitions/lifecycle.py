"""A competition's life after creation: the launch checklist, publishing a draft, archiving,
and deleting one nobody has competed in.

The checklist is a list of items computed by :func:`checklist`, each an independent check
(phases, when they come, add their items per phase here).
"""

import logging
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete as sa_delete
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.auth.hosts import is_owner
from app.competitions.schemas import Checklist, ChecklistItem
from app.competitions.service import sample_submission_csv
from app.competitions.visibility import require_writable
from app.config import Settings
from app.db import after_commit
from app.errors import AppError, Conflict, Forbidden
from app.evaluation.keys import intake_limits, key_table
from app.evaluation.metric import is_custom, label_set, metric_for
from app.models import Competition, DataFile, Submission, User
from app.models.competition import ARCHIVED, DRAFT, PUBLISHED
from app.scoring.core import ScoringError, score_submission_file
from app.storage import delete_blob, remove_stored

log = logging.getLogger(__name__)


class NotReady(Conflict):
    code = "not_ready"


class HasSubmissions(Conflict):
    code = "has_submissions"


def _item(key: str, ok: bool, detail: str) -> ChecklistItem:
    return ChecklistItem(key=key, ok=ok, detail=detail)


def _answer_key(competition: Competition) -> ChecklistItem:
    key = competition.board_key
    if key is None:
        return _item("answer_key", False, "no answer key yet: upload one")
    return _item("answer_key", True, f"version {key.version}, {key.n_rows:,} rows")


def _sample_scores(competition: Competition, settings: Settings) -> ChecklistItem:
    """The sample submission participants download, scored by the one scoring function: a
    metric that cannot score it would fail every first submission."""
    key = competition.board_key
    if key is None:
        return _item("sample_scores", False, "needs an answer key to build the sample submission")
    if is_custom(competition):
        if not competition.custom_metric_path:
            return _item("sample_scores", False, "no metric file yet: upload your score() file")
        # The metric file was run on the key in the jail when it (or the key) was uploaded.
        return _item("sample_scores", True, "your metric file scored the answer key at upload")
    metric = metric_for(competition)
    try:
        sample = sample_submission_csv(competition, settings)
        with tempfile.TemporaryDirectory(prefix="podium-checklist-") as tmp:
            path = Path(tmp) / "sample.csv"
            path.write_bytes(sample)
            result = score_submission_file(
                path,
                metric=metric,
                params=metric.parse_params(competition.metric_params),
                key=key_table(competition, key, settings),
                limits=intake_limits(settings),
                labels=label_set(competition),
            )
    except ScoringError as exc:
        return _item("sample_scores", False, f"the sample submission fails: {exc.message}")
    except AppError as exc:
        return _item("sample_scores", False, f"the sample submission fails: {exc.detail}")
    return _item("sample_scores", True, f"{metric.name} scores the sample at {result.score:.6g}")


def _dates(competition: Competition, now: datetime) -> ChecklistItem:
    start, merge, deadline = (
        competition.start,
        competition.team_merge_deadline,
        competition.deadline,
    )
    problems = []
    if deadline is None:
        problems.append("no deadline")
    elif deadline <= now:
        problems.append(f"the deadline {deadline.isoformat()} has passed")
    if deadline is not None and deadline <= start:
        problems.append("the deadline must come after the start")
    if merge is not None and not start < merge:
        problems.append("the team merge deadline must come after the start")
    if merge is not None and deadline is not None and merge > deadline:
        problems.append("the team merge deadline must not come after the deadline")
    if problems:
        return _item("dates", False, "; ".join(problems))
    return _item("dates", True, f"{start.isoformat()} to {deadline.isoformat()}")  # type: ignore[union-attr]


def _description(competition: Competition) -> ChecklistItem:
    if not competition.description.strip():
        return _item("description", False, "no description: say what the task is and the data")
    return _item("description", True, f"{len(competition.description):,} characters")


def checklist(
    competition: Competition, *, settings: Settings, now: datetime | None = None
) -> Checklist:
    now = now or datetime.now(UTC)
    items = [
        _answer_key(competition),
        _sample_scores(competition, settings),
        _dates(competition, now),
        _description(competition),
    ]
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
