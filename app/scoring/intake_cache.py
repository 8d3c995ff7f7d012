"""Answer keys parsed once per version and kept on disk in a form that loads in milliseconds.

A cache entry is a directory named after the key file's SHA-256, the metric, its params and the
id column. It holds the parsed columns as one uncompressed Arrow IPC file (memory-mapped on load,
so nothing is copied or parsed) and the id index (:class:`KeyIndex`) as ``.npy`` arrays, so a
shuffled submission is joined without hashing the key again. Entries are written to a temporary
directory and renamed into place, so a reader never sees half an entry; a damaged entry is rebuilt.
"""

import hashlib
import json
import mmap
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import ipc
from pydantic import BaseModel

from app.metrics.registry import Metric
from app.scoring.intake import AnswerKeyTable, read_answer_key
from app.scoring.intake_align import KeyIndex
from app.scoring.intake_cells import chunk_values, primitive
from app.scoring.intake_source import DEFAULT_LIMITS, IntakeLimits

CACHE_FORMAT = 3  # bump when the layout below changes: old entries are then simply not found
_TABLE = "key.arrow"
_META = "meta.json"
_INDEX_ARRAYS = ("hashes", "rows", "bucket_starts")
_SETTLE_SECONDS = 2.0


def file_sha256(path: Path, cache_dir: Path | None = None) -> str:
    """SHA-256 of a file, remembered under ``cache_dir`` by path, size, mtime and inode."""
    stat = os.stat(path)
    memo = None
    # A file changed within the last moments may change again within the same timestamp tick
    # (as git's "racy" index entries can), so its hash is not remembered until it has settled.
    settled = time.time() - stat.st_mtime > _SETTLE_SECONDS
    if cache_dir is not None and settled:
        fingerprint = f"{Path(path).resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}"
        memo = cache_dir / "sha256" / hashlib.sha256(fingerprint.encode()).hexdigest()
        try:
            return memo.read_text().strip()
        except OSError:
            pass
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    value = digest.hexdigest()
    if memo is not None:
        memo.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(memo, value.encode())
    return value


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def cache_entry(
    cache_dir: Path, *, sha256: str, metric: Metric, params: BaseModel, id_column: str | None
) -> Path:
    identity = json.dumps(
        [CACHE_FORMAT, sha256, metric.name, params.model_dump(mode="json"), id_column],
        sort_keys=True,
    )
    return Path(cache_dir) / f"key-{hashlib.sha256(identity.encode()).hexdigest()[:40]}"


def load_cached_key(
    source_csv: Path,
    cache_dir: Path,
    *,
    metric: Metric,
    params: BaseModel,
    id_column: str | None = None,
    sha256: str | None = None,
    limits: IntakeLimits = DEFAULT_LIMITS,
) -> AnswerKeyTable:
    """The answer key in ``source_csv``, parsed on first use and loaded from ``cache_dir`` after.

    ``sha256`` may be passed when the caller already knows the file's hash (the service stores
    it with each key version); otherwise it is computed once and remembered by file stat.
    Errors in the key raise :class:`IntakeError` exactly as :func:`read_answer_key` does.
    """
    cache_dir = Path(cache_dir)
    digest = sha256 or file_sha256(Path(source_csv), cache_dir)
    entry = cache_entry(cache_dir, sha256=digest, metric=metric, params=params, id_column=id_column)
    if entry.is_dir():
        try:
            return _load(entry, metric)
        except (OSError, ValueError, KeyError, pa.ArrowException):
            shutil.rmtree(entry, ignore_errors=True)  # damaged: rebuild below
    key = read_answer_key(
        Path(source_csv), metric=metric, params=params, id_column=id_column, limits=limits
    )
    _store(entry, key, metric)
    return key


def _store(entry: Path, key: AnswerKeyTable, metric: Metric) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=entry.parent, prefix=".tmp-key-"))
    try:
        columns = {"id": key.ids}
        y_true = key.y_true if key.y_true.ndim == 2 else key.y_true[:, None]
        for j in range(y_true.shape[1]):
            columns[f"target:{j}"] = _to_arrow(y_true[:, j], metric.cell)
        if key.usage is not None:
            columns["usage"] = _numbers(key.usage, pa.int8())
        for j, name in enumerate(key.extra):
            columns[f"extra:{j}"] = _numbers(key.extra[name], pa.float64())
        table = pa.table(columns)
        with ipc.new_file(tmp / _TABLE, table.schema) as writer:
            writer.write_table(table, max_chunksize=max(table.num_rows, 1))
        index = key.id_index()
        for name in _INDEX_ARRAYS:
            np.save(tmp / f"{name}.npy", getattr(index, name))
        meta = {
            "id_column": key.id_column,
            "target_columns": key.target_columns,
            "extra_columns": list(key.extra),
            "two_dimensional": key.y_true.ndim == 2,
            "bits": index.bits,
            "id_width": index.id_width,
        }
        (tmp / _META).write_text(json.dumps(meta))
        try:
            os.rename(tmp, entry)
        except OSError:
            pass  # another process stored the same entry first; theirs is as good
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _to_arrow(values: np.ndarray, cell: str) -> pa.Array:
    if cell == "number":
        return _numbers(values, pa.float64())
    # pa.array() on a numpy array would import pandas; a list does not (and this runs once).
    strings = pa.array(values.tolist(), type=pa.string())
    return strings.dictionary_encode() if cell == "label" else strings


def _numbers(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    values = np.ascontiguousarray(values, dtype=arrow_type.to_pandas_dtype())
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def _load(entry: Path, metric: Metric) -> AnswerKeyTable:
    meta = json.loads((entry / _META).read_text())
    mappings = [_map(entry / _TABLE)]
    table = ipc.open_file(pa.BufferReader(pa.py_buffer(mappings[0]))).read_all()
    targets = [
        _column(table, name, metric.cell)
        for name in table.column_names
        if name.startswith("target:")
    ]
    y_true = np.column_stack(targets) if meta["two_dimensional"] else targets[0]
    usage = (
        primitive(_single_chunk(table.column("usage"))) if "usage" in table.column_names else None
    )
    extra = {
        name: _column(table, f"extra:{j}", "number") for j, name in enumerate(meta["extra_columns"])
    }
    arrays = []
    for name in _INDEX_ARRAYS:
        mapped = np.load(entry / f"{name}.npy", mmap_mode="r")
        mappings.append(mapped._mmap)
        arrays.append(np.asarray(mapped))  # a plain view: numpy.memmap slows indexing down
    hashes, rows, bucket_starts = arrays
    index = KeyIndex(hashes, rows, bucket_starts, bits=meta["bits"], id_width=meta["id_width"])
    return AnswerKeyTable(
        id_column=meta["id_column"],
        target_columns=meta["target_columns"],
        ids=_single_chunk(table.column("id")),
        y_true=y_true,
        usage=usage,
        extra=extra,
        index=index,
        release_pages=lambda: _drop_resident_pages(mappings),
    )


def _map(path: Path) -> mmap.mmap:
    with open(path, "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def _drop_resident_pages(mappings: Sequence[mmap.mmap | None]) -> None:
    """Let the kernel take the mapped key's pages out of this process's resident set.

    The files are read-only and unchanged, so nothing is lost: the pages stay in the OS page
    cache and come back on the next touch. After a submission is aligned, the key's ids and
    index are not needed until the next one, while the metric may need the memory.
    """
    for mapping in mappings:
        if mapping is not None and hasattr(mapping, "madvise"):
            try:
                mapping.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError):
                pass


def _single_chunk(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _column(table: pa.Table, name: str, cell: str) -> np.ndarray:
    return chunk_values(_single_chunk(table.column(name)), cell)
