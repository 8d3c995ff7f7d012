"""Codabench's v2 bundle: ``competition.yaml`` with ``version: 2``, tasks (scoring program and
reference data), phases, ``leaderboards[0]`` columns. Rules from Codabench's ``unpackers/v2.py``.

A bundle Podium exported carries a ``podium:`` mapping beside the Codabench keys (Codabench
ignores unknown keys) with what Codabench cannot say: catalogue metrics, board and counting rules,
splits. It is read last, over what the Codabench keys said.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.bundles.archive import Tree
from app.bundles.common import (
    check_columns,
    coda_ingestion,
    coda_program,
    direction_warnings,
    files_of,
    ingestion_members,
    sort_key,
)
from app.bundles.extension import apply_extension
from app.bundles.fields import Fields, column_key, slugify, unique_column_keys, unique_slugs
from app.bundles.html import page_from_bytes, sanitise_html
from app.bundles.model import (
    NO_DAILY_LIMIT,
    BundleFile,
    Column,
    Competition,
    Computed,
    ComputedOp,
    Counts,
    EntryField,
    FieldType,
    Ingestion,
    Page,
    PageKind,
    Phase,
    Program,
    Task,
)

# The aggregate a multi-task phase ranks by (app.scoring.columns.AVERAGE_RANK).
AVERAGE_RANK = "average_rank"

DEFAULT_DOCKER_IMAGE = "codalab/codalab-legacy:py37"
COMPUTATIONS: dict[str, ComputedOp] = {
    "avg": "mean",
    "mean": "mean",
    "sum": "sum",
    "min": "min",
    "max": "max",
}
# Codabench's submission rules; the two "Add" rules let a participant pick what the board shows.
RULES: dict[str, tuple[Counts, int | None]] = {
    "Add": ("chosen", 1),
    "Add_And_Delete": ("chosen", 1),
    "Add_And_Delete_Multiple": ("chosen", None),
    "Force_Last": ("last", None),
    "Force_Latest_Multiple": ("last", None),
    "Force_Best": ("best", None),
}


def read_codabench(tree: Tree, config: dict[str, Any]) -> Competition:
    file = f"{tree.origin}/competition.yaml"
    f = Fields(file)
    warnings: list[str] = []
    if "version" not in config:
        warnings.append(
            "competition.yaml has no version; it is read as Codabench v2 (tasks, a list of phases)"
        )
    title = f.text(config.get("title"), "title", max_len=200)
    docker = config.get("docker_image") or DEFAULT_DOCKER_IMAGE
    warnings.append(
        f"the docker image {docker!r} is recorded; Podium runs scoring and ingestion programs "
        "in its own Python runtime"
    )
    for key, what in (
        ("queue", "a private compute queue (queue)"),
        ("solutions", "example solutions (solutions)"),
    ):
        if config.get(key):
            warnings.append(f"{what} are not imported")

    description = Page(
        title="Overview",
        content=_description(f, config.get("description")),
        format="markdown",
    )
    pages = []
    for i, page in enumerate(f.sequence(config.get("pages") or [], "pages")):
        at = f"pages[{i}]"
        page = f.mapping(page, at)
        path = f.text(page.get("file"), f"{at}.file")
        data = tree.get(path, field=f"{at}.file")
        if data is None:
            raise f.fail(f"{path!r} is not in the bundle", f"{at}.file")
        if not data.strip():
            raise f.fail(f"{path!r} is empty", f"{at}.file")
        page_title = f.text(page.get("title"), f"{at}.title", required=False, max_len=200) or path
        lowered = page_title.lower()
        kind: PageKind = (
            "evaluation"
            if "evaluation" in lowered
            else "data"
            if lowered in ("data", "dataset", "datasets")
            else "page"
        )
        pages.append(page_from_bytes(data, title=page_title, path=path, kind=kind))
    terms_path = config.get("terms")
    if terms_path is None:
        warnings.append("terms is missing (Codabench requires it); no terms page is imported")
    else:
        terms_path = f.text(terms_path, "terms")
        data = tree.get(terms_path, field="terms")
        if data is None:
            raise f.fail(f"{terms_path!r} is not in the bundle", "terms")
        pages.append(page_from_bytes(data, title="Terms", path=terms_path, kind="terms"))
    logo = None
    if (
        isinstance(config.get("image"), str)
        and tree.get(config["image"], field="image") is not None
    ):
        logo = BundleFile(
            path=config["image"].rsplit("/", 1)[-1], data=tree.get(config["image"]) or b""
        )

    tasks = _tasks(tree, f, config, docker, warnings)
    entry_fields = _fact_sheet(f, config.get("fact_sheet"))
    columns, ranking, counts, limit, hidden_board = _leaderboard(f, config, warnings)

    rows = f.sequence(config.get("phases"), "phases")
    if not rows:
        raise f.fail("must list at least one phase", "phases")
    indexed = sorted(
        enumerate(rows),
        key=lambda pair: sort_key(pair[1].get("index", 0) if isinstance(pair[1], dict) else 0),
    )
    names = unique_slugs(
        [str(r.get("name") or "phase") if isinstance(r, dict) else "phase" for _, r in indexed],
        fallback="phase",
    )
    phases = []
    for n, (i, row) in enumerate(indexed):
        at = f"phases[{i}]"
        row = f.mapping(row, at)
        name = f.text(row.get("name"), f"{at}.name", max_len=200)
        start = f.when(row.get("start"), f"{at}.start")
        last = n == len(indexed) - 1
        end = f.when(row.get("end"), f"{at}.end", required=False)
        if end is None and not last:
            warnings.append(
                f"phase {name!r} has no end but a phase follows it (Codabench refuses this); it is left open-ended"
            )
        if start is not None and end is not None and end <= start:
            raise f.fail("is not after the phase's start", f"{at}.end")
        task_ids = f.sequence(row.get("tasks"), f"{at}.tasks")
        if not task_ids:
            raise f.fail("must name at least one task", f"{at}.tasks")
        for t in task_ids:
            if t not in tasks:
                raise f.fail(f"task {t!r} is not defined in tasks", f"{at}.tasks")
        hide = f.boolean(row.get("hide_output"), f"{at}.hide_output", default=False)
        hide = hide or f.boolean(
            row.get("hide_prediction_output"), f"{at}.hide_prediction_output", default=False
        )
        phase_tasks: tuple[Task, ...] = ()
        if len(task_ids) > 1:
            # Codabench scores such a submission once per task (a child submission each) and
            # shows every task's columns: a multi-task phase, ranked by the average rank.
            phase_tasks = _phase_tasks(
                config, tasks, task_ids, columns, ranking, name, warnings, hide
            )
        first_program, answer_key, ingestion = tasks[task_ids[0]]
        program: Program | None = first_program
        if phase_tasks:
            program, answer_key, ingestion = None, (), None
        if ingestion is not None:
            ingestion = replace(ingestion, hide_log=hide)
        migrate = None
        if row.get("auto_migrate_to_this_phase") and n > 0:
            # Codabench carries what stands on the previous phase's board (apply_phase_migration).
            migrate = (names[n - 1], "selected")
            warnings.append(
                f"phase {name!r}: when it opens, each team's selected submissions of phase "
                f"'{names[n - 1]}' are scored on it (auto_migrate_to_this_phase), charged to no quota"
            )
        limit_s = f.integer(
            row.get("execution_time_limit"), f"{at}.execution_time_limit", minimum=1
        )
        limit_ms = f.integer(
            row.get("execution_time_limit_ms"), f"{at}.execution_time_limit_ms", minimum=1
        )
        if limit_s is None and limit_ms is not None:
            limit_s = max(1, limit_ms // 1000)
        daily = f.integer(row.get("max_submissions_per_day", 5), f"{at}.max_submissions_per_day")
        total = f.integer(row.get("max_submissions", 100), f"{at}.max_submissions")
        # Codabench counts only a truthy quota (Phase.can_user_make_submissions): 0 or null is
        # no limit, as its iris example's final phase has it.
        if not daily:
            warnings.append(
                f"phase {name!r}: max_submissions_per_day {daily} is no daily limit on Codabench; "
                f"imported as {NO_DAILY_LIMIT:,} a day (Podium's most); set the phase's daily "
                "limit to change it"
            )
            daily = NO_DAILY_LIMIT
        total = total or None
        phases.append(
            Phase(
                name=names[n],
                title=name,
                start=start,
                end=end,
                description=sanitise_html(
                    f.text(
                        row.get("description"), f"{at}.description", required=False, max_len=200_000
                    )
                ),
                daily_submission_limit=daily,
                total_submission_limit=total,
                board="hidden" if hidden_board else "public",
                counts=counts,
                final_selection_limit=limit,
                entry_fields=entry_fields,
                answer_key=answer_key,
                scorer=program,
                execution_time_limit=limit_s,
                ingestion=ingestion,
                migrate=migrate,
                tasks=phase_tasks,
                columns=(_average_rank(phase_tasks),) if phase_tasks else None,
                ranking=AVERAGE_RANK if phase_tasks else None,
            )
        )
    warnings.extend(direction_warnings(columns, where="leaderboards[0]"))
    competition = Competition(
        title=title,
        slug=slugify(title, fallback="competition"),
        description=description,
        pages=tuple(pages),
        columns=columns,
        ranking=ranking,
        phases=tuple(phases),
        source_format="codabench",
        logo=logo,
        docker_image=docker,
        warnings=(),
        registration="open" if _auto_approve(f, config) else "approval",
        benchmark=_benchmark(config, phases, warnings),
    )
    extension = config.get("podium")
    if extension is not None:
        competition = apply_extension(competition, extension, f, tree, warnings)
    return replace(competition, warnings=tuple(dict.fromkeys(warnings)))


def _benchmark(config: dict[str, Any], phases: list[Phase], warnings: list[str]) -> bool:
    """``competition_type: benchmark``: a Podium benchmark when its phases never end (Podium's
    rule); one whose phases end is imported as a competition, and the warning says why."""
    if config.get("competition_type") != "benchmark":
        return False
    ended = [p.name for p in phases if p.end is not None]
    if ended:
        warnings.append(
            "competition_type is 'benchmark', but phase(s) "
            + ", ".join(repr(n) for n in ended)
            + " end, and a Podium benchmark never ends: imported as a competition; clear "
            "their ends, then turn benchmark mode on (Host → Settings, or podium competitions "
            "settings SLUG --benchmark)"
        )
        return False
    return True


def _auto_approve(f: Fields, config: dict[str, Any]) -> bool:
    """``registration_auto_approve``: false, the hosts approve each entrant. Left out, the
    competition is open, Podium's default (Codabench's own default is false; a bundle that does
    not say is taken as not asking for approval)."""
    value = config.get("registration_auto_approve", True)
    if not isinstance(value, bool):
        raise f.fail("must be true or false", "registration_auto_approve")
    return value


def _description(f: Fields, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise f.fail("must be text", "description")
    if len(value) > 200_000:
        raise f.fail("is longer than 200000 characters", "description")
    return value


def _phase_tasks(
    config: dict[str, Any],
    tasks: dict[Any, TaskFiles],
    task_ids: list[Any],
    columns: tuple[Column, ...],
    ranking: str,
    phase: str,
    warnings: list[str],
    hide_log: bool,
) -> tuple[Task, ...]:
    """A multi-task phase's tasks: each with the leaderboard's columns (Codabench shows them
    once per task), its own program and reference data."""
    titles = [_task_name(config, t) for t in task_ids]
    # Task keys prefix their columns' keys: short (a column key holds 64 characters).
    keys = unique_slugs([t[:24] for t in titles], fallback="task")
    ordered = (
        *[c for c in columns if c.key == ranking],
        *[c for c in columns if c.key != ranking],
    )
    out = []
    for key, title, index in zip(keys, titles, task_ids, strict=True):
        program, answer_key, ingestion = tasks[index]
        if ingestion is not None:
            ingestion = replace(ingestion, hide_log=hide_log)
        out.append(Task(key, title, ordered, answer_key, program, ingestion))
    warnings.append(
        f"phase {phase!r} runs {len(task_ids)} tasks ({', '.join(repr(t) for t in titles)}): "
        "each is scored by its own program on its own reference data and shown side by side; "
        f"the phase ranks by the average of each task's rank on column {ranking!r}"
    )
    return tuple(out)


def _average_rank(tasks: tuple[Task, ...]) -> Column:
    return Column(
        key=AVERAGE_RANK,
        title="Average rank",
        direction="minimize",
        precision=2,
        computed=Computed(
            op="average_rank", of=tuple(f"{t.key}.{t.columns[0].key}" for t in tasks)
        ),
    )


def _task_name(config: dict[str, Any], index: Any) -> str:
    for row in config.get("tasks") or ():
        if isinstance(row, dict) and row.get("index") == index:
            return str(row.get("name") or index)
    return str(index)


TaskFiles = tuple[Program, tuple[BundleFile, ...], Ingestion | None]


def _tasks(
    tree: Tree, f: Fields, config: dict[str, Any], docker: str, warnings: list[str]
) -> dict[Any, TaskFiles]:
    rows = f.sequence(config.get("tasks"), "tasks")
    tasks: dict[Any, TaskFiles] = {}
    programs: dict[str, Program] = {}
    for i, row in enumerate(rows):
        at = f"tasks[{i}]"
        row = f.mapping(row, at)
        if "index" not in row:
            raise f.fail("is required", f"{at}.index")
        index = row["index"]
        if index in tasks:
            raise f.fail(f"task index {index!r} is used twice", f"{at}.index")
        name = row.get("name") or index
        if "key" in row and "scoring_program" not in row:
            raise f.fail(
                f"refers to a task kept on a Codabench server ({row['key']!r}); a bundle cannot carry it",
                f"{at}.key",
            )
        path = row.get("scoring_program")
        if path is None:
            raise f.fail(f"task {name!r} has no scoring program", f"{at}.scoring_program")
        path = f.text(path, f"{at}.scoring_program")
        if path not in programs:
            programs[path] = coda_program(
                tree.member(path, field=f"{at}.scoring_program"),
                kind="codabench",
                field=f"{at}.scoring_program",
                docker_image=docker,
                warnings=warnings,
            )
        reference: tuple[BundleFile, ...] = ()
        if row.get("reference_data") is not None:
            ref = f.text(row["reference_data"], f"{at}.reference_data")
            reference = files_of(tree.member(ref, field=f"{at}.reference_data"))
        else:
            warnings.append(f"task {name!r} has no reference_data; its phase has no answer key")
        tasks[index] = (programs[path], reference, _ingestion(tree, f, row, at, name, warnings))
    return tasks


def _ingestion(
    tree: Tree, f: Fields, row: dict[str, Any], at: str, name: Any, warnings: list[str]
) -> Ingestion | None:
    """The task's ingestion program and input data, as Codabench's compute worker runs them on
    a code submission (its prediction step)."""
    if row.get("ingestion_program") is None and row.get("input_data") is None:
        return None
    if f.boolean(
        row.get("ingestion_only_during_scoring"),
        f"{at}.ingestion_only_during_scoring",
        default=False,
    ):
        # Codabench then runs it beside the scoring program, both seeing the reference data
        # and talking through /app/shared: a scoring step of two programs, not run here.
        warnings.append(
            f"task {name!r} runs its ingestion program during scoring "
            "(ingestion_only_during_scoring), beside the scoring program; Podium does not run "
            "that, so its ingestion program is not imported and its phase takes result "
            "submissions"
        )
        return None
    found = ingestion_members(
        tree, f, row, at, name=f"task {name!r}", server="Codabench", warnings=warnings
    )
    if found is None:
        return None
    program, input_data = found
    return coda_ingestion(
        program,
        input_data,
        name=f"task {name!r}",
        field=f"{at}.ingestion_program",
        hide_log=False,
        warnings=warnings,
    )


def _leaderboard(
    f: Fields, config: dict[str, Any], warnings: list[str]
) -> tuple[tuple[Column, ...], str, Counts, int | None, bool]:
    key = "leaderboards" if "leaderboards" in config else "leaderboard"
    boards = config.get(key)
    if boards is None:
        raise f.fail("is required", "leaderboards")
    if isinstance(boards, dict):
        boards = [boards]
    boards = f.sequence(boards, key)
    if not boards:
        raise f.fail("must define a leaderboard", key)
    if len(boards) > 1:
        warnings.append(
            f"{key}: Codabench uses only the first leaderboard; the other {len(boards) - 1} are not imported"
        )
    at = f"{key}[0]"
    board = f.mapping(boards[0], at)
    rule = board.get("submission_rule", "Add")
    if rule not in RULES:
        raise f.fail(f"must be one of {sorted(RULES)}, not {rule!r}", f"{at}.submission_rule")
    counts, limit = RULES[rule]
    rows = f.sequence(board.get("columns"), f"{at}.columns")
    parsed = []
    indexes: set[Any] = set()
    for i, row in enumerate(rows):
        where = f"{at}.columns[{i}]"
        row = f.mapping(row, where)
        source = f.text(row.get("key"), f"{where}.key", max_len=100)
        index = row.get("index", i)
        if index in indexes:
            raise f.fail(f"index {index!r} is used twice", f"{where}.index")
        indexes.add(index)
        sorting = str(row.get("sorting") or "desc").lower()
        if sorting not in ("asc", "desc"):
            raise f.fail(f"must be asc or desc, not {sorting!r}", f"{where}.sorting")
        parsed.append((index, i, row, source, sorting, where))
    parsed.sort(key=lambda p: (sort_key(p[0]), p[1]))
    keys = unique_column_keys([p[3] for p in parsed])
    by_index = {p[0]: k for p, k in zip(parsed, keys, strict=True)}
    columns = []
    for (index, _, row, source, sorting, where), ckey in zip(parsed, keys, strict=True):
        computed = None
        if row.get("computation") is not None:
            op = COMPUTATIONS.get(str(row["computation"]).lower())
            if op is None:
                raise f.fail(
                    f"must be one of {sorted(COMPUTATIONS)}, not {row['computation']!r}",
                    f"{where}.computation",
                )
            refs = f.sequence(row.get("computation_indexes"), f"{where}.computation_indexes")
            missing = [r for r in refs if r not in by_index or r == index]
            if not refs or missing:
                raise f.fail(
                    f"must name other columns' indexes, not {refs!r}",
                    f"{where}.computation_indexes",
                )
            computed = Computed(op=op, of=tuple(by_index[r] for r in refs))
        columns.append(
            Column(
                key=ckey,
                title=f.text(row.get("title") or source, f"{where}.title", max_len=100),
                direction="minimize" if sorting == "asc" else "maximize",
                precision=f.integer(row.get("precision", 2), f"{where}.precision") or 0,
                hidden=f.boolean(row.get("hidden"), f"{where}.hidden", default=False),
                source_key=None if computed else source,
                computed=computed,
            )
        )
    primary = f.integer(board.get("primary_index", 0), f"{at}.primary_index")
    positions = [p[0] for p in parsed]
    if primary in by_index:
        ranking = by_index[primary]
    elif primary is not None and primary < len(columns) and primary not in positions:
        ranking = columns[primary].key
    else:
        raise f.fail(f"names no column ({primary!r})", f"{at}.primary_index")
    check_columns(columns, ranking, file=f.file, field=f"{at}.columns")
    return (
        tuple(columns),
        ranking,
        counts,
        limit,
        f.boolean(board.get("hidden"), f"{at}.hidden", default=False),
    )


def _fact_sheet(f: Fields, sheet: Any) -> tuple[EntryField, ...]:
    if not sheet:
        return ()
    sheet = f.mapping(sheet, "fact_sheet")
    out = []
    for name, item in sheet.items():
        at = f"fact_sheet.{name}"
        item = f.mapping(item, at)
        kind = str(item.get("type", "text")).lower()
        selection = item.get("selection")
        field_type: FieldType
        options: tuple[str, ...]
        if kind == "checkbox":
            field_type, options = "boolean", ()
        elif kind == "select":
            opts = f.sequence(selection, f"{at}.selection")
            # Codabench shows each choice as its text: [True, False] is "True" and "False"; an
            # empty choice is its "nothing chosen yet" (competition_v2_multi_task_fact_sheet).
            texts = [str(o) if isinstance(o, bool | int | float) else o for o in opts]
            field_type, options = (
                "choice",
                tuple(f.text(o, f"{at}.selection", max_len=200) for o in texts if o != ""),
            )
            if not options:
                raise f.fail("must list the choices", f"{at}.selection")
        elif kind == "text":
            field_type, options = "text", ()
        else:
            raise f.fail(f"must be checkbox, text or select, not {kind!r}", f"{at}.type")
        out.append(
            EntryField(
                key=column_key(str(item.get("key") or name)),
                title=f.text(item.get("title") or name, f"{at}.title", max_len=200),
                type=field_type,
                options=options,
                required=f.boolean(item.get("is_required"), f"{at}.is_required", default=False),
                on_board=f.boolean(
                    item.get("is_on_leaderboard"), f"{at}.is_on_leaderboard", default=False
                ),
            )
        )
    if len({e.key for e in out}) != len(out):
        raise f.fail("two fields have the same key", "fact_sheet")
    return tuple(out)


def is_codabench_v2(config: dict[str, Any]) -> bool:
    return str(config.get("version", "1")).strip() in ("2", "2.0")


__all__ = ["is_codabench_v2", "read_codabench"]
