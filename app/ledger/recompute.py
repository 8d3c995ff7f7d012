"""``podium verify``'s recomputation: where a host's export carries the answer key (released
with the archive after the competition) and the submissions (``podium export
--with-submissions``), every score the chain holds is computed again from the files, offline,
with the catalogue's metrics (the one scoring path, :mod:`app.scoring.core`), and compared with
the chain's values. The key and each file are first matched with the SHA-256 the chain recorded
for them, so a score is recomputed from the very bytes that were scored.

What cannot be recomputed offline is named in a note: a phase scored by an imported program,
code submissions (the hosts' "Reproduce the winners" reruns those in the jail), a custom metric.
"""

import json
import math
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from app.bundles.api import columns_body
from app.bundles.errors import BundleError
from app.bundles.read import read_bundle
from app.ledger.boards import Facts, replay
from app.ledger.chain import sha256_hex
from app.ledger.report import Report
from app.metrics import MetricParamsError, UnknownMetric
from app.scoring.columns import Column, ColumnError, reading_metric, resolve_columns
from app.scoring.core import ScoringError, load_key, score_columns_file

INDEX = "submissions/index.json"
CODE_SUFFIXES = (".py", ".ipynb")
SPLITS = ("public", "private")


def recompute(archive: Path, by_seq: dict[int, dict[str, Any]], report: Report) -> None:
    """Recompute every score of the archive's submissions and name each that differs."""
    with zipfile.ZipFile(archive) as bundle:
        if INDEX not in bundle.namelist():
            report.notes.append(
                "the archive holds no submissions (exported without --with-submissions): "
                "no score recomputed"
            )
            return
        index = json.loads(bundle.read(INDEX))
        files = {name: bundle.read(name) for name in _wanted(index) if name in bundle.namelist()}
    try:
        model = read_bundle(archive)
    except BundleError as exc:
        report.notes.append(
            f"the archive's competition cannot be read ({exc}): no score recomputed"
        )
        return
    facts = replay(by_seq)
    with tempfile.TemporaryDirectory(prefix="podium-verify-") as scratch:
        work = Path(scratch)
        for phase in model.phases:
            scorer = _phase_scorer(model, phase, facts, work, report)
            if scorer is None:
                continue
            columns, key_id, table = scorer
            for item in index:
                if item.get("phase") != phase.name:
                    continue
                _recompute_one(item, files, columns, key_id, table, facts, work, report)


def _wanted(index: list[dict[str, Any]]) -> list[str]:
    return [str(item["file"]) for item in index if item.get("file")]


def _phase_scorer(
    model: Any, phase: Any, facts: Facts, work: Path, report: Report
) -> tuple[list[Column], int, Any] | None:
    """The phase's columns, its board key's id and the parsed key, or None (noted why)."""
    where = f"phase {phase.name}"
    key_id = facts.board_key.get(phase.name)
    if key_id is None:
        return None
    if phase.scorer is not None:
        report.notes.append(f"{where} is scored by its own program: its scores not recomputed")
        return None
    if not phase.answer_key:
        report.notes.append(f"{where}: the archive holds no answer key: no score recomputed")
        return None
    data = phase.answer_key[0].data
    if sha256_hex(data) != facts.key_sha256.get(key_id):
        report.problems.append(
            f"{where}: the archive's answer key is not the one the chain published for the board"
        )
        return None
    own, ranking = model.phase_columns(phase)
    try:
        columns = resolve_columns(columns_body(own, ranking))
    except (ColumnError, UnknownMetric, MetricParamsError) as exc:
        report.notes.append(f"{where}: its columns cannot be scored offline ({exc})")
        return None
    reading = reading_metric(columns)
    if reading.metric is None or reading.params is None:
        report.notes.append(f"{where}: its columns are written by a program: not recomputed")
        return None
    path = work / f"key-{key_id}.csv"
    path.write_bytes(data)
    try:
        table = load_key(
            path, metric=reading.metric, params=reading.params, id_column=None, check=False
        )
    except ScoringError as exc:
        report.notes.append(f"{where}: its answer key cannot be read offline ({exc.message})")
        return None
    return columns, key_id, table


def _recompute_one(
    item: dict[str, Any],
    files: dict[str, bytes],
    columns: list[Column],
    key_id: int,
    table: Any,
    facts: Facts,
    work: Path,
    report: Report,
) -> None:
    sub = item.get("id")
    chained = facts.values.get((sub, key_id)) if isinstance(sub, int) else None
    if chained is None:
        return  # not scored against the board's key (failed, refused, or still queued)
    what = f"submission {sub} ({item.get('team')})"
    data = files.get(str(item.get("file")))
    if data is None:
        report.notes.append(f"{what}: its file is not in the archive: not recomputed")
        return
    if sha256_hex(data) != facts.sha256.get(sub):
        report.problems.append(f"{what}: the archive's file is not the one the chain received")
        return
    if str(item.get("filename", "")).lower().endswith(CODE_SUFFIXES):
        report.notes.append(f"{what} is code: rerun by the hosts' Reproduce the winners")
        return
    path = work / f"submission-{sub}"
    path.write_bytes(data)
    try:
        result = score_columns_file(path, columns=columns, key=table)
    except ScoringError as exc:
        report.problems.append(f"{what}: the chain holds a score, the file fails: {exc.message}")
        return
    finally:
        path.unlink()
    report.recomputed += 1
    computed = result.columns or {}
    for split in SPLITS:
        for column, value in chained[split].items():
            if value is None or column not in computed:
                continue
            again = computed[column].get(split)
            if not _same(value, again):
                report.problems.append(
                    f"{what}: its {split} {column} is {value!r} in the chain, {again!r} "
                    "recomputed from its file"
                )


def _same(chained: Any, computed: float | None) -> bool:
    if computed is None:
        return False
    if isinstance(chained, str):  # nan and infinities are chained as text
        return chained == repr(computed)
    if not isinstance(chained, int | float):
        return False
    if math.isnan(computed):
        return False
    return math.isclose(chained, computed, rel_tol=1e-9, abs_tol=1e-12)
