"""CodaLab's v1.5 bundle: ``competition.yaml`` without ``version: 2``, ``html`` pages, ``phases``
keyed by number with only a start date, zips inside the zip, and ``leaderboard.columns`` (usually
tied to their leaderboard through a YAML anchor). Rules from CodaLab's ``CompetitionDefBundle`` and
Codabench's ``unpackers/v1.py``.

A phase ends where the next begins, as it did on CodaLab (Codabench's converter ends it a day
earlier); the last one ends at ``end_date``, or never.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
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
from app.bundles.fields import Fields, slugify, unique_column_keys, unique_slugs
from app.bundles.html import page_from_bytes, sanitise_html
from app.bundles.model import (
    Board,
    BundleFile,
    Column,
    Competition,
    Computed,
    Counts,
    Ingestion,
    Page,
    PageKind,
    Phase,
    Program,
)

DEFAULT_DOCKER_IMAGE = "codalab/codalab-legacy:py37"
PAGE_KINDS: dict[str, PageKind] = {"terms": "terms", "evaluation": "evaluation", "data": "data"}


def read_codalab(tree: Tree, config: dict[str, Any]) -> Competition:
    file = f"{tree.origin}/competition.yaml"
    f = Fields(file)
    warnings: list[str] = []
    title = f.text(config.get("title"), "title", max_len=200)
    docker = config.get("competition_docker_image") or DEFAULT_DOCKER_IMAGE
    warnings.append(
        f"the docker image {docker!r} is recorded; Podium runs scoring and ingestion programs "
        "in its own Python runtime"
    )

    description, pages = _pages(tree, f, config)
    logo = None
    image = config.get("image")
    if isinstance(image, str) and tree.get(image, field="image") is not None:
        logo = BundleFile(path=image.rsplit("/", 1)[-1], data=tree.get(image) or b"")

    columns, ranking = _leaderboard(f, config, warnings)
    rows = f.mapping(config.get("phases"), "phases")
    if not rows:
        raise f.fail("must hold at least one phase", "phases")
    numbered = []
    for key, row in rows.items():
        at = f"phases.{key}"
        row = f.mapping(row, at)
        number = row.get("phasenumber", key)
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        numbered.append((sort_key(number), key, row))
    numbered.sort(key=lambda item: item[0])
    if any(r.get("is_parallel_parent") or r.get("parent_phasenumber") for _, _, r in numbered):
        # CodaLab 1.8: the first phase only groups the parallel ones (Codabench drops it too).
        warnings.append(
            "phases: CodaLab 1.8 parallel phases; the parent phase is dropped (as Codabench does) and the others are imported as phases open side by side"
        )
        numbered = numbered[1:]
    starts = [f.when(r.get("start_date"), f"phases.{k}.start_date") for _, k, r in numbered]
    final_end = f.when(config.get("end_date"), "end_date", required=False)
    force_last = f.boolean(
        config.get("force_submission_to_leaderboard"),
        "force_submission_to_leaderboard",
        default=False,
    )
    names = unique_slugs(
        [str(r.get("label") or f"phase {k}") for _, k, r in numbered], fallback="phase"
    )
    programs: dict[str, Program | None] = {}
    phases = []
    for n, (_, key, row) in enumerate(numbered):
        at = f"phases.{key}"
        label = f.text(row.get("label"), f"{at}.label", max_len=200)
        start = starts[n]
        # Open until the next phase starts (CodaLab); phases starting together (1.8's parallel
        # ones) run side by side until the next later start, as Codabench accepts them.
        later = [s for s in starts[n + 1 :] if s is not None and start is not None and s > start]
        end: datetime | None = min(later) if later else final_end
        if n + 1 < len(starts) and starts[n + 1] is not None and start is not None:
            if starts[n + 1] < start:  # type: ignore[operator]
                raise f.fail(
                    "is before the previous phase's start",
                    f"phases.{numbered[n + 1][1]}.start_date",
                )
            if starts[n + 1] == start:
                warnings.append(
                    f"phase {label!r} starts with the phase after it: both are open side by "
                    "side, and an upload names its phase"
                )
        if start is not None and end is not None and end <= start:
            # A stale end_date, left from an earlier edition of the competition: CodaLab kept
            # the last phase open regardless.
            warnings.append(
                f"end_date ({end:%Y-%m-%d}) is before the last phase starts ({start:%Y-%m-%d}); "
                "the last phase is left without an end"
            )
            end = None
        program_path = row.get("scoring_program")
        if program_path is None:
            raise f.fail(f"phase {label!r} has no scoring program", f"{at}.scoring_program")
        program_path = f.text(program_path, f"{at}.scoring_program")
        if _on_server(tree, program_path, f"{at}.scoring_program"):
            # The hackathons' bundles name datasets uploaded to their CodaLab server: CodaLab
            # imports them there; here the phase comes without them, named with the fix.
            warnings.append(
                f"phase {label!r}: its scoring program {program_path!r} is a dataset kept on a "
                "CodaLab server, which no bundle carries; the phase takes no submissions until "
                "the bundle is imported again with the program in it"
            )
            programs[program_path] = None
        elif program_path not in programs:
            programs[program_path] = coda_program(
                _member(tree, f, program_path, f"{at}.scoring_program"),
                kind="codalab",
                field=f"{at}.scoring_program",
                docker_image=docker,
                warnings=warnings,
            )
        answer_key: tuple[BundleFile, ...] = ()
        if row.get("reference_data") is None:
            warnings.append(
                f"phase {label!r} has no reference_data (CodaLab requires it); it has no answer key"
            )
        elif _on_server(tree, f.text(row["reference_data"], f"{at}.reference_data"), at):
            warnings.append(
                f"phase {label!r}: its reference data {row['reference_data']!r} is a dataset kept "
                "on a CodaLab server, which no bundle carries; upload its answer key (the phase's "
                "Answer keys tab) before it takes submissions"
            )
        else:
            answer_key = files_of(
                _member(
                    tree,
                    f,
                    f.text(row["reference_data"], f"{at}.reference_data"),
                    f"{at}.reference_data",
                )
            )
        ingestion = _ingestion(tree, f, row, at, label, warnings)
        migrate = None
        if row.get("auto_migration") and n > 0:  # forced off on the first phase (Codabench too)
            migrate = (names[n - 1], "selected")
            warnings.append(
                f"phase {label!r}: when it opens, each team's selected submissions of phase "
                f"'{names[n - 1]}' are scored on it (auto_migration), charged to no quota"
            )
        counts: Counts
        limit: int | None = None
        if f.boolean(
            row.get("force_best_submission_to_leaderboard"),
            f"{at}.force_best_submission_to_leaderboard",
            default=False,
        ):
            counts = "best"
        elif force_last:
            counts = "last"
        else:
            # CodaLab shows the one submission a participant put on the leaderboard.
            counts, limit = "chosen", 1
        board: Board = "public"
        if row.get("leaderboard_management_mode") == "hide_results":
            board = "hidden"
            warnings.append(
                f"phase {label!r} hides its results (hide_results) until its hosts reveal them: its board is hidden"
            )
        daily = f.integer(row.get("max_submissions_per_day", 999), f"{at}.max_submissions_per_day")
        # 0 stays 0: CodaLab refuses every upload then (web/models.py, "... == 0"), and so
        # does the phase here (app.bundles.as_came names it with its fix).
        phases.append(
            Phase(
                name=names[n],
                title=label,
                start=start,
                end=end,
                description=sanitise_html(
                    f.text(
                        row.get("description"), f"{at}.description", required=False, max_len=200_000
                    )
                ),
                daily_submission_limit=daily,
                total_submission_limit=f.integer(
                    row.get("max_submissions", 100), f"{at}.max_submissions"
                ),
                board=board,
                counts=counts,
                final_selection_limit=limit,
                answer_key=answer_key,
                scorer=programs[program_path],
                execution_time_limit=f.integer(
                    row.get("execution_time_limit"), f"{at}.execution_time_limit", minimum=1
                ),
                ingestion=ingestion,
                migrate=migrate,
            )
        )
    warnings.extend(direction_warnings(columns, where="leaderboard"))
    return Competition(
        title=title,
        slug=slugify(title, fallback="competition"),
        description=description,
        pages=pages,
        columns=columns,
        ranking=ranking,
        phases=tuple(phases),
        source_format="codalab",
        logo=logo,
        docker_image=docker,
        warnings=tuple(dict.fromkeys(warnings)),
    )


def _ingestion(
    tree: Tree, f: Fields, row: dict[str, Any], at: str, label: str, warnings: list[str]
) -> Ingestion | None:
    """The phase's ingestion program and input data (zips in the zip), run on code submissions
    as Codabench's compute worker runs a converted v1.5 phase's."""
    has_program = row.get("ingestion_program") is not None
    scoring_only = f.boolean(row.get("is_scoring_only"), f"{at}.is_scoring_only", default=True)
    if not has_program and row.get("input_data") is None:
        if not scoring_only:
            # The submission runs its own metadata command in the platform's image.
            warnings.append(
                f"phase {label!r} takes code submissions that run their own command "
                "(is_scoring_only: false, no ingestion program); Podium does not run those, "
                "and the phase takes result submissions"
            )
        return None
    if f.boolean(
        row.get("ingestion_program_only_during_scoring"),
        f"{at}.ingestion_program_only_during_scoring",
        default=False,
    ):
        warnings.append(
            f"phase {label!r} runs its ingestion program during scoring, beside the scoring "
            "program; Podium does not run that, so its code submissions are not imported and "
            "the phase takes result submissions"
        )
        return None
    found = ingestion_members(
        tree, f, row, at, name=f"phase {label!r}", server="CodaLab", warnings=warnings
    )
    if found is None:
        return None
    program, input_data = found
    hide = f.boolean(row.get("hide_output"), f"{at}.hide_output", default=False)
    return coda_ingestion(
        program,
        input_data,
        name=f"phase {label!r}",
        field=f"{at}.ingestion_program",
        hide_log=hide
        or f.boolean(
            row.get("hide_prediction_output"), f"{at}.hide_prediction_output", default=False
        ),
        warnings=warnings,
    )


def _on_server(tree: Tree, path: str, field: str) -> bool:
    """A member named by something other than a path of the bundle (a dataset's key on the
    CodaLab server it was made for)."""
    return not tree.exists(path, field=field) and not path.endswith(".zip")


def _member(tree: Tree, f: Fields, path: str, field: str) -> Tree:
    if not tree.exists(path, field=field) and not path.endswith(".zip"):
        raise f.fail(
            f"{path!r} names a dataset kept on a CodaLab server; a bundle cannot carry it", field
        )
    return tree.member(path, field=field)


def _pages(tree: Tree, f: Fields, config: dict[str, Any]) -> tuple[Page, tuple[Page, ...]]:
    html = f.mapping(config.get("html"), "html")
    inline = f.text(config.get("description"), "description", required=False, max_len=200_000)
    description: Page | None = None
    pages = []
    for name, path in html.items():
        at = f"html.{name}"
        path = f.text(path, at)
        data = tree.get(path, field=at)
        if data is None:
            raise f.fail(f"{path!r} is not in the bundle", at)
        title = str(name).replace("_", " ").capitalize()
        if str(name) == "overview" and description is None:
            description = page_from_bytes(data, title="Overview", path=path)
            continue
        pages.append(
            page_from_bytes(data, title=title, path=path, kind=PAGE_KINDS.get(str(name), "page"))
        )
    if description is None:
        description = Page(title="Overview", content=inline, format="markdown")
    elif inline:
        description = replace(
            description, content=f"<p>{_escape(inline)}</p>\n{description.content}"
        )
    return description, tuple(pages)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _leaderboard(
    f: Fields, config: dict[str, Any], warnings: list[str]
) -> tuple[tuple[Column, ...], str]:
    board = f.mapping(config.get("leaderboard"), "leaderboard")
    boards = f.mapping(board.get("leaderboards"), "leaderboard.leaderboards")
    labels = {}
    for key, value in boards.items():
        value = f.mapping(value, f"leaderboard.leaderboards.{key}")
        labels[str(value.get("label") or key).lower()] = key
    if len(boards) > 1:
        warnings.append(
            f"leaderboard: {len(boards)} leaderboards are merged into one set of columns"
        )
    raw = f.mapping(board.get("columns"), "leaderboard.columns")
    parsed = []
    for position, (source, column) in enumerate(raw.items()):
        at = f"leaderboard.columns.{source}"
        column = f.mapping(column, at)
        owner = column.get("leaderboard")
        if owner is None and len(labels) == 1:
            owner = next(iter(labels))  # one leaderboard: a column without one belongs to it
        owner_label = owner.get("label") if isinstance(owner, dict) else owner
        if owner_label is None or str(owner_label).lower() not in labels:
            raise f.fail(
                f"names no leaderboard of leaderboard.leaderboards ({owner_label!r})",
                f"{at}.leaderboard",
            )
        sort = str(column.get("sort") or "desc").lower()
        if sort not in ("asc", "desc"):
            raise f.fail(f"must be asc or desc, not {sort!r}", f"{at}.sort")
        rank = column.get("rank", 1)
        parsed.append((sort_key(rank), position, str(source), column, sort, at))
    if not parsed:
        raise f.fail("defines no column", "leaderboard.columns")
    parsed.sort(key=lambda p: (p[0], p[1]))
    keys = unique_column_keys([p[2] for p in parsed])
    by_source = {p[2]: k for p, k in zip(parsed, keys, strict=True)}
    columns = []
    ranking = keys[0]
    for (_, _, source, column, sort, at), key in zip(parsed, keys, strict=True):
        computed = None
        spec = column.get("computed")
        if spec is not None:
            spec = f.mapping(spec, f"{at}.computed")
            operation = str(spec.get("operation", "")).lower()
            fields = [s.strip() for s in str(spec.get("fields") or "").split(",") if s.strip()]
            missing = [s for s in fields if s not in by_source]
            if operation != "avg" or not fields or missing:
                warnings.append(
                    f"{at}: the computed column ({operation or 'no operation'} of {fields}) cannot be carried over and is not imported"
                )
                continue
            computed = Computed(op="mean", of=tuple(by_source[s] for s in fields))
            warnings.append(
                f"{at}: CodaLab's Avg averaged the participants' ranks in {fields}; Podium's computed "
                "column averages their values, so this column may order teams differently"
            )
            weights = spec.get("weights")
            if weights and len({w.strip() for w in str(weights).split(",")}) > 1:
                warnings.append(
                    f"{at}: the weights {weights!r} are not imported (Podium's mean is unweighted)"
                )
        precision = f.integer(column.get("numeric_format", 2), f"{at}.numeric_format")
        columns.append(
            Column(
                key=key,
                title=f.text(column.get("label") or source, f"{at}.label", max_len=100),
                direction="minimize" if sort == "asc" else "maximize",
                precision=2 if precision is None else precision,
                hidden=f.boolean(column.get("hidden"), f"{at}.hidden", default=False),
                source_key=None if computed else source,
                computed=computed,
            )
        )
        if column.get("selection_default") and f.boolean(
            column.get("selection_default"), f"{at}.selection_default", default=False
        ):
            ranking = key
    if ranking not in {c.key for c in columns}:
        ranking = columns[0].key
    check_columns(columns, ranking, file=f.file, field="leaderboard.columns")
    return tuple(columns), ranking
