"""A competition as a Codabench v2 bundle (what Codabench's own ``create_competition_dump`` writes):
``competition.yaml``, pages, one task per phase with its reference data, the scoring programs, and
``podium:`` so that Podium reads back the same competition.

A phase scored by Podium's catalogue gets ``score.py`` (numpy alone, ``app/bundles/standalone``);
an imported Codabench / CodaLab program is written as it came; an EvalAI script is wrapped in a
``score.py`` that calls its ``evaluate()`` and writes ``scores.json``.
"""

from __future__ import annotations

import base64
import io
import json
import re
import zipfile
from dataclasses import dataclass, replace
from datetime import datetime
from importlib import resources
from typing import Any

import yaml

from app.bundles.extension import build_extension
from app.bundles.fields import slugify
from app.bundles.model import Column, Competition, Page, Phase

DEFAULT_DOCKER_IMAGE = "codalab/codalab-legacy:py39"
STANDALONE_METRICS = frozenset({"rmse", "mae", "r2", "rmsle", "log_loss_binary", "roc_auc"})
# A 1x1 PNG: Codabench refuses a bundle without an image.
BLANK_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
RULES = {"last": "Force_Last", "best": "Force_Best"}
COMPUTATION = {"mean": "avg", "sum": "sum", "min": "min", "max": "max"}

EVALAI_WRAPPER = '''"""Codabench runs this; it calls the EvalAI evaluation script's evaluate() as EvalAI did."""
import importlib
import json
import os
import sys
import zipfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
with open(os.path.join(here, "podium_evalai.json")) as handle:
    config = json.load(handle)
input_dir = sys.argv[1] if len(sys.argv) > 1 else "/app/input"
output_dir = sys.argv[2] if len(sys.argv) > 2 else "/app/output"
res = os.path.join(input_dir, "res")
names = sorted(n for n in os.listdir(res) if n != "metadata")
if len(names) == 1:
    submission = os.path.join(res, names[0])
else:  # Codabench unzipped the upload; EvalAI passed the file as uploaded
    submission = os.path.join(output_dir, "submission.zip")
    with zipfile.ZipFile(submission, "w") as archive:
        for name in names:
            archive.write(os.path.join(res, name), name)
package = importlib.import_module(config["package"])
out = package.evaluate(
    os.path.join(input_dir, "ref", config["annotation"]), submission, config["phase_codename"],
    submission_metadata={},
)
scores = {}
for item in out["result"]:
    for split, values in item.items():
        suffix = "" if config["splits"].get(split) == "public" else "__" + split
        for label, value in values.items():
            scores[label + suffix] = float(value)
os.makedirs(output_dir, exist_ok=True)
with open(os.path.join(output_dir, "scores.json"), "w") as handle:
    json.dump(scores, handle)
'''


@dataclass(frozen=True)
class Export:
    data: bytes  # the zip
    warnings: tuple[str, ...]


def slugify_file(name: str) -> str:
    """A file name that stays one plain path part."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".")


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


def _ext(page: Page) -> str:
    return "md" if page.format == "markdown" else "html"


def _leaderboard_columns(competition: Competition) -> list[Column]:
    """Every column key of every phase (Codabench has one leaderboard for all phases); where a
    phase defines a key differently, the competition's definition is the leaderboard's and the
    phase's own is kept in ``podium:``."""
    union: dict[str, Column] = {}
    for column in [
        *competition.columns,
        # A multi-task phase's aggregates read "{task}.{column}" keys, which Codabench has not
        # (they travel in ``podium:``); its tasks' own columns are the leaderboard's, as
        # Codabench shows the same columns for each task.
        *(c for p in competition.phases if not p.tasks for c in p.columns or ()),
        *(c for p in competition.phases for t in p.tasks for c in t.columns),
    ]:
        union.setdefault(column.key, column)
    return list(union.values())


def _column_yaml(column: Column, index: int, positions: dict[str, int]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "title": column.title,
        "key": column.key if column.metric is not None or column.computed else column.program_key,
        "index": index,
        "sorting": "asc" if column.direction == "minimize" else "desc",
        "hidden": column.hidden,
    }
    if column.precision is not None:  # unset: Codabench shows 2, Podium reads it back unset
        body["precision"] = column.precision
    if column.computed is not None:
        body["computation"] = COMPUTATION[column.computed.op]
        body["computation_indexes"] = [positions[k] for k in column.computed.of]
    return body


def _fact_sheet(phase: Phase) -> dict[str, Any] | None:
    if not phase.entry_fields:
        return None
    sheet = {}
    for e in phase.entry_fields:
        kind = {"boolean": "checkbox", "choice": "select", "text": "text"}[e.type]
        selection: Any = (
            list(e.options) if e.type == "choice" else [True, False] if e.type == "boolean" else ""
        )
        sheet[e.key] = {
            "key": e.key,
            "type": kind,
            "title": e.title,
            "selection": selection,
            "is_required": e.required,
            "is_on_leaderboard": e.on_board,
        }
    return sheet


def export_codabench(competition: Competition) -> Export:
    warnings: list[str] = []
    files: dict[str, bytes] = {}
    columns = _leaderboard_columns(competition)
    positions = {c.key: i for i, c in enumerate(columns)}

    pages_yaml = []
    terms_path = None
    terms_position = None
    written = 0
    for i, page in enumerate(competition.pages):
        path = f"pages/{i:02d}-{slugify(page.title, fallback='page')}.{_ext(page)}"
        files[path] = page.content.encode()
        if page.kind == "terms" and terms_path is None:
            terms_path, terms_position = path, i
        else:
            pages_yaml.append({"title": page.title, "file": path})
            written += 1
    if terms_path is None:
        terms_path = "pages/terms.md"
        files[terms_path] = b"The competition's rules apply.\n"
    logo_name = "logo.png"
    if competition.logo is not None:
        logo_name = "logo/" + (slugify_file(competition.logo.path) or "logo.png")
    files[logo_name] = competition.logo.data if competition.logo else BLANK_PNG

    tasks: list[dict[str, Any]] = []
    phases_yaml, scorers = [], []
    task_scorers: dict[str, list[dict[str, Any]]] = {}
    program_dirs: dict[Any, str] = {}
    for i, phase in enumerate(competition.phases):
        if phase.tasks:
            indexes, each = _tasks_of(competition, phase, files, program_dirs, warnings, tasks)
            scorers.append(each[0])
            task_scorers[phase.name] = each
            phases_yaml.append(_phase_yaml(competition, phase, i, indexes, warnings))
            continue
        program_dir, scorer = _program_dir(competition, phase, files, program_dirs, warnings)
        task: dict[str, Any] = {
            "index": len(tasks),
            "name": f"{phase.title} task",
            "scoring_program": program_dir,
        }
        if phase.answer_key:
            ref_dir = f"reference_data/{phase.name}"
            for f in phase.answer_key:
                files[f"{ref_dir}/{f.path}"] = f.data
            task["reference_data"] = ref_dir
        if phase.ingestion is not None and phase.scorer is not None:
            ingestion_dir = f"ingestion_program/{phase.name}"
            for f in phase.ingestion.files:
                files[f"{ingestion_dir}/{f.path}"] = f.data
            task["ingestion_program"] = ingestion_dir
            if phase.ingestion.input_data:
                data_dir = f"input_data/{phase.name}"
                for f in phase.ingestion.input_data:
                    files[f"{data_dir}/{f.path}"] = f.data
                task["input_data"] = data_dir
        tasks.append(task)
        scorers.append(scorer)
        phases_yaml.append(_phase_yaml(competition, phase, i, [task["index"]], warnings))

    first = competition.phases[0]
    rule = RULES.get(first.counts) or (
        "Add" if first.final_selection_limit == 1 else "Add_And_Delete_Multiple"
    )
    board: dict[str, Any] = {
        "title": "Results",
        "key": "main",
        "primary_index": positions[competition.ranking],
        "submission_rule": rule,
        "hidden": all(p.board == "hidden" for p in competition.phases),
        "columns": [_column_yaml(c, positions[c.key], positions) for c in columns],
    }
    config: dict[str, Any] = {
        "version": 2,
        "title": competition.title,
        "description": competition.description.content,
        "image": logo_name,
        "docker_image": competition.docker_image or DEFAULT_DOCKER_IMAGE,
        "terms": terms_path,
        "registration_auto_approve": competition.registration == "open",
        "pages": pages_yaml,
        "tasks": tasks,
        "phases": phases_yaml,
        "leaderboards": [board],
    }
    if competition.benchmark:
        config["competition_type"] = "benchmark"
    sheet = _fact_sheet(first)
    if sheet:
        config["fact_sheet"] = sheet
    extension = build_extension(
        competition,
        leaderboard_keys=[c.key for c in columns],
        scorers=scorers,
        task_scorers=task_scorers,
    )
    extension["terms_position"] = terms_position
    extension["docker_image"] = competition.docker_image
    data_files = []
    for datafile in competition.data_files:
        path = f"podium_data/{slugify_file(datafile.name) or 'data'}"
        while path in files:
            path += "_"
        files[path] = datafile.data
        data_files.append(
            {
                "name": datafile.name,
                "file": path,
                "visibility": datafile.visibility,
                "sha256": datafile.sha256,
            }
        )
    extension["data_files"] = data_files
    extension["origin"] = competition.origin
    extension["board_every_submission"] = competition.board_every_submission
    if competition.missing:
        # Listed where a host unpacking the bundle sees it, not only in the config.
        extension["missing"] = list(competition.missing)
        files["MISSING.txt"] = (
            "Files this export could not carry (their stored copy is missing):\n"
            + "".join(f"- {m}\n" for m in competition.missing)
        ).encode()
    config["podium"] = extension
    files["competition.yaml"] = yaml.safe_dump(config, sort_keys=False, allow_unicode=True).encode()

    out = io.BytesIO()
    # Level 1: reference data is large and often compressed already (level 6: 7 s for 64 MB here).
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[path], compresslevel=1)
    return Export(data=out.getvalue(), warnings=tuple(dict.fromkeys(warnings)))


def _phase_yaml(
    competition: Competition,
    phase: Phase,
    i: int,
    task_indexes: list[int],
    warnings: list[str],
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "index": i,
        "name": phase.title,
        "description": phase.description,
        "start": _when(phase.start),
        "end": _when(phase.end),
        "tasks": task_indexes,
    }
    if phase.daily_submission_limit is not None:
        body["max_submissions_per_day"] = phase.daily_submission_limit
    if phase.total_submission_limit is not None:
        body["max_submissions"] = phase.total_submission_limit
    if phase.execution_time_limit is not None:
        body["execution_time_limit"] = phase.execution_time_limit
    hidden = [t.ingestion for t in phase.tasks if t.ingestion is not None]
    if phase.ingestion is not None:
        hidden.append(phase.ingestion)
    if any(i.hide_log for i in hidden):
        body["hide_prediction_output"] = True
    if phase.migrate is not None and i > 0 and competition.phases[i - 1].name == phase.migrate[0]:
        body["auto_migrate_to_this_phase"] = True
    if phase.board == "blind":
        warnings.append(f"phase {phase.name!r} is blind on Podium; Codabench shows its board")
    return body


def _tasks_of(
    competition: Competition,
    phase: Phase,
    files: dict[str, bytes],
    done: dict[Any, str],
    warnings: list[str],
    tasks: list[dict[str, Any]],
) -> tuple[list[int], list[dict[str, Any]]]:
    """A multi-task phase's tasks as Codabench's, each its program and reference data (a
    catalogue task's: the standalone scorer of its columns); the indexes the phase lists, and
    each task's scorer (for ``podium:``)."""
    indexes, scorers = [], []
    for task in phase.tasks:
        single = replace(phase, tasks=(), scorer=task.scorer, columns=task.columns)
        program_dir, scorer = _program_dir(competition, single, files, done, warnings)
        entry: dict[str, Any] = {
            "index": len(tasks),
            "name": task.title,
            "scoring_program": program_dir,
        }
        if task.answer_key:
            ref_dir = f"reference_data/{phase.name}/{task.key}"
            for f in task.answer_key:
                files[f"{ref_dir}/{f.path}"] = f.data
            entry["reference_data"] = ref_dir
        if task.ingestion is not None and task.scorer is not None:
            ingestion_dir = f"ingestion_program/{phase.name}/{task.key}"
            for f in task.ingestion.files:
                files[f"{ingestion_dir}/{f.path}"] = f.data
            entry["ingestion_program"] = ingestion_dir
            if task.ingestion.input_data:
                data_dir = f"input_data/{phase.name}/{task.key}"
                for f in task.ingestion.input_data:
                    files[f"{data_dir}/{f.path}"] = f.data
                entry["input_data"] = data_dir
        tasks.append(entry)
        indexes.append(entry["index"])
        scorers.append(scorer)
    return indexes, scorers


def _program_dir(
    competition: Competition,
    phase: Phase,
    files: dict[str, bytes],
    done: dict[Any, str],
    warnings: list[str],
) -> tuple[str, dict[str, Any]]:
    program = phase.scorer
    if program is None:
        columns, _ = competition.phase_columns(phase)
        spec = [
            {"key": c.key, "metric": c.metric.name, "params": c.metric.params_dict()}
            for c in columns
            if c.metric is not None
        ]
        for c in columns:
            if c.metric is not None and c.metric.name not in STANDALONE_METRICS:
                warnings.append(
                    f"column {c.key!r}: the metric {c.metric.name} has no numpy-only version; the exported scorer leaves it empty on Codabench"
                )
            if c.metric is None and c.computed is None:
                warnings.append(
                    f"column {c.key!r} has neither a metric nor a program; the exported scorer leaves it empty"
                )
        identity: Any = ("catalogue", json.dumps(spec, sort_keys=True))
        if identity not in done:
            path = f"scoring_program_{len(done) + 1}"
            done[identity] = path
            files[f"{path}/score.py"] = (
                resources.files("app.bundles.standalone").joinpath("score.py").read_bytes()
            )
            files[f"{path}/podium_scoring.json"] = json.dumps(
                {"columns": spec, "id_column": None}, indent=1
            ).encode()
            files[f"{path}/metadata.yaml"] = b"command: python3 $program/score.py $input $output\n"
        return done[identity], {"kind": "catalogue"}
    identity = (
        program.kind,
        id(program),
        phase.program_phase if program.kind == "evalai" else None,
    )
    if identity not in done:
        path = f"scoring_program_{len(done) + 1}"
        done[identity] = path
        if program.kind == "evalai":
            annotation = phase.answer_key[0].path if phase.answer_key else ""
            for f in program.files:
                files[f"{path}/evaluation_script/{f.path}"] = f.data
            files[f"{path}/score.py"] = EVALAI_WRAPPER.encode()
            files[f"{path}/podium_evalai.json"] = json.dumps(
                {
                    "package": "evaluation_script",
                    "annotation": annotation,
                    "phase_codename": phase.program_phase or phase.name,
                    "splits": {s.key: s.visibility for s in phase.splits},
                }
            ).encode()
            files[f"{path}/metadata.yaml"] = b"command: python3 $program/score.py $input $output\n"
        else:
            for f in program.files:
                files[f"{path}/{f.path}"] = f.data
    scorer: dict[str, Any] = {"kind": program.kind, "python2": program.python2}
    if program.kind == "evalai":
        scorer["package"] = "evaluation_script"
    return done[identity], scorer


__all__ = ["Export", "export_codabench"]
