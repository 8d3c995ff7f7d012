"""EvalAI's challenge bundle: ``challenge_config.yaml``, HTML templates, annotation files and an
``evaluation_script`` (a zip, or a folder as in EvalAI-Starters) whose ``__init__`` exposes
``evaluate()``. Rules from EvalAI's ``challenge_config_utils.py`` and ``views.py``."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from typing import Any

from app.bundles.archive import Tree
from app.bundles.common import as_python3, check_columns, direction_warnings
from app.bundles.errors import BundleError
from app.bundles.fields import Fields, column_key, slugify, unique_column_keys, unique_slugs
from app.bundles.html import page_from_bytes, sanitise_html
from app.bundles.model import (
    Board,
    BundleFile,
    Column,
    Competition,
    Counts,
    EntryField,
    Page,
    PageKind,
    Phase,
    Program,
    Split,
    Visibility,
)
from app.bundles.safe_yaml import load_yaml

CONFIG_NAMES = ("challenge_config.yaml", "challenge_config.yml")
# ChallengePhaseSplit.VISIBILITY_OPTIONS: 1 host only, 2 host and the submitting team, 3 public.
VISIBILITY: dict[int, Visibility] = {3: "public", 2: "private", 1: "hidden"}
STANDARD_FIELDS = {
    "method_name": "Method name",
    "method_description": "Method description",
    "project_url": "Project URL",
    "publication_url": "Publication URL",
}


def find_config(tree: Tree) -> str | None:
    """The config's path: ``challenge_config.y*ml`` (the shallowest), else the bundle's only YAML
    file (EvalAI's upload path demands exactly one)."""
    named = sorted(
        (p for p in tree.files if p.rsplit("/", 1)[-1] in CONFIG_NAMES),
        key=lambda p: (p.count("/"), p),
    )
    if named:
        return named[0]
    yamls = [
        p
        for p in tree.files
        if p.endswith((".yaml", ".yml")) and not p.startswith((".", "github/"))
    ]
    if len(yamls) == 1 and _looks_like_evalai(tree.files[yamls[0]]):
        return yamls[0]
    return None


def _looks_like_evalai(data: bytes) -> bool:
    return b"challenge_phases" in data


def read_evalai(bundle: Tree, config_path: str) -> Competition:
    root_dir = config_path.rsplit("/", 1)[0] if "/" in config_path else ""
    tree = bundle.subtree(root_dir)
    file = f"{bundle.origin}/{config_path}"
    f = Fields(file)
    raw = load_yaml(bundle.files[config_path], file=file)
    config = f.mapping(raw, "(document)")
    warnings: list[str] = []

    title = f.text(config.get("title"), "title", max_len=200)
    description = _page(tree, f, config, "description", "Overview", "page", warnings, required=True)
    pages = [
        p
        for p in (
            _page(tree, f, config, "evaluation_details", "Evaluation", "evaluation", warnings),
            _page(
                tree, f, config, "submission_guidelines", "Submission guidelines", "page", warnings
            ),
            _page(
                tree, f, config, "terms_and_conditions", "Terms and conditions", "terms", warnings
            ),
        )
        if p is not None
    ]
    assert description is not None
    logo = _logo(tree, config.get("image"))

    for flag, what in (
        ("remote_evaluation", "evaluation runs on the host's own machines (remote_evaluation)"),
        ("is_docker_based", "participants submit docker images (is_docker_based)"),
        (
            "is_static_dataset_code_upload",
            "participants submit code (is_static_dataset_code_upload)",
        ),
    ):
        if f.boolean(config.get(flag), flag, default=False):
            warnings.append(
                f"{what}: this cannot be reproduced on Podium; the phases take result files scored "
                "by the evaluation script"
            )

    program = _program(tree, f, config, warnings)
    challenge_start = f.when(config.get("start_date"), "start_date", required=False)
    challenge_end = f.when(config.get("end_date"), "end_date", required=False)

    boards = _leaderboards(f, config)
    splits = _dataset_splits(f, config)
    phase_rows = f.sequence(config.get("challenge_phases"), "challenge_phases")
    if not phase_rows:
        raise f.fail("must list at least one phase", "challenge_phases")
    rows = _phase_splits(f, config, boards, splits)

    phases: list[Phase] = []
    phase_ids: set[Any] = set()
    codenames: set[str] = set()
    slugs = unique_slugs(
        [
            str(r.get("codename") or r.get("name") or "phase") if isinstance(r, dict) else "phase"
            for r in phase_rows
        ],
        fallback="phase",
    )
    per_phase_columns: list[tuple[tuple[Column, ...], str] | None] = []
    for i, row in enumerate(phase_rows):
        at = f"challenge_phases[{i}]"
        row = f.mapping(row, at)
        phase_id = row.get("id")
        if phase_id is None:
            raise f.fail("is required", f"{at}.id")
        if phase_id in phase_ids:
            raise f.fail(f"phase id {phase_id!r} is used twice", f"{at}.id")
        phase_ids.add(phase_id)
        name = f.text(row.get("name"), f"{at}.name", max_len=200)
        codename = f.text(row.get("codename"), f"{at}.codename", max_len=100)
        if codename in codenames:
            raise f.fail(f"codename {codename!r} is used twice", f"{at}.codename")
        codenames.add(codename)
        start = f.when(row.get("start_date", challenge_start), f"{at}.start_date")
        end = f.when(row.get("end_date", challenge_end), f"{at}.end_date")
        if start is not None and end is not None and end < start:
            raise f.fail("ends before it starts", f"{at}.end_date")
        my_rows = [r for r in rows if r["phase"] == phase_id]
        phase_splits = tuple(
            Split(key=r["split"]["codename"], title=r["split"]["name"], visibility=r["visibility"])
            for r in my_rows
        )
        columns = _columns(f, boards, my_rows, at, warnings) if my_rows else None
        if columns is None:
            warnings.append(
                f"phase {codename!r} has no leaderboard (no challenge_phase_splits row)"
            )
        per_phase_columns.append(columns)
        restricted = f.boolean(
            row.get("is_restricted_to_select_one_submission"),
            f"{at}.is_restricted_to_select_one_submission",
            default=False,
        )
        counts: Counts = "best"
        limit = None
        if restricted:
            counts, limit = "chosen", 1
        elif any(r["latest"] for r in my_rows):
            counts = "last"
        board: Board = (
            "public"
            if f.boolean(row.get("leaderboard_public"), f"{at}.leaderboard_public", default=False)
            else "hidden"
        )
        if not f.boolean(row.get("is_public"), f"{at}.is_public", default=False):
            warnings.append(
                f"phase {codename!r} is not public on EvalAI (is_public: false); it is imported as an ordinary phase"
            )
        if row.get("max_submissions_per_month") is not None:
            warnings.append(
                f"phase {codename!r}: the monthly quota (max_submissions_per_month) has no equivalent and is not imported"
            )
        image = row.get("environment_image")
        if image:
            warnings.append(
                f"phase {codename!r} names the docker image {image!r} (environment_image); it is recorded, not used"
            )
        answer_key = _annotation(tree, f, row, at, codename, warnings)
        phases.append(
            Phase(
                name=slugs[i],
                title=name,
                start=start,
                end=end,
                description=_phase_description(tree, row.get("description"), f"{at}.description"),
                daily_submission_limit=f.integer(
                    row.get("max_submissions_per_day"), f"{at}.max_submissions_per_day"
                ),
                total_submission_limit=f.integer(
                    row.get("max_submissions"), f"{at}.max_submissions"
                ),
                board=board,
                counts=counts,
                final_selection_limit=limit,
                entry_fields=_entry_fields(f, row, at, warnings),
                splits=phase_splits,
                answer_key=answer_key,
                scorer=program,
                program_phase=codename,
            )
        )

    first = next((c for c in per_phase_columns if c is not None), None)
    if first is None:
        raise f.fail("no phase has a leaderboard", "challenge_phase_splits")
    main_columns, ranking = first
    final_phases = []
    for phase, own in zip(phases, per_phase_columns, strict=True):
        if own is not None and own != first:
            phase = replace(phase, columns=own[0], ranking=own[1])
        final_phases.append(phase)
    checked: list[tuple[Column, ...]] = []
    for own in per_phase_columns:
        if own is not None and own[0] not in checked:
            checked.append(own[0])
            warnings.extend(direction_warnings(own[0], where="leaderboard"))
    return Competition(
        title=title,
        slug=slugify(title, fallback="competition"),
        description=description,
        pages=tuple(pages),
        columns=main_columns,
        ranking=ranking,
        phases=tuple(final_phases),
        source_format="evalai",
        logo=logo,
        warnings=tuple(dict.fromkeys(warnings)),
    )


def _page(
    tree: Tree,
    f: Fields,
    config: dict[str, Any],
    key: str,
    title: str,
    kind: PageKind,
    warnings: list[str],
    *,
    required: bool = False,
) -> Page | None:
    path = config.get(key)
    if path is None:
        if required:
            raise f.fail("is required (a path to an HTML file)", key)
        warnings.append(f"{key} is missing; no {title.lower()} page is imported")
        return None
    path = f.text(path, key)
    data = tree.get(path, field=key)
    if data is None:
        raise f.fail(f"{path!r} is not in the bundle", key)
    return page_from_bytes(data, title=title, path=path, kind=kind)


def _phase_description(tree: Tree, value: Any, field: str) -> str:
    if not isinstance(value, str):
        return ""
    data = tree.get(value, field=field) if value.endswith((".html", ".htm", ".md")) else None
    if data is None:
        return sanitise_html(value.strip()) if not value.endswith((".html", ".htm", ".md")) else ""
    return page_from_bytes(data, title="", path=value).content.strip()


def _logo(tree: Tree, value: Any) -> BundleFile | None:
    # EvalAI ignores a missing logo or one of another type (validate_challenge_logo).
    if not isinstance(value, str) or not value.lower().endswith((".png", ".jpg", ".jpeg")):
        return None
    data = tree.get(value.strip(), field="image")
    return BundleFile(path=value.strip().rsplit("/", 1)[-1], data=data) if data else None


def _program(tree: Tree, f: Fields, config: dict[str, Any], warnings: list[str]) -> Program:
    path = config.get("evaluation_script")
    if path is None:
        raise f.fail("is required (the evaluation script zip)", "evaluation_script")
    path = f.text(path, "evaluation_script").rstrip("/")
    script = tree.member(path, field="evaluation_script")
    inner = script.unwrap(["__init__.py"])
    if inner is not script:
        warnings.append(
            "evaluation_script: __init__.py is inside a folder of the zip (EvalAI would fail to "
            "import it); that folder is used as the package"
        )
    init = inner.files.get("__init__.py")
    if init is None:
        raise BundleError(
            "has no __init__.py at its root, so evaluate() cannot be imported",
            file=inner.origin,
            field="evaluation_script",
        )
    if not _exposes_evaluate(init):
        warnings.append(
            "evaluation_script: __init__.py neither defines nor imports evaluate(); scoring will fail unless it appears at run time"
        )
    files, python2 = as_python3(inner.files, "the evaluation script", warnings)
    return Program(
        kind="evalai",
        files=tuple(BundleFile(path=p, data=d) for p, d in sorted(files.items())),
        python2=python2,
    )


def _exposes_evaluate(source: bytes) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True  # the Python 2 scan says what is wrong
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "evaluate":
            return True
        if isinstance(node, ast.ImportFrom) and any(
            a.name in ("evaluate", "*") or a.asname == "evaluate" for a in node.names
        ):
            return True
        if isinstance(node, ast.Name) and node.id == "evaluate" and isinstance(node.ctx, ast.Store):
            return True
    return False


def _leaderboards(f: Fields, config: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    boards: dict[Any, dict[str, Any]] = {}
    for i, row in enumerate(f.sequence(config.get("leaderboard"), "leaderboard")):
        at = f"leaderboard[{i}]"
        row = f.mapping(row, at)
        if row.get("id") is None:
            raise f.fail("is required", f"{at}.id")
        schema = row.get("schema")
        if isinstance(schema, str):
            # Some configs give the schema as a JSON string.
            try:
                schema = json.loads(schema)
            except ValueError:
                raise f.fail("is not a mapping nor JSON", f"{at}.schema") from None
        schema = f.mapping(schema, f"{at}.schema")
        labels = f.sequence(schema.get("labels"), f"{at}.schema.labels")
        if not labels:
            raise f.fail("must name at least one label", f"{at}.schema.labels")
        labels = [
            f.text(label, f"{at}.schema.labels[{j}]", max_len=100) for j, label in enumerate(labels)
        ]
        if len(set(labels)) != len(labels):
            raise f.fail("holds a label twice", f"{at}.schema.labels")
        order_by = f.text(schema.get("default_order_by"), f"{at}.schema.default_order_by")
        if order_by not in labels:
            raise f.fail(
                f"{order_by!r} is not one of the labels {labels}", f"{at}.schema.default_order_by"
            )
        metadata = schema.get("metadata") or {}
        metadata = f.mapping(metadata, f"{at}.schema.metadata")
        boards[row["id"]] = {"labels": labels, "order_by": order_by, "metadata": metadata, "at": at}
    if not boards:
        raise f.fail("must define at least one leaderboard", "leaderboard")
    return boards


def _dataset_splits(f: Fields, config: dict[str, Any]) -> dict[Any, dict[str, str]]:
    splits: dict[Any, dict[str, str]] = {}
    codenames: set[str] = set()
    for i, row in enumerate(f.sequence(config.get("dataset_splits") or [], "dataset_splits")):
        at = f"dataset_splits[{i}]"
        row = f.mapping(row, at)
        codename = f.text(row.get("codename"), f"{at}.codename", max_len=100)
        if codename in codenames:
            raise f.fail(f"codename {codename!r} is used twice", f"{at}.codename")
        codenames.add(codename)
        splits[row.get("id")] = {
            "codename": codename,
            "name": f.text(row.get("name"), f"{at}.name", max_len=200),
        }
    return splits


def _phase_splits(
    f: Fields,
    config: dict[str, Any],
    boards: dict[Any, dict[str, Any]],
    splits: dict[Any, dict[str, str]],
) -> list[dict[str, Any]]:
    phase_ids = {r.get("id") for r in config.get("challenge_phases") or [] if isinstance(r, dict)}
    out = []
    seen = set()
    for i, row in enumerate(
        f.sequence(config.get("challenge_phase_splits") or [], "challenge_phase_splits")
    ):
        at = f"challenge_phase_splits[{i}]"
        row = f.mapping(row, at)
        for key, known in (
            ("challenge_phase_id", phase_ids),
            ("leaderboard_id", boards),
            ("dataset_split_id", splits),
        ):
            if row.get(key) not in known:
                raise f.fail(
                    f"{row.get(key)!r} names no {key.removesuffix('_id').replace('_', ' ')}",
                    f"{at}.{key}",
                )
        triple = (row["challenge_phase_id"], row["leaderboard_id"], row["dataset_split_id"])
        if triple in seen:
            raise f.fail("repeats another row's phase, leaderboard and split", at)
        seen.add(triple)
        visibility = f.integer(row.get("visibility", 3), f"{at}.visibility", minimum=1)
        if visibility not in VISIBILITY:
            raise f.fail(f"must be 1, 2 or 3, not {visibility}", f"{at}.visibility")
        out.append(
            {
                "phase": row["challenge_phase_id"],
                "board": boards[row["leaderboard_id"]],
                "split": splits[row["dataset_split_id"]],
                "visibility": VISIBILITY[visibility],
                # Older bundles omit these two; the model's defaults are 2 and True.
                "precision": f.integer(
                    row.get("leaderboard_decimal_precision", 2),
                    f"{at}.leaderboard_decimal_precision",
                ),
                "descending": f.boolean(
                    row.get("is_leaderboard_order_descending"),
                    f"{at}.is_leaderboard_order_descending",
                    default=True,
                ),
                "latest": f.boolean(
                    row.get("show_leaderboard_by_latest_submission"),
                    f"{at}.show_leaderboard_by_latest_submission",
                    default=False,
                ),
                "at": at,
            }
        )
    return out


def _columns(
    f: Fields,
    boards: dict[Any, dict[str, Any]],
    rows: list[dict[str, Any]],
    at: str,
    warnings: list[str],
) -> tuple[tuple[Column, ...], str]:
    # The public split's board gives the phase its columns; EvalAI phases nearly always use one
    # board for all their splits.
    main = next((r for r in rows if r["visibility"] == "public"), rows[0])
    board = main["board"]
    if any(r["board"] is not board for r in rows):
        warnings.append(
            f"{at}: its splits use different leaderboards; the columns of {board['at']} are imported"
        )
    keys = unique_column_keys(board["labels"])
    columns = []
    for label, key in zip(board["labels"], keys, strict=True):
        meta = board["metadata"].get(label) or {}
        ascending = meta.get("sort_ascending") if isinstance(meta, dict) else None
        if isinstance(ascending, bool):
            maximize = not ascending
        else:
            maximize = main["descending"]
        columns.append(
            Column(
                key=key,
                title=label,
                direction="maximize" if maximize else "minimize",
                precision=main["precision"] if main["precision"] is not None else 2,
                source_key=label,
            )
        )
    ranking = keys[board["labels"].index(board["order_by"])]
    check_columns(columns, ranking, file=f.file, field=f"{board['at']}.schema")
    return tuple(columns), ranking


def _entry_fields(
    f: Fields, row: dict[str, Any], at: str, warnings: list[str]
) -> tuple[EntryField, ...]:
    fields: list[EntryField] = []
    for i, item in enumerate(
        f.sequence(
            row.get("default_submission_meta_attributes") or [],
            f"{at}.default_submission_meta_attributes",
        )
    ):
        where = f"{at}.default_submission_meta_attributes[{i}]"
        item = f.mapping(item, where)
        name = f.text(item.get("name"), f"{where}.name")
        if name not in STANDARD_FIELDS:
            raise f.fail(f"must be one of {sorted(STANDARD_FIELDS)}, not {name!r}", f"{where}.name")
        visible = f.boolean(item.get("is_visible"), f"{where}.is_visible", default=False)
        fields.append(EntryField(key=name, title=STANDARD_FIELDS[name], on_board=visible))
    for i, item in enumerate(
        f.sequence(row.get("submission_meta_attributes") or [], f"{at}.submission_meta_attributes")
    ):
        where = f"{at}.submission_meta_attributes[{i}]"
        item = f.mapping(item, where)
        name = f.text(item.get("name"), f"{where}.name", max_len=100)
        kind = f.text(item.get("type"), f"{where}.type")
        options: tuple[str, ...] = ()
        if kind in ("radio", "checkbox"):
            opts = f.sequence(item.get("options"), f"{where}.options")
            options = tuple(
                f.text(o, f"{where}.options[{j}]", max_len=200) for j, o in enumerate(opts)
            )
            if not options:
                raise f.fail("must list the choices", f"{where}.options")
            if kind == "checkbox":
                warnings.append(
                    f"{where}: {name!r} lets a participant tick several options on EvalAI; it is imported as a single choice"
                )
        elif kind not in ("text", "boolean"):
            raise f.fail(f"must be text, boolean, radio or checkbox, not {kind!r}", f"{where}.type")
        fields.append(
            EntryField(
                key=column_key(name),
                title=name,
                type="choice" if options else ("boolean" if kind == "boolean" else "text"),
                options=options,
                required=f.boolean(item.get("required"), f"{where}.required", default=False),
            )
        )
    keys = [e.key for e in fields]
    if len(set(keys)) != len(keys):
        raise f.fail("two submission fields have the same name", f"{at}.submission_meta_attributes")
    return tuple(fields)


def _annotation(
    tree: Tree, f: Fields, row: dict[str, Any], at: str, codename: str, warnings: list[str]
) -> tuple[BundleFile, ...]:
    path = row.get("test_annotation_file")
    if path is None:
        warnings.append(
            f"phase {codename!r} has no test_annotation_file; upload its answer key before it opens"
        )
        return ()
    path = f.text(path, f"{at}.test_annotation_file")
    data = tree.get(path, field=f"{at}.test_annotation_file")
    if data is None:
        raise f.fail(f"{path!r} is not in the bundle", f"{at}.test_annotation_file")
    return (BundleFile(path=path.rsplit("/", 1)[-1], data=data),)
