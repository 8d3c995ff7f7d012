"""Answer keys as the scorer needs them: parsed once per version into the on-disk cache, then
held in memory for the versions in use, with the configured size limits."""

import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from app.config import Settings
from app.evaluation.metric import metric_for
from app.metrics import Metric
from app.models import AnswerKey, Competition
from app.scoring.core import load_key
from app.scoring.intake import AnswerKeyTable, IntakeLimits, read_submission
from app.storage import local_file

_CACHE_SIZE = 8
_cache: OrderedDict[tuple, AnswerKeyTable] = OrderedDict()  # type: ignore[type-arg]
_lock = threading.Lock()


def intake_limits(settings: Settings) -> IntakeLimits:
    return IntakeLimits(
        max_rows=settings.max_rows,
        max_decompressed_bytes=settings.max_decompressed_bytes,
        max_line_bytes=settings.max_line_bytes,
        max_columns=settings.max_columns,
    )


def cached_key(
    *,
    path: Path,
    sha256: str,
    metric: Metric,
    params: BaseModel,
    id_column: str | None,
    settings: Settings,
) -> AnswerKeyTable:
    cache_dir = Path(settings.data_dir) / "key-cache"
    cache_id = (str(cache_dir), sha256, metric.name, params.model_dump_json(), id_column)
    with _lock:
        if cache_id in _cache:
            _cache.move_to_end(cache_id)
            return _cache[cache_id]
    table = load_key(
        path,
        metric=metric,
        params=params,
        id_column=id_column,
        limits=intake_limits(settings),
        cache_dir=cache_dir,
        sha256=sha256,
    )
    with _lock:
        _cache[cache_id] = table
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return table


def key_table(competition: Competition, key: AnswerKey, settings: Settings) -> AnswerKeyTable:
    """The parsed table of one stored key version, as the competition's metric reads it."""
    metric = metric_for(competition)
    return cached_key(
        path=local_file(key.path, settings=settings),
        sha256=key.sha256,
        metric=metric,
        params=metric.parse_params(competition.metric_params),
        id_column=competition.id_column,
        settings=settings,
    )


def stored_predictions(
    path: str, *, table: AnswerKeyTable, metric: Metric, settings: Settings
) -> np.ndarray:
    """A stored submission's predictions aligned with a parsed key (the stats jobs re-read it)."""
    return read_submission(
        local_file(path, settings=settings),
        key=table,
        metric=metric,
        limits=intake_limits(settings),
    )
