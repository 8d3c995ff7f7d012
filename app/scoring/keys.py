"""Answer keys as the scorer needs them: parsed once per version, then served from memory."""

import threading
from collections import OrderedDict
from pathlib import Path

from pydantic import BaseModel

from app.metrics import Metric
from app.scoring.core import load_key
from app.scoring.intake import AnswerKeyTable

_CACHE_SIZE = 8
_cache: OrderedDict[tuple, AnswerKeyTable] = OrderedDict()
_lock = threading.Lock()


def cached_key(
    *, path: Path, sha256: str, metric: Metric, params: BaseModel, id_column: str | None
) -> AnswerKeyTable:
    cache_id = (sha256, metric.name, params.model_dump_json(), id_column)
    with _lock:
        if cache_id in _cache:
            _cache.move_to_end(cache_id)
            return _cache[cache_id]
    table = load_key(path, metric=metric, params=params, id_column=id_column)
    with _lock:
        _cache[cache_id] = table
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return table
