"""The ``podium:`` mapping of an exported Codabench bundle: what Codabench's keys cannot say, so that
Podium reads back the competition it wrote. Codabench ignores it.

Written by :func:`build_extension` (the exporter), read by :func:`apply_extension` (the Codabench
reader, over what the Codabench keys said).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.bundles.archive import Tree
from app.bundles.common import check_columns
from app.bundles.fields import Fields
from app.bundles.model import (
    Column,
    Competition,
    Computed,
    DataFile,
    EntryField,
    MetricRef,
    Phase,
    Program,
    Split,
    Task,
)

FORMAT = 1


def _field_dict(e: EntryField) -> dict[str, Any]:
    return {
        "key": e.key,
        "title": e.title,
        "type": e.type,
        "options": list(e.options),
        "required": e.required,
        "on_board": e.on_board,
    }


def _column_dict(c: Column) -> dict[str, Any]:
    return {
        "key": c.key,
        "title": c.title,
        "direction": c.direction,
        "precision": c.precision,
        "hidden": c.hidden,
        "source_key": c.source_key,
        "metric": None
        if c.metric is None
        else {"name": c.metric.name, "params": c.metric.params_dict()},
        "computed": None
        if c.computed is None
        else {"op": c.computed.op, "of": list(c.computed.of)},
    }


def _column_from(f: Fields, raw: Any, where: str) -> Column:
    spec = f.mapping(raw, where)
    metric, computed = spec.get("metric"), spec.get("computed")
    direction = spec.get("direction")
    if direction not in ("maximize", "minimize"):
        raise f.fail("must be maximize or minimize", f"{where}.direction")
    return Column(
        key=f.text(spec.get("key"), f"{where}.key", max_len=100),
        title=f.text(spec.get("title"), f"{where}.title", max_len=100),
        direction=direction,
        precision=f.integer(spec.get("precision", 2), f"{where}.precision"),
        hidden=f.boolean(spec.get("hidden"), f"{where}.hidden", default=False),
        source_key=spec.get("source_key"),
        metric=None
        if metric is None
        else MetricRef(
            name=f.text(metric.get("name"), f"{where}.metric.name"),
            params=tuple(
                sorted(f.mapping(metric.get("params") or {}, f"{where}.metric.params").items())
            ),
        ),
        computed=None
        if computed is None
        else Computed(
            op=computed["op"], of=tuple(f.sequence(computed.get("of"), f"{where}.computed.of"))
        ),
    )


def build_extension(
    competition: Competition,
    *,
    leaderboard_keys: list[str],
    scorers: list[dict[str, Any]],
    task_scorers: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """``leaderboard_keys``: the Podium key of each column written to ``leaderboards[0]``, in
    order; ``scorers``: per phase, how its program was written (see the exporter);
    ``task_scorers``: a multi-task phase's, per task, by phase name."""
    task_scorers = task_scorers or {}
    by_key = {c.key: c for c in competition.columns}
    for phase in competition.phases:
        for column in (*(phase.columns or ()), *(c for t in phase.tasks for c in t.columns)):
            by_key.setdefault(column.key, column)
    return {
        "format": FORMAT,
        "slug": competition.slug,
        "source_format": competition.source_format,
        "description_format": competition.description.format,
        "description_title": competition.description.title,
        "pages": [
            {"title": p.title, "kind": p.kind, "format": p.format} for p in competition.pages
        ],
        "logo": competition.logo is not None,
        "columns": [
            {
                "key": key,
                "source_key": by_key[key].source_key,
                "metric": None
                if by_key[key].metric is None
                else {
                    "name": by_key[key].metric.name,  # type: ignore[union-attr]
                    "params": by_key[key].metric.params_dict(),  # type: ignore[union-attr]
                },
            }
            for key in leaderboard_keys
        ],
        # As set on Podium (None: unset), which the Codabench keys cannot say.
        "precisions": {key: by_key[key].precision for key in leaderboard_keys},
        "competition_columns": [c.key for c in competition.columns],
        "ranking": competition.ranking,
        "phases": [
            {
                "name": p.name,
                "board": p.board,
                "counts": p.counts,
                "final_selection_limit": p.final_selection_limit,
                "daily_submission_limit": p.daily_submission_limit,
                "total_submission_limit": p.total_submission_limit,
                "entry_fields": [_field_dict(e) for e in p.entry_fields],
                "columns": None if p.columns is None else [_column_dict(c) for c in p.columns],
                # A multi-task phase's tasks as Podium has them: keys (its columns' prefixes),
                # columns (catalogue metrics too) and what scores each.
                "tasks": [
                    {
                        "key": t.key,
                        "title": t.title,
                        "columns": [_column_dict(c) for c in t.columns],
                        "scorer": task_scorer,
                    }
                    for t, task_scorer in zip(p.tasks, task_scorers.get(p.name, ()), strict=False)
                ],
                "ranking": p.ranking,
                "splits": [
                    {"key": s.key, "title": s.title, "visibility": s.visibility} for s in p.splits
                ],
                "program_phase": p.program_phase,
                "scorer": scorer,
                "migrate": None if p.migrate is None else list(p.migrate),
            }
            for p, scorer in zip(competition.phases, scorers, strict=True)
        ],
    }


def _tasks_from(f: Fields, phase: Phase, raw: Any, tree: Tree, at: str) -> tuple[Task, ...]:
    """The phase's tasks as Podium had them: their keys (the reader derives keys from names),
    columns (catalogue metrics too) and scorers (an exported catalogue task's program only
    serves Codabench)."""
    specs = f.sequence(raw or [], f"{at}.tasks")
    if not specs or len(specs) != len(phase.tasks):
        return phase.tasks
    tasks = []
    for i, (task, spec) in enumerate(zip(phase.tasks, specs, strict=True)):
        where = f"{at}.tasks[{i}]"
        spec = f.mapping(spec, where)
        columns = task.columns
        if spec.get("columns"):
            columns = tuple(
                _column_from(f, c, f"{where}.columns[{j}]")
                for j, c in enumerate(f.sequence(spec["columns"], f"{where}.columns"))
            )
            check_columns(columns, columns[0].key, file=f.file, field=f"{where}.columns")
        scorer = _scorer(task.scorer, spec.get("scorer"), tree, f, where)
        tasks.append(
            replace(
                task,
                key=f.text(spec.get("key"), f"{where}.key"),
                title=f.text(spec.get("title") or task.title, f"{where}.title"),
                columns=columns,
                scorer=scorer,
                ingestion=task.ingestion if scorer is not None else None,
            )
        )
    return tuple(tasks)


def apply_extension(
    competition: Competition, raw: Any, f: Fields, tree: Tree, warnings: list[str]
) -> Competition:
    ext = f.mapping(raw, "podium")
    if ext.get("format") != FORMAT:
        warnings.append(
            f"podium: format {ext.get('format')!r} is not known; the Codabench keys alone are read"
        )
        return competition
    specs = f.sequence(ext.get("columns"), "podium.columns")
    if len(specs) != len(competition.columns):
        raise f.fail("does not match leaderboards[0].columns", "podium.columns")
    renamed = {}
    # Older exports have no precisions: the Codabench keys' are kept.
    precisions = f.mapping(ext.get("precisions") or {}, "podium.precisions")
    columns: dict[str, Column] = {}
    for i, (column, spec) in enumerate(zip(competition.columns, specs, strict=True)):
        spec = f.mapping(spec, f"podium.columns[{i}]")
        key = f.text(spec.get("key"), f"podium.columns[{i}].key", max_len=100)
        renamed[column.key] = key
        metric = spec.get("metric")
        precision = column.precision
        if key in precisions:
            precision = f.integer(precisions[key], f"podium.precisions.{key}")
        columns[key] = replace(
            column,
            key=key,
            precision=precision,
            source_key=None if metric is not None or column.computed else spec.get("source_key"),
            metric=None
            if metric is None
            else MetricRef(
                name=f.text(metric.get("name"), f"podium.columns[{i}].metric.name"),
                params=tuple(
                    sorted(
                        f.mapping(
                            metric.get("params") or {}, f"podium.columns[{i}].metric.params"
                        ).items()
                    )
                ),
            ),
        )
    for key, column in list(columns.items()):
        if column.computed is not None:
            columns[key] = replace(
                column,
                computed=Computed(
                    op=column.computed.op, of=tuple(renamed[k] for k in column.computed.of)
                ),
            )

    def pick(keys: Any, where: str) -> tuple[Column, ...]:
        keys = f.sequence(keys, where)
        missing = [k for k in keys if k not in columns]
        if missing:
            raise f.fail(f"names the unknown column {missing[0]!r}", where)
        return tuple(columns[k] for k in keys)

    main = pick(ext.get("competition_columns"), "podium.competition_columns")
    ranking = f.text(ext.get("ranking"), "podium.ranking")
    check_columns(main, ranking, file=f.file, field="podium.competition_columns")
    phase_specs = f.sequence(ext.get("phases"), "podium.phases")
    if len(phase_specs) != len(competition.phases):
        raise f.fail("does not match phases", "podium.phases")
    phases = []
    for i, (phase, spec) in enumerate(zip(competition.phases, phase_specs, strict=True)):
        at = f"podium.phases[{i}]"
        spec = f.mapping(spec, at)
        own = None
        tasks = _tasks_from(f, phase, spec.get("tasks"), tree, at)
        if spec.get("columns") is not None:
            own = tuple(
                _column_from(f, c, f"{at}.columns[{j}]")
                for j, c in enumerate(f.sequence(spec["columns"], f"{at}.columns"))
            )
            # A multi-task phase's aggregates read its tasks' columns ("{task}.{column}").
            qualified = [
                Column(f"{t.key}.{c.key}", c.title, c.direction) for t in tasks for c in t.columns
            ]
            check_columns(
                (*own, *qualified),
                spec.get("ranking") or own[0].key,
                file=f.file,
                field=f"{at}.columns",
            )
        elif phase.tasks:
            own = phase.columns
        phases.append(
            replace(
                phase,
                name=f.text(spec.get("name"), f"{at}.name", max_len=63),
                board=spec.get("board", phase.board),
                counts=spec.get("counts", phase.counts),
                final_selection_limit=f.integer(
                    spec.get("final_selection_limit"), f"{at}.final_selection_limit", minimum=1
                ),
                daily_submission_limit=f.integer(
                    spec.get("daily_submission_limit"), f"{at}.daily_submission_limit"
                ),
                total_submission_limit=f.integer(
                    spec.get("total_submission_limit"), f"{at}.total_submission_limit"
                ),
                entry_fields=tuple(
                    EntryField(
                        key=e["key"],
                        title=e["title"],
                        type=e["type"],
                        options=tuple(e.get("options") or ()),
                        required=bool(e.get("required")),
                        on_board=bool(e.get("on_board")),
                    )
                    for e in f.sequence(spec.get("entry_fields") or [], f"{at}.entry_fields")
                ),
                columns=own,
                ranking=spec.get("ranking"),
                splits=tuple(
                    Split(key=s["key"], title=s["title"], visibility=s["visibility"])
                    for s in f.sequence(spec.get("splits") or [], f"{at}.splits")
                ),
                program_phase=spec.get("program_phase"),
                scorer=_scorer(phase.scorer, spec.get("scorer"), tree, f, at),
                migrate=(str(spec["migrate"][0]), str(spec["migrate"][1]))
                if spec.get("migrate")
                else (None if "migrate" in spec else phase.migrate),
                tasks=tasks,
            )
        )
    pages = competition.pages
    if "terms_position" in ext and pages and pages[-1].kind == "terms":
        # The reader puts the terms last; the exporter wrote where they were, or that Podium made
        # them up because Codabench requires terms.
        position = ext["terms_position"]
        terms, rest = pages[-1], list(pages[:-1])
        if isinstance(position, int) and 0 <= position <= len(rest):
            rest.insert(position, terms)
        pages = tuple(rest)
    page_specs = f.sequence(ext.get("pages") or [], "podium.pages")
    if len(page_specs) == len(pages):
        pages = tuple(
            replace(
                p,
                title=s.get("title", p.title),
                kind=s.get("kind", p.kind),
                format=s.get("format", p.format),
            )
            for p, s in zip(pages, page_specs, strict=True)
        )
    description = replace(
        competition.description,
        format=ext.get("description_format", "markdown"),
        title=ext.get("description_title", competition.description.title),
    )
    return replace(
        competition,
        slug=f.text(ext.get("slug"), "podium.slug", max_len=63),
        source_format=ext.get("source_format", "codabench"),
        description=description,
        pages=pages,
        columns=main,
        ranking=ranking,
        phases=tuple(phases),
        logo=competition.logo if ext.get("logo", True) else None,
        docker_image=ext.get("docker_image", competition.docker_image),
        data_files=_data_files(ext, f, tree, warnings),
        origin=_origin(ext.get("origin"), f),
        board_every_submission=f.boolean(
            ext.get("board_every_submission"), "podium.board_every_submission", default=False
        ),
    )


def _data_files(
    ext: dict[str, Any], f: Fields, tree: Tree, warnings: list[str]
) -> tuple[DataFile, ...]:
    """The data files an export carried, each with its visibility; one the bundle lacks (or
    whose bytes differ from its checksum) is named in ``warnings`` and left out."""
    out = []
    for i, raw in enumerate(f.sequence(ext.get("data_files") or [], "podium.data_files")):
        at = f"podium.data_files[{i}]"
        spec = f.mapping(raw, at)
        name = f.text(spec.get("name"), f"{at}.name", max_len=200)
        visibility = spec.get("visibility", "public")
        if visibility not in ("public", "hidden"):
            raise f.fail("must be public or hidden", f"{at}.visibility")
        data = tree.get(f.text(spec.get("file"), f"{at}.file"), field=f"{at}.file")
        if data is None:
            warnings.append(f"data file {name!r} is not in the bundle: upload it again")
            continue
        datafile = DataFile(name=name, data=data, visibility=visibility)
        if spec.get("sha256") not in (None, datafile.sha256):
            warnings.append(f"data file {name!r} does not match its checksum: upload it again")
            continue
        out.append(datafile)
    for missing in f.sequence(ext.get("missing") or [], "podium.missing"):
        warnings.append(f"the export could not carry {missing}")
    return tuple(out)


def _origin(raw: Any, f: Fields) -> dict[str, Any] | None:
    if raw is None:
        return None
    origin = f.mapping(raw, "podium.origin")
    # Plain text values only, bounded: it is shown to the hosts as it came.
    return {
        str(k)[:40]: str(v)[:300]
        for k, v in list(origin.items())[:10]
        if isinstance(v, str | int | float)
    }


def _scorer(native: Program | None, spec: Any, tree: Tree, f: Fields, at: str) -> Program | None:
    if spec is None or native is None:
        return native
    spec = f.mapping(spec, f"{at}.scorer")
    kind = spec.get("kind")
    if kind == "catalogue":
        return None  # Podium's own metrics; the exported program only serves Codabench
    if kind == "evalai":
        package = f.text(spec.get("package"), f"{at}.scorer.package")
        prefix = package.rstrip("/") + "/"
        files = tuple(
            replace(file, path=file.path[len(prefix) :])
            for file in native.files
            if file.path.startswith(prefix)
        )
        return Program(kind="evalai", files=files, python2=bool(spec.get("python2")))
    if kind in ("codabench", "codalab"):
        return replace(native, kind=kind, python2=bool(spec.get("python2")))
    raise f.fail(f"kind {kind!r} is not known", f"{at}.scorer.kind")


__all__ = ["apply_extension", "build_extension"]
