"""What the three readers share: building a program from its folder, checking columns, and the
warnings about directions that look wrong (kept as the bundle says, but named)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.bundles.archive import Tree
from app.bundles.errors import BundleError
from app.bundles.fields import Fields
from app.bundles.legacy import rewrite_legacy_calls
from app.bundles.model import BundleFile, Column, Ingestion, Program, ProgramKind
from app.bundles.py2 import convert_files
from app.bundles.safe_yaml import load_yaml
from app.bundles.scan import scan_program

_LOWER_IS_BETTER = re.compile(
    r"(error|loss|diff|cost|mse|rmse|mae|mape|wer|cer|ter|distance|perplexity|latency|runtime|duration|"
    r"time|brier|deviance|regret|eer|fpr|fnr)",
    re.IGNORECASE,
)
_HIGHER_IS_BETTER = re.compile(
    r"(acc|accuracy|f1|auc|precision|recall|bleu|rouge|meteor|map|ndcg|iou|dice|r2|"
    r"kappa|correlation|pearson|spearman|score|psnr|ssim)",
    re.IGNORECASE,
)


def direction_warnings(columns: Sequence[Column], *, where: str) -> list[str]:
    out = []
    by_key = {c.key: c for c in columns}
    for column in columns:
        if column.computed is not None:
            inputs = {by_key[k].direction for k in column.computed.of if k in by_key}
            if inputs and inputs != {column.direction}:
                out.append(
                    f"{where}: computed column {column.key!r} ({column.title}) is sorted "
                    f"{'higher' if column.direction == 'maximize' else 'lower'} first but reads "
                    "columns sorted the other way; Podium requires them to agree"
                )
            continue
        if column.metric is not None:
            continue
        name = f"{column.title} {column.program_key}"
        lower = bool(_LOWER_IS_BETTER.search(name))
        higher = bool(_HIGHER_IS_BETTER.search(name))
        if column.direction == "maximize" and lower and not higher:
            out.append(
                f"{where}: column {column.key!r} ({column.title}) looks like an error or a cost but "
                "is sorted with higher values first, as the bundle says; check its direction"
            )
        elif column.direction == "minimize" and higher and not lower:
            out.append(
                f"{where}: column {column.key!r} ({column.title}) looks like a score but is sorted "
                "with lower values first, as the bundle says; check its direction"
            )
    return out


def check_columns(columns: Sequence[Column], ranking: str, *, file: str, field: str) -> None:
    keys = [c.key for c in columns]
    if not columns:
        raise BundleError("defines no column", file=file, field=field)
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise BundleError(f"column key {duplicates[0]!r} is used twice", file=file, field=field)
    if ranking not in keys:
        raise BundleError(f"the ranking column {ranking!r} is not a column", file=file, field=field)
    for column in columns:
        if column.computed is None:
            continue
        unknown = [k for k in column.computed.of if k not in keys or k == column.key]
        if unknown:
            raise BundleError(
                f"computed column {column.key!r} reads {unknown[0]!r}, which is not another column",
                file=file,
                field=field,
            )


def files_of(tree: Tree) -> tuple[BundleFile, ...]:
    return tuple(BundleFile(path=p, data=d) for p, d in sorted(tree.files.items()))


def coda_program(
    tree: Tree, *, kind: ProgramKind, field: str, docker_image: str | None, warnings: list[str]
) -> Program:
    """A Codabench / CodaLab scoring program: its files and the ``metadata`` command."""
    markers = ("metadata", "metadata.yaml", "metadata.yml")
    inner = tree.unwrap(markers)
    if inner is not tree:
        warnings.append(f"{field}: the program's files are inside a folder; that folder is used")
    name = next((m for m in markers if m in inner.files), None)
    if name is None:
        raise BundleError(
            "the scoring program has no metadata file (metadata or metadata.yaml with a command)",
            file=inner.origin,
            field=field,
        )
    meta = load_yaml(inner.files[name], file=f"{inner.origin}/{name}")
    command = meta.get("command") if isinstance(meta, dict) else None
    if not isinstance(command, str) or not command.strip():
        raise BundleError(
            "has no command: nothing would run", file=f"{inner.origin}/{name}", field="command"
        )
    files, python2 = as_python3(inner.files, f"the scoring program ({field})", warnings)
    _warn_unknown_variables(command, field, warnings)
    return Program(
        kind=kind,
        files=tuple(BundleFile(path=p, data=d) for p, d in sorted(files.items())),
        command=command.strip(),
        docker_image=docker_image,
        python2=python2,
    )


def as_python3(
    files: Mapping[str, bytes], label: str, warnings: list[str]
) -> tuple[Mapping[str, bytes], bool]:
    """A program's files, converted when they are Python 2 (app.bundles.py2) and with library
    calls today's libraries removed rewritten (app.bundles.legacy), and whether they are Python 2
    still (what could not be converted: refused at import with its file and line). The scan's
    warnings (modules the runtime lacks, ...) are of the files that will run."""
    report = scan_program(files, label=label)
    if report.is_python2:
        conversion = convert_files(files)
        again = scan_program(conversion.files, label=label)
        if conversion.converted and not conversion.failed and not again.is_python2:
            warnings.append(conversion.sentence(label))
            files, report = conversion.files, again
    legacy = rewrite_legacy_calls(files)
    warnings.extend(legacy.sentences(label))
    warnings.extend(report.warnings)
    return legacy.files, report.is_python2


def ingestion_members(
    tree: Tree,
    f: Fields,
    row: dict[str, Any],
    at: str,
    *,
    name: str,
    server: str,
    warnings: list[str],
) -> tuple[Tree | None, Tree | None] | None:
    """The ``ingestion_program`` and ``input_data`` a task (CodaLab: a phase) names, as found in
    the bundle (None for one it does not name); None, named in ``warnings``, when one names a
    dataset kept on the platform's ``server``, which no bundle carries."""
    members: dict[str, Tree | None] = {}
    for key in ("ingestion_program", "input_data"):
        members[key] = None
        if row.get(key) is None:
            continue
        path = f.text(row[key], f"{at}.{key}")
        if not tree.exists(path, field=f"{at}.{key}"):
            warnings.append(
                f"{name}: {key} {path!r} is not in the bundle (a dataset kept on a {server} "
                "server); its code submissions are not run, and the phase takes result "
                "submissions"
            )
            return None
        members[key] = tree.member(path, field=f"{at}.{key}")
    return members["ingestion_program"], members["input_data"]


def coda_ingestion(
    program: Tree | None,
    input_data: Tree | None,
    *,
    name: str,
    field: str,
    hide_log: bool,
    warnings: list[str],
) -> Ingestion | None:
    """A task's (CodaLab: a phase's) ingestion program and input data, kept to run code
    submissions as Codabench's compute worker does; None (named in ``warnings``) when nothing
    could run: no program, no command (Codabench fails every code submission then), Python 2."""
    if program is None:
        warnings.append(
            f"{name} has input data but no ingestion program: its input data is not imported, "
            "and the phase takes result submissions"
        )
        return None
    markers = ("metadata", "metadata.yaml", "metadata.yml")
    inner = program.unwrap(markers)
    meta_name = next((m for m in markers if m in inner.files), None)
    meta = (
        load_yaml(inner.files[meta_name], file=f"{inner.origin}/{meta_name}") if meta_name else None
    )
    command = meta.get("command") if isinstance(meta, dict) else None
    if not isinstance(command, str) or not command.strip():
        warnings.append(
            f"{name}: the ingestion program has no metadata command, so Codabench would fail "
            "every code submission; it is not imported, and the phase takes result submissions"
        )
        return None
    notes: list[str] = []
    converted, python2 = as_python3(inner.files, f"the ingestion program ({field})", notes)
    if python2:
        report = scan_program(converted, label=f"the ingestion program ({field})")
        where = report.python2[0] if report.python2 else "a Python 2 construct"
        warnings.append(
            f"{name}: the ingestion program is Python 2 ({where}); Podium runs Python 3 only, so "
            "it is not imported and the phase takes result submissions (convert it and import again)"
        )
        return None
    warnings.extend(notes)
    _warn_unknown_variables(command, field, warnings)
    data = files_of(input_data) if input_data is not None else ()
    warnings.append(
        f"{name}: code submissions (a zip holding a metadata file or Python code at its root) "
        "run its ingestion program in the jail with the input data at /app/input_data, then the "
        "scoring program on what it wrote; result submissions are scored directly, as Codabench "
        "does. Not run: a submission's own metadata command (Codabench starts it beside the "
        "ingestion program in the docker image, which is recorded, not used)"
    )
    return Ingestion(
        command=command.strip(),
        files=tuple(BundleFile(path=p, data=d) for p, d in sorted(converted.items())),
        input_data=data,
        hide_log=hide_log,
    )


def _warn_unknown_variables(command: str, field: str, warnings: list[str]) -> None:
    """A program's command naming a $variable neither platform substitutes runs as written."""
    unknown = sorted(set(re.findall(r"\$(\w+)", command)) - KNOWN_VARIABLES)
    if unknown:
        warnings.append(
            f"{field}: the command uses ${unknown[0]}, which neither Codabench nor CodaLab "
            "substitutes; it is passed as written"
        )


KNOWN_VARIABLES = frozenset(
    {
        "program",
        "input",
        "output",
        "hidden",
        "shared",
        "tmp",
        "predictions",
        "ingestion_program",
        "submission_program",
    }
)


def sort_key(value: object) -> tuple[int, str]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (0, f"{value:020d}")
    return (1, str(value))
