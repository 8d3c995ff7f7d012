"""How an imported scoring program is run, without running it: the layout it expects and how its
output becomes a score row. The jail (``app.jail``) runs the command or the ``evaluate()`` call;
everything here is pure and tested on its own.

- EvalAI: the package's ``evaluate(annotation, submission, phase_codename, submission_metadata=…)``
  returns ``{"result": [{split_codename: {label: value}}, ...]}``; each split's values go to the
  columns whose program key is the label, under the split's visibility (public / private / hidden).
- Codabench / CodaLab: ``program/``, ``input/ref/`` (the answer key), ``input/res/`` (the
  submission, unzipped when it is a zip), ``output/`` and ``shared/``; the ``metadata`` command with
  ``$program``, ``$input``, ``$output``, ``$shared``... replaced by paths under the run's root
  (``/app`` by default, where real programs hard-code them). The program writes
  ``output/scores.json`` or ``output/scores.txt``; those values fill the phase's only board (public).
- A phase with an ingestion program: a code submission (:func:`is_code_submission`) is run first
  by the ingestion program in :func:`ingestion_layout` (``program/``, ``ingested_program/``,
  ``input_data/``, ``output/``; no reference data), and what it wrote is scored as above.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.bundles.archive import Limits, clean_path, unzip_submission
from app.bundles.errors import BundleError
from app.bundles.model import BundleFile, Column, Ingestion, Phase, Program, Split, Visibility

MAX_SCORES_BYTES = 1 << 20
ScoreCells = dict[str, dict[Visibility, float | None]]


class ProgramOutputError(BundleError):
    """The program ran but its output cannot be read as scores (the submission fails)."""

    code = "scorer_output"


@dataclass(frozen=True)
class ProgramScores:
    scores: ScoreCells  # column key -> visibility -> value (None: the program gave none)
    notes: tuple[str, ...] = ()  # what was ignored: unknown keys, unparsable lines
    extra: Any = None  # EvalAI's submission_result, shown to the participant


def to_number(value: Any) -> float | None:
    """A program's value as a float: numbers, numpy scalars, and text such as ``0.5``, ``nan``
    or ``np.float64(0.5)``; None when it is none of those."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        match = re.fullmatch(r"(?:np|numpy)\.\w+\((.*)\)|array\((.*)\)", text)
        if match:
            text = (match.group(1) or match.group(2) or "").strip()
        try:
            return float(text)
        except ValueError:
            return None
    try:
        return float(value)  # numpy scalars, Decimal, 0-d arrays
    except (TypeError, ValueError):
        return None


def fill_computed(columns: Sequence[Column], scores: ScoreCells) -> ScoreCells:
    """Computed columns from the others, per visibility; None when an input is missing."""
    for column in columns:
        if column.computed is None:
            continue
        cells: dict[Visibility, float | None] = {}
        visibilities = {v for k in column.computed.of for v in scores.get(k, {})}
        for vis in sorted(visibilities):
            values = [scores.get(k, {}).get(vis) for k in column.computed.of]
            if any(v is None for v in values):
                cells[vis] = None
                continue
            numbers = [v for v in values if v is not None]
            op = column.computed.op
            cells[vis] = (
                sum(numbers) / len(numbers)
                if op == "mean"
                else sum(numbers)
                if op == "sum"
                else min(numbers)
                if op == "min"
                else max(numbers)
            )
        scores[column.key] = cells
    return scores


# --- EvalAI ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalAICall:
    """What the jail needs to call ``evaluate()``: the package (imported as a package, so relative
    imports work), the annotation file name, and the arguments."""

    package: tuple[BundleFile, ...]
    annotation: BundleFile
    phase_codename: str
    submission_metadata: Mapping[str, Any]


def evalai_call(phase: Phase, *, submission_metadata: Mapping[str, Any]) -> EvalAICall:
    if phase.scorer is None or phase.scorer.kind != "evalai":
        raise ValueError(f"phase {phase.name!r} has no EvalAI evaluation script")
    if not phase.answer_key:
        raise ProgramOutputError(
            "the phase has no annotation file to score against", field="test_annotation_file"
        )
    return EvalAICall(
        package=phase.scorer.files,
        annotation=phase.answer_key[0],
        phase_codename=phase.program_phase or phase.name,
        submission_metadata=dict(submission_metadata),
    )


def map_evalai_result(
    output: Any, *, columns: Sequence[Column], splits: Sequence[Split]
) -> ProgramScores:
    """``evaluate()``'s return value as scores, split by split, per column (EvalAI's worker
    rules: ``result`` is required, each item holds exactly one split codename linked to the phase)."""
    if not isinstance(output, Mapping) or "result" not in output:
        raise ProgramOutputError("evaluate() returned no 'result'", field="result")
    result = output["result"]
    if not isinstance(result, list):
        raise ProgramOutputError(
            "'result' must be a list of {split: {label: value}}", field="result"
        )
    by_split = {s.key: s for s in splits}
    scores: ScoreCells = {c.key: {} for c in columns}
    notes: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(result):
        if not isinstance(item, Mapping) or len(item) != 1:
            raise ProgramOutputError("each item must hold exactly one split", field=f"result[{i}]")
        ((codename, values),) = item.items()
        split = by_split.get(codename)
        if split is None:
            raise ProgramOutputError(
                f"split {codename!r} is not a split of this phase", field=f"result[{i}]"
            )
        if codename in seen:
            raise ProgramOutputError(f"split {codename!r} is given twice", field=f"result[{i}]")
        seen.add(codename)
        if not isinstance(values, Mapping):
            raise ProgramOutputError("must map labels to numbers", field=f"result[{i}].{codename}")
        known = {c.program_key for c in columns}
        for label in values:
            if label not in known:
                notes.append(f"{codename}: {label!r} is not a column; ignored")
        for column in columns:
            if column.computed is not None:
                continue
            if (
                split.visibility in scores[column.key]
                and scores[column.key][split.visibility] is not None
            ):
                notes.append(
                    f"{codename}: a second {split.visibility} split; its {column.key} is ignored"
                )
                continue
            raw = values.get(column.program_key)
            number = to_number(raw)
            if raw is not None and number is None:
                notes.append(f"{codename}: {column.program_key} = {raw!r} is not a number")
            scores[column.key][split.visibility] = number
    return ProgramScores(
        scores=fill_computed(columns, scores),
        notes=tuple(notes),
        extra=output.get("submission_result"),
    )


# --- Codabench / CodaLab ------------------------------------------------------------------------


VARIABLES = {
    "program": "program",
    "input": "input",
    "output": "output",
    "shared": "shared",
    "hidden": "input/ref",
    "tmp": "output",
    "predictions": "input/res",
    "ingestion_program": "ingestion_program",
    "submission_program": "ingested_program",
}


# The ingestion step's: its program is /app/program, the participant's code
# /app/ingested_program; $input is the input data and $output, $predictions what it writes
# (Codabench's ``replace_legacy_metadata_command`` with kind "ingestion", not scoring).
INGESTION_VARIABLES = {
    **VARIABLES,
    "input": "input_data",
    "predictions": "output",
    "ingestion_program": "program",
}


def substitute(command: str, *, root: str = "/app", ingestion: bool = False) -> str:
    """The metadata command with its ``$variables`` as paths under ``root`` (unknown ones kept)."""
    variables = INGESTION_VARIABLES if ingestion else VARIABLES

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        target = variables.get(name)
        return match.group(0) if target is None else f"{root.rstrip('/')}/{target}"

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, command)


@dataclass(frozen=True)
class CodaLayout:
    files: dict[str, bytes]  # path under the run's root -> bytes
    dirs: tuple[str, ...]  # folders that must exist even when empty
    command: str  # substituted
    argv: tuple[str, ...] = field(default=())
    workdir: str = "program"


def coda_layout(
    program: Program,
    answer_key: Sequence[BundleFile],
    submission: bytes,
    *,
    submission_name: str,
    root: str = "/app",
    limits: Limits | None = None,
) -> CodaLayout:
    if program.command is None:
        raise ValueError("a Codabench / CodaLab program needs its metadata command")
    files: dict[str, bytes] = {}
    for f in program.files:
        files[f"program/{clean_path(f.path, origin='program')}"] = f.data
    for f in answer_key:
        files[f"input/ref/{clean_path(f.path, origin='reference data')}"] = f.data
    unzipped = unzip_submission(submission, limits=limits, name=submission_name)
    if unzipped is None:
        # The upload's own name, without any folder a participant put in front of it.
        name = submission_name.replace("\\", "/").rsplit("/", 1)[-1]
        if name in ("", ".", ".."):
            name = "submission"
        files[f"input/res/{name}"] = submission
    else:
        for path, data in unzipped.items():
            files[f"input/res/{path}"] = data
    # What Codabench's prediction step leaves beside a results submission (and CodaLab's before
    # it): v1.5-era scorers read elapsedTime there for a Duration column. No step ran here, so
    # it took no time; a submission's own file of that name is kept.
    files.setdefault("input/res/metadata", b"exitCode: 0\nelapsedTime: 0\n")
    command = substitute(program.command, root=root)
    return CodaLayout(
        files=files,
        dirs=("program", "input/ref", "input/res", "output", "shared"),
        command=command,
        argv=_argv(command),
    )


def _argv(command: str) -> tuple[str, ...]:
    """The command's words as a shell would split them; none when it cannot be split (an
    unbalanced quote)."""
    try:
        return tuple(shlex.split(command))
    except ValueError:
        return ()


CODE_MARKERS = ("metadata", "metadata.yaml", "metadata.yml")


def is_code_submission(unzipped: Mapping[str, bytes] | None) -> bool:
    """Whether a submission to a phase with an ingestion program is code, as Codabench's compute
    worker tells: a zip whose root holds a ``metadata`` file (its starting kits' code
    submissions carry one; a results zip never does, since the worker copies only a submission
    without one to the predictions) or Python code (``model.py`` alone, as other kits ship it).
    Anything else is results, scored directly."""
    if unzipped is None:
        return False
    root = [p for p in unzipped if "/" not in p]
    return any(p in CODE_MARKERS for p in root) or any(p.endswith(".py") for p in root)


def ingestion_layout(
    ingestion: Ingestion, code: Mapping[str, bytes], *, root: str = "/app"
) -> CodaLayout:
    """Codabench's prediction step: the ingestion program in ``program/`` (its working
    directory), the participant's code in ``ingested_program/``, the input data in
    ``input_data/``, an empty ``output/``. No ``input/``: the reference data is not there."""
    files: dict[str, bytes] = {}
    for f in ingestion.files:
        files[f"program/{clean_path(f.path, origin='ingestion program')}"] = f.data
    for f in ingestion.input_data:
        files[f"input_data/{clean_path(f.path, origin='input data')}"] = f.data
    for path, data in code.items():
        files[f"ingested_program/{path}"] = data
    command = substitute(ingestion.command, root=root, ingestion=True)
    return CodaLayout(
        files=files,
        dirs=("program", "ingested_program", "input_data", "output"),
        command=command,
        argv=_argv(command),
    )


def materialise(layout: CodaLayout, directory: Path) -> None:
    """Write the layout under ``directory`` (the folder the jail mounts as the root)."""
    for sub in layout.dirs:
        (directory / sub).mkdir(parents=True, exist_ok=True)
    for path, data in layout.files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def parse_scores(output: Mapping[str, bytes]) -> tuple[dict[str, float], tuple[str, ...]]:
    """``scores.json`` (preferred, as Codabench) or ``scores.txt`` read line by line as
    ``key: value`` (CodaLab's rule: split at the first colon, so ``correct:1`` works too)."""
    notes: list[str] = []
    if "scores.json" in output:
        data = _bounded(output["scores.json"], "scores.json")
        try:
            parsed = json.loads(data.decode("utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ProgramOutputError(f"is not JSON ({exc})", file="scores.json") from None
        if not isinstance(parsed, dict):
            raise ProgramOutputError("must be a JSON object of key: number", file="scores.json")
        scores = {}
        for key, value in parsed.items():
            number = to_number(value)
            if number is None:
                notes.append(f"scores.json: {key!r} = {value!r} is not a number; ignored")
            else:
                scores[str(key)] = number
        return scores, tuple(notes)
    if "scores.txt" in output:
        text = _bounded(output["scores.txt"], "scores.txt").decode("utf-8-sig", errors="replace")
        scores = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if ":" not in line:
                notes.append(f"scores.txt line {number}: no 'key: value'; ignored")
                continue
            key, value = line.split(":", 1)
            parsed_value = to_number(value)
            if parsed_value is None:
                notes.append(
                    f"scores.txt line {number}: {value.strip()!r} is not a number; ignored"
                )
                continue
            scores[key.strip()] = parsed_value
        return scores, tuple(notes)
    raise ProgramOutputError(
        "the scoring program wrote neither scores.json nor scores.txt", file="output"
    )


def _bounded(data: bytes, name: str) -> bytes:
    if len(data) > MAX_SCORES_BYTES:
        raise ProgramOutputError(f"is larger than {MAX_SCORES_BYTES} bytes", file=name)
    return data


def map_coda_scores(scores: Mapping[str, float], *, columns: Sequence[Column]) -> ProgramScores:
    """Scores by column: keys that match no column are dropped (as Codabench does) and named in
    notes; a column the program did not write is None (shown blank)."""
    known = {c.program_key for c in columns if c.computed is None}
    notes = tuple(f"{k!r} is not a column; ignored" for k in scores if k not in known)
    cells: ScoreCells = {}
    for column in columns:
        if column.computed is None:
            value = scores.get(column.program_key)
            cells[column.key] = {"public": value}
    return ProgramScores(scores=fill_computed(columns, cells), notes=notes)
