"""Creating competitions, storing versioned answer keys, building sample submissions."""

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
from pyarrow import csv as pacsv
from sqlalchemy import false, func, select, update
from sqlalchemy.orm import Session

from app.audit.service import record
from app.competitions.metric import CUSTOM, custom_metric, is_custom, metric_for
from app.competitions.schemas import (
    CompetitionCreate,
    CompetitionPublic,
    CompetitionUpdate,
    MetricConfig,
    check_timeline,
)
from app.config import Settings
from app.custom_metrics.sandbox import (
    CustomMetricFailure,
    InvalidMetricSource,
    validate_metric_source,
)
from app.errors import Conflict, NotFound, Unprocessable
from app.metrics import Metric, MetricParamsError, UnknownMetric, get_metric
from app.models import AnswerKey, Competition, Submission, User
from app.scoring.core import ScoringError
from app.scoring.custom import check_key_with_custom_metric, custom_metrics_refused
from app.scoring.intake import PRIVATE, PUBLIC
from app.scoring.keys import cached_key, key_table
from app.storage import remove_quietly, store_stream


def create_competition(session: Session, *, data: CompetitionCreate, owner: User) -> Competition:
    try:
        metric = custom_metric() if data.metric.name == CUSTOM else get_metric(data.metric.name)
        params = metric.parse_params(data.metric.params)
    except UnknownMetric as exc:
        raise Unprocessable(f"{exc}; or '{CUSTOM}' to upload your own metric file") from None
    except MetricParamsError as exc:
        raise Unprocessable(str(exc)) from None
    if session.scalar(select(Competition.id).where(Competition.slug == data.slug)) is not None:
        raise Conflict(f"a competition with slug '{data.slug}' already exists")
    competition = Competition(
        slug=data.slug,
        title=data.title,
        description=data.description,
        metric_name=metric.name,
        metric_params=params.model_dump(mode="json"),
        id_column=data.id_column,
        start=data.start or datetime.now(UTC),
        team_merge_deadline=data.team_merge_deadline,
        deadline=data.deadline,
        daily_submission_limit=data.daily_submission_limit,
        total_submission_limit=data.total_submission_limit,
        final_selection_limit=data.final_selection_limit,
        max_team_size=data.max_team_size,
        score_decimals=data.score_decimals,
        created_by_id=owner.id,
    )
    session.add(competition)
    session.flush()
    return competition


def list_competitions(session: Session) -> list[Competition]:
    return list(session.scalars(select(Competition).order_by(Competition.created_at.desc())))


def to_public(competition: Competition) -> CompetitionPublic:
    metric = metric_for(competition)
    key = competition.board_key
    return CompetitionPublic(
        slug=competition.slug,
        title=competition.title,
        description=competition.description,
        metric=MetricConfig(name=competition.metric_name, params=competition.metric_params),
        direction=metric.direction,
        id_column=key.id_column if key else competition.id_column,
        columns=[key.id_column, *key.target_columns] if key else None,
        start=competition.start,
        team_merge_deadline=competition.team_merge_deadline,
        deadline=competition.deadline,
        daily_submission_limit=competition.daily_submission_limit,
        total_submission_limit=competition.total_submission_limit,
        final_selection_limit=competition.final_selection_limit,
        max_team_size=competition.max_team_size,
        score_decimals=competition.score_decimals,
        has_answer_key=key is not None,
        has_metric_file=bool(competition.custom_metric_path) if is_custom(competition) else None,
        created_at=competition.created_at,
    )


def _snapshot(competition: Competition, fields: list[str]) -> dict[str, Any]:
    return {
        name: value.isoformat() if isinstance(value, datetime) else value
        for name in fields
        for value in [getattr(competition, name)]
    }


_NOT_NULL = {
    "title",
    "start",
    "daily_submission_limit",
    "final_selection_limit",
    "max_team_size",
    "score_decimals",
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
    before = _snapshot(competition, list(changes))
    for name, value in changes.items():
        setattr(competition, name, value)
    if "deadline" in changes:
        _relabel_late(session, competition)
    session.flush()
    record(
        session,
        competition=competition,
        actor=actor,
        action="settings_change",
        target=competition.slug,
        before=before,
        after=_snapshot(competition, list(changes)),
    )
    return competition


def _relabel_late(session: Session, competition: Competition) -> None:
    """A moved deadline moves what counts as late: the boards and selections follow it."""
    deadline = competition.deadline
    late = Submission.created_at >= deadline if deadline is not None else false()
    session.execute(
        update(Submission).where(Submission.competition_id == competition.id).values(late=late)
    )


def upload_answer_key(
    session: Session,
    *,
    competition: Competition,
    source: BinaryIO,
    uploader: User,
    settings: Settings,
) -> AnswerKey:
    """Validate and store a new key version; the first version goes live at once."""
    directory = Path(settings.data_dir) / "answer-keys" / str(competition.id)
    stored = store_stream(source, directory=directory, max_bytes=settings.max_upload_bytes)
    metric = metric_for(competition)
    params = metric.parse_params(competition.metric_params)
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
                metric_path=Path(competition.custom_metric_path),
                key_path=stored.path,
                settings=settings,
            )
    except CustomMetricFailure as exc:
        if not _is_referenced(session, stored.path):
            remove_quietly(stored.path)
        raise Unprocessable(f"answer key rejected by your metric: {exc.host_message}") from None
    except ScoringError as exc:
        if not _is_referenced(session, stored.path):
            remove_quietly(stored.path)
        raise Unprocessable(f"answer key rejected: {exc.message}") from None
    latest = session.scalar(
        select(func.max(AnswerKey.version)).where(AnswerKey.competition_id == competition.id)
    )
    now = datetime.now(UTC)
    previous = competition.board_key
    key = AnswerKey(
        competition_id=competition.id,
        version=(latest or 0) + 1,
        path=str(stored.path),
        sha256=stored.sha256,
        id_column=table.id_column,
        target_columns=table.target_columns,
        n_rows=table.n_rows,
        n_public=table.count(PUBLIC),
        n_private=table.count(PRIVATE),
        uploaded_by_id=uploader.id,
        published_at=now if previous is None else None,
    )
    session.add(key)
    session.flush()
    session.refresh(competition, ["answer_keys"])
    record(
        session,
        competition=competition,
        actor=uploader,
        action="answer_key_upload",
        target=f"version {key.version}",
        before={"board_version": previous.version if previous else None},
        after={
            "version": key.version,
            "sha256": key.sha256,
            "rows": key.n_rows,
            "published": key.published_at is not None,
        },
    )
    return key


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
    """Store an organiser's Kaggle-style metric file, after proving it can score the key."""
    if not is_custom(competition):
        raise Conflict(
            f"this competition scores with '{competition.metric_name}'; a metric file needs a "
            f"competition created with metric name '{CUSTOM}'"
        )
    refused = custom_metrics_refused(settings)
    if refused is not None:
        raise Conflict(refused)
    directory = Path(settings.data_dir) / "metrics" / str(competition.id)
    # A .py name: the sandbox imports the file as a module.
    stored = store_stream(
        source, directory=directory, max_bytes=MAX_METRIC_FILE_BYTES, suffix=".py"
    )
    try:
        validate_metric_source(stored.path.read_bytes())
        key = competition.board_key
        if key is not None:
            check_key_with_custom_metric(
                competition, metric_path=stored.path, key_path=Path(key.path), settings=settings
            )
    except InvalidMetricSource as exc:
        remove_quietly(stored.path)
        raise Unprocessable(f"metric file rejected: {exc}") from None
    except CustomMetricFailure as exc:
        remove_quietly(stored.path)
        raise Unprocessable(
            f"metric file cannot score the answer key: {exc.host_message}"
        ) from None
    before = {
        "sha256": competition.custom_metric_sha256,
        "direction": competition.custom_metric_direction,
    }
    competition.custom_metric_path = str(stored.path)
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


def _is_referenced(session: Session, path: Path) -> bool:
    # Identical uploads share one stored file; never delete one an earlier version still uses.
    return session.scalar(select(AnswerKey.id).where(AnswerKey.path == str(path))) is not None


def sample_submission_csv(competition: Competition, settings: Settings) -> bytes:
    key_row = competition.board_key
    if key_row is None:
        raise NotFound("this competition has no answer key yet")
    metric = metric_for(competition)
    table = key_table(competition, key_row, settings)
    n = table.n_rows
    columns: dict[str, pa.Array] = {table.id_column: table.ids}
    for name in table.target_columns:
        columns[name] = _placeholder(metric, table.y_true, len(table.target_columns), n)
    out = io.BytesIO()
    pacsv.write_csv(pa.table(columns), out)
    return out.getvalue()


def _placeholder(metric: Metric, y_true: np.ndarray, n_columns: int, n: int) -> pa.Array:
    """A value every row may legally hold: a uniform probability, a known label, an empty set."""
    if metric.cell == "number":
        return pa.array(np.full(n, 1.0 / n_columns if n_columns > 1 else 0.5))
    if metric.cell == "label":
        return pa.array(np.full(n, str(min(y_true.ravel())), dtype=object), type=pa.string())
    return pa.array([""] * n, type=pa.string())


def get_competition_by_slug(session: Session, slug: str) -> Competition:
    competition = session.scalar(select(Competition).where(Competition.slug == slug))
    if competition is None:
        raise NotFound(f"no competition '{slug}'")
    return competition
