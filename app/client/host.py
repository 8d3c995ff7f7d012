"""The host commands of `podium competitions`: write a template, create a competition from a
YAML or JSON file, upload its answer key and data files, read its launch checklist, publish,
archive or delete it. All through the HTTP API with the saved `podium login`, as `podium submit`.

Every failure is one ``error:`` line on stderr naming the field (and, for a YAML file, its line),
exit status 2.
"""

import re
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from app.client.commands import _client, _fail, _progress, _table
from app.competitions.schemas import MAX_PHASES

competitions_app = typer.Typer(
    help="Competitions: list them, or (hosts) create, fill, publish, archive and delete them.",
    invoke_without_command=True,
)

Slug = Annotated[str, typer.Argument(help="The competition's slug.")]


@competitions_app.callback()
def _default(ctx: typer.Context) -> None:
    """`podium competitions` alone lists them, as it did before it had subcommands."""
    if ctx.invoked_subcommand is None:
        list_competitions()


@competitions_app.command("list")
def list_competitions() -> None:
    """List the competitions on the server (a draft only to its hosts)."""
    with _client() as client:
        rows = client.competitions()
    _table(
        [
            [c["slug"], c["title"], c["metric"]["name"], c["deadline"] or "-", c.get("status", "")]
            for c in rows
        ],
        ["SLUG", "TITLE", "METRIC", "DEADLINE", "STATUS"],
    )


# --- init -----------------------------------------------------------------------------------


def _metric(metric_name: str) -> Any:
    from app.evaluation.metric import CUSTOM, custom_metric
    from app.metrics import UnknownMetric, get_metric

    try:
        return custom_metric() if metric_name == CUSTOM else get_metric(metric_name)
    except UnknownMetric as exc:
        _fail(f"{exc}; or '{CUSTOM}' for your own score() file")


def _params_block(metric: Any, indent: str) -> str:
    # Each parameter at its default, with what it means; a metric without any takes {}.
    params = []
    for name, info in metric.params.model_fields.items():
        default = info.get_default(call_default_factory=True)
        note = f"  # {info.description}" if info.description else ""
        params.append(f"{indent}  {name}: {_yaml_value(default)}{note}")
    return f"{indent}params:\n" + "\n".join(params) if params else f"{indent}params: {{}}"


def template(metric_name: str, phases: int | None = None, today: date | None = None) -> str:
    """A commented competition body that `create` accepts once the placeholders are filled:
    one metric and one window, or (``phases``) a ``columns`` list and that many phases. Its
    dates start ``today`` (UTC), so that it makes a competition open now, not one years away."""
    metric = _metric(metric_name)
    first = today or datetime.now(UTC).date()
    if phases is not None:
        return _HEAD + _phased(metric, phases, first) + _TAIL
    return (
        _HEAD
        + f"""
metric:
  # {metric.name}: {metric.summary or metric.name} ({metric.direction})
  # Other metrics: the server's /metrics page, or custom for your own score() file (then
  # upload it on the Host tab's Answer keys page, or PUT /api/v1/competitions/SLUG/custom-metric).
  name: {metric.name}
{_params_block(metric, "  ")}

# Dates are UTC. A bare date as the start is 00:00:00 of that day; as a deadline 23:59:59.
# A time without a zone ({first + timedelta(days=30)}T18:00:00) is UTC; one with a zone is
# converted. Each date lies between 1970 and 2999.
start: {first}
# team_merge_deadline: {first + timedelta(days=23)}
deadline: {first + timedelta(days=30)}

daily_submission_limit: 5
# total_submission_limit: 100
final_selection_limit: 2
"""
        + _TAIL
    )


_HEAD = """\
# A Podium competition. Fill it in, then: podium competitions create competition.yaml
# It is created as a draft (only you and your co-hosts see it) until it passes the launch
# checklist: podium competitions checklist SLUG, then podium competitions publish SLUG.

# The address of the competition (/c/SLUG): lowercase letters, digits and '-'.
slug: my-competition
title: My competition
# Markdown, shown on the Overview tab. The checklist needs one.
description: |
  What the task is, what the data holds, how it is scored.
"""

_TAIL = """max_team_size: 5
# Participants see scores rounded to this many decimals.
score_decimals: 5
# The id column of the answer key (default: its first column).
# id_column: id
# exact, ladder or ladder_free (Blum & Hardt's Ladder).
public_board_mode: exact
score_intervals: true
# A benchmark never ends (no deadline, no phase end); publishing a new answer key version
# rescores every scored submission, and the board names each row's version. Its board may show
# every scored submission instead of each team's best.
benchmark: false
board_every_submission: false
# Who takes part: open (join at once), approval (you approve each request) or invite (the
# allow list, or your invitation links). The deny list applies in every mode.
registration: open
# allow: ["ada@example.org", "@uni.example.edu"]
# deny: ["@spam.example"]
# Markdown rules that participants accept to join, and again after each change.
# rules: |
#   One account per person. No sharing of code or data outside teams.
"""


def _phased(metric: Any, count: int, first: date) -> str:
    """The ``columns`` list (the chosen metric ranks) and ``count`` phases, a month each from
    ``first``: public ones count each team's best, a final blind one its chosen submissions."""
    lines = [
        "",
        "# The leaderboard's columns: the first ranks, the others break ties in order. Each is",
        "# a metric from the catalogue (the server's /metrics page) or computed from columns",
        "# before it (op: mean, sum, min or max). Every catalogue column reads the same file.",
        "columns:",
        f"  # {metric.name}: {metric.summary or metric.name} ({metric.direction})",
        f"  - key: {metric.name}",
        f"    title: {metric.name}",
        "    metric:",
        f"      name: {metric.name}",
        _params_block(metric, "      "),
        "    # precision: 4     # digits shown (ranked at full precision)",
        "    # hidden: false    # true: scored and shown to hosts only",
        "  # - key: second",
        "  #   metric: {name: ANOTHER_METRIC}",
        "  # - key: average",
        f"  #   computed: {{op: mean, of: [{metric.name}, second]}}",
        "",
        "# Dates are UTC. A bare date as a start is 00:00:00 of that day; as an end 23:59:59.",
        f"# A time without a zone ({first}T18:00:00) is UTC; one with a zone is converted.",
        "# Each phase has its own answer key: podium competitions key SLUG --phase NAME key.csv",
        "# Quotas left out take the competition's, below the phases.",
        "phases:",
    ]
    for i in range(count):
        start = first + timedelta(days=31 * i)
        end = start + timedelta(days=30)
        name = f"phase-{i + 1}" if count > 1 else "main"
        blind = i == count - 1 and count > 1
        lines += [
            f"  - name: {name}   # lowercase letters, digits and '-'",
            f"    title: {'Phase ' + str(i + 1) if count > 1 else 'Main'}",
            f"    start: {start.isoformat()}",
            f"    end: {end.isoformat()}",
            "    daily_submission_limit: 5",
            "    # total_submission_limit: 100",
            "    final_selection_limit: 2",
            "    # public (everyone sees the board), hidden (each team its own scores; hosts the",
            "    # board) or blind (nothing of any score until the phase ends)",
            f"    board: {'blind' if blind else 'public'}",
            "    # which submission stands: best, last, or chosen (the team's final selections)",
            f"    counts: {'chosen' if blind else 'best'}",
            "    # columns: [...]   # the phase's own columns (else the competition's)",
            "    # tasks: [...]     # several tasks, each its key, title and columns; then",
            "    #                  # columns: [{key: avg, computed: {op: average_rank, of:",
            "    #                  #   [TASK.COLUMN, ...]}}] (docs: Multi-task phases)",
            "    # entry_fields:     # what an uploader is asked with each submission",
            "    #   - {key: method_name, title: Method, type: text, required: true, "
            "on_board: true}",
        ]
    lines += [
        "",
        f"# team_merge_deadline: {first + timedelta(days=23)}   # within the phases' dates",
        "daily_submission_limit: 5",
        "final_selection_limit: 2",
        "",
    ]
    return "\n".join(lines)


def _yaml_value(value: Any) -> str:
    import json

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        # YAML reads 1e-15 as text: its floats need a dot before the exponent.
        text = repr(value)
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    return json.dumps(value) if isinstance(value, str | list | dict) else str(value)


@competitions_app.command()
def init(
    metric: Annotated[str, typer.Option(help="The metric, from the catalogue.")] = "roc_auc",
    phases: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_PHASES,
            help="Write a columns list and this many phases, each with its own dates, quotas, "
            "board and counting rule (without it: one metric, one window).",
        ),
    ] = None,
) -> None:
    """Print a commented template of a competition: podium competitions init > competition.yaml"""
    typer.echo(template(metric, phases), nl=False)


# --- create ---------------------------------------------------------------------------------


def _where(file: Path, line: int | None) -> str:
    return f"{file.name} line {line}" if line is not None else file.name


def _field_error(file: Path, body: Any, loc: tuple[str | int, ...], message: str) -> str:
    name = ".".join(str(p) for p in loc) or "the body"
    return f"{_where(file, body.line_of(loc))}: {name}: {message}"


def _fail_all(lines: list[str]) -> NoReturn:
    """Every problem on an ``error:`` line of its own, in the file's order; exit 2."""
    for line in lines[:-1]:
        sys.stderr.write("error: " + " ".join(line.split()) + "\n")
    _fail(lines[-1])


def load_body(file: Path) -> Any:
    """The file's body, checked by the API's own schema, or every error with its line (and
    exit 2)."""
    from pydantic import ValidationError

    from app.client.bodyfile import BodyFileError, read_body
    from app.competitions.schemas import CompetitionCreate
    from app.http.messages import sentence

    try:
        body = read_body(file)
    except BodyFileError as exc:
        _fail(f"{file.name}: {exc}")
    try:
        CompetitionCreate.model_validate(body.data)
    except ValidationError as exc:
        found = []
        for error in exc.errors():
            loc = tuple(p for p in error["loc"] if not str(p).startswith("function-"))
            found.append((body.line_of(loc) or 0, _field_error(file, body, loc, sentence(error))))
        _fail_all([line for _n, line in sorted(found, key=lambda f: f[0])])
    return body


def _loc(field: str) -> tuple[str | int, ...]:
    """``phases[1].end`` as the path the file's lines are indexed by: ("phases", 1, "end")."""
    parts: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", field):
        parts.append(int(index) if index else name)
    return tuple(parts)


def _lacking(checklist: dict[str, Any]) -> list[str]:
    return [f"{i['key']}: {i['detail']}" for i in checklist["items"] if not i["ok"]]


@competitions_app.command()
def create(
    file: Annotated[Path, typer.Argument(help="The competition, as YAML or JSON.")],
    publish: Annotated[
        bool, typer.Option("--publish", help="Publish it at once if the checklist passes.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Check the file as the server would (every rule, the metrics, the phases) "
            "and create nothing.",
        ),
    ] = False,
) -> None:
    """Create a competition from a file (a draft unless --publish), and say what it still lacks."""
    from app.client.http import ClientError

    body = load_body(file)
    data = {**body.data, "status": "draft"}
    with _client() as client:
        try:
            created = client.create_competition(data, dry_run=dry_run)
        except ClientError as exc:
            errors = exc.body.get("errors") or []
            if errors:
                _fail_all(
                    [
                        _field_error(
                            file,
                            body,
                            tuple(p for p in e.get("loc", []) if p != "body"),
                            e.get("msg", str(exc)),
                        )
                        for e in errors
                    ]
                )
            field = exc.body.get("field")
            if isinstance(field, str):
                # A service refusal names its field as the message does: phases[1].end.
                _fail(f"{_where(file, body.line_of(_loc(field)))}: {exc.body.get('detail', exc)}")
            raise
        slug = created["slug"]
        if dry_run:
            phases = ", ".join(p["name"] for p in created.get("phases", []))
            typer.echo(
                f"{file.name} is valid: it would create {slug} (phases: {phases}); "
                "nothing was created"
            )
            return
        typer.echo(f"created {slug} (draft): {client.url}/c/{slug}")
        checklist = client.checklist(slug)
        if publish and checklist["ready"]:
            client.publish(slug)
            typer.echo(f"published {slug}")
            return
    lacking = _lacking(checklist)
    if lacking:
        typer.echo("still needed before it can be published:")
        for line in lacking:
            typer.echo(f"  - {line}")
    if publish:
        _fail(f"{slug} stays a draft: {'; '.join(lacking)}")


# --- key, files -----------------------------------------------------------------------------


def _existing(file: Path) -> Path:
    if not file.is_file():
        _fail(f"file not found: {file}")
    return file


@competitions_app.command()
def key(
    slug: Slug,
    file: Annotated[Path, typer.Argument(help="The answer key (CSV).")],
    phase: Annotated[
        str | None, typer.Option(help="The phase it is for (needed when there are several).")
    ] = None,
) -> None:
    """Upload an answer key (a new version of the phase's key when it has one already)."""
    _existing(file)
    with _client() as client:
        with _progress(file.stat().st_size, "uploading") as progress:
            uploaded = client.upload_key(slug, file, progress, phase)
    live = "live" if uploaded.get("published_at") else "not yet published"
    typer.echo(
        f"answer key version {uploaded['version']} ({uploaded['n_rows']:,} rows: "
        f"{uploaded['n_public']:,} public, {uploaded['n_private']:,} private), {live}"
    )


Hidden = Annotated[
    bool,
    typer.Option(
        "--hidden",
        help="Never shown to participants: an input of code runs only (a code competition's "
        "test set).",
    ),
]
ReleaseWith = Annotated[
    str | None,
    typer.Option(
        "--release-with",
        metavar="PHASE",
        help="Held back until this phase starts, public from then on (a final phase's test "
        "set). Code runs read it at any time.",
    ),
]


def _release(hidden: bool, release_with: str | None) -> dict[str, str]:
    if hidden and release_with:
        _fail(
            "--hidden and --release-with contradict each other: a hidden file is never "
            "released to participants"
        )
    if release_with:
        return {"visibility": "public", "release_with": release_with}
    return {"visibility": "hidden" if hidden else "public"}


def _released(stored: dict[str, Any]) -> str:
    """When participants get a file, in words."""
    if stored.get("visibility") == "hidden":
        return "hidden: code runs only"
    if stored.get("release_with"):
        when = (stored.get("releases_at") or "")[:16].replace("T", " ")
        return f"public when phase {stored['release_with']} starts ({when} UTC)"
    return "public now"


@competitions_app.command()
def files(
    slug: Slug,
    paths: Annotated[list[Path], typer.Argument(help="Data files to publish.")],
    hidden: Hidden = False,
    release_with: ReleaseWith = None,
) -> None:
    """Upload data files (streamed; a progress bar for large ones): public now, hidden
    (--hidden), or public from a phase's start (--release-with PHASE)."""
    release = _release(hidden, release_with)
    for path in paths:
        _existing(path)
    with _client() as client:
        for path in paths:
            with _progress(path.stat().st_size, path.name) as progress:
                stored = client.upload_file(slug, path, progress, release)
            typer.echo(
                f"uploaded {stored['name']} ({stored['size_bytes']:,} bytes), {_released(stored)}"
            )


@competitions_app.command()
def release(
    slug: Slug,
    name: Annotated[str, typer.Argument(help="A data file already uploaded.")],
    hidden: Hidden = False,
    release_with: ReleaseWith = None,
) -> None:
    """Change when participants get a data file, without uploading it again: public now (no
    option), hidden (--hidden), or from a phase's start (--release-with PHASE)."""
    changes = _release(hidden, release_with)
    with _client() as client:
        stored = client.change_release(slug, name, changes)
    typer.echo(f"{stored['name']}: {_released(stored)}")


@competitions_app.command()
def metric(
    slug: Slug,
    file: Annotated[Path, typer.Argument(help="Your metric: a .py file with score().")],
    direction: Annotated[
        str, typer.Option(help="maximize (higher is better) or minimize.")
    ] = "maximize",
) -> None:
    """Upload the metric file of a competition made with metric name 'custom' (it is first run
    on the answer key in the jail; a file that cannot score it is refused, saying why)."""
    _existing(file)
    with _client() as client:
        client.upload_metric(slug, file, direction)
    typer.echo(f"metric file {file.name} stored for {slug} ({direction})")


@competitions_app.command()
def hosts(
    slug: Slug,
    add: Annotated[
        str | None, typer.Option(help="Make this user a co-host (the owner or an admin).")
    ] = None,
    remove: Annotated[
        str | None, typer.Option(help="Remove this co-host (never the owner).")
    ] = None,
) -> None:
    """List a competition's hosts, or add or remove a co-host."""
    with _client() as client:
        if add:
            client.add_host(slug, add)
            typer.echo(f"{add} is now a co-host of {slug}")
        if remove:
            client.remove_host(slug, remove)
            typer.echo(f"{remove} is no longer a host of {slug}")
        found = client.hosts(slug)
    _table([[h["user"], h["role"], h["added_at"][:19]] for h in found], ["USER", "ROLE", "ADDED"])


# --- changing a running competition ---------------------------------------------------------

# Each option says the API's rule beside it: the same ranges as app.competitions.schemas.
_DATE_HELP = (
    "UTC: a date (2026-12-31: a start at 00:00:00, an end at 23:59:59) or a date and time "
    "(2026-12-31T18:00:00, or with a zone: +01:00); between 1970 and 2999."
)


def _changes(**options: Any) -> dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}


@competitions_app.command()
def phase(
    slug: Slug,
    name: Annotated[str, typer.Argument(help="The phase's name, e.g. final.")],
    title: Annotated[str | None, typer.Option(help="Its title (1 to 200 characters).")] = None,
    start: Annotated[str | None, typer.Option(help="When it opens. " + _DATE_HELP)] = None,
    end: Annotated[
        str | None, typer.Option(help="When it closes; after its start. " + _DATE_HELP)
    ] = None,
    open_ended: Annotated[
        bool, typer.Option("--open-ended", help="No end: open until a host ends it.")
    ] = False,
    daily_limit: Annotated[
        int | None,
        typer.Option(help="Submissions a team may make a day (0 to 10,000; 0: none of its own)."),
    ] = None,
    total_limit: Annotated[
        int | None, typer.Option(help="Submissions a team may make in all (at least 1).")
    ] = None,
    selection_limit: Annotated[
        int | None, typer.Option(help="Final selections a team may choose (1 to 100).")
    ] = None,
    board: Annotated[
        str | None,
        typer.Option(
            help="public (everyone sees the board), hidden (each team its own scores) or "
            "blind (no score shown until the phase ends)."
        ),
    ] = None,
    counts: Annotated[
        str | None,
        typer.Option(help="Which submission stands: best, last or chosen (final selections)."),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(help="What it takes: predictions (a file) or code (run in the jail)."),
    ] = None,
    wall_seconds: Annotated[
        float | None, typer.Option(help="A code run's wall clock, seconds (above 0).")
    ] = None,
    memory_mb: Annotated[
        int | None, typer.Option(help="A code run's memory, MB (64 or more).")
    ] = None,
    cpus: Annotated[float | None, typer.Option(help="A code run's CPUs (above 0).")] = None,
    working_mb: Annotated[
        int | None, typer.Option(help="A code run's /kaggle/working, MB (1 or more).")
    ] = None,
) -> None:
    """Show a phase's settings, or change them (a deadline extension: --end 2026-12-31; the
    fixes an import's warnings name: --open-ended, --daily-limit 0). Code limits past the
    server's maxima are refused, naming each."""
    if open_ended and end is not None:
        _fail("give --end or --open-ended, not both")
    changes = _changes(
        title=title,
        start=start,
        end=end,
        daily_submission_limit=daily_limit,
        total_submission_limit=total_limit,
        final_selection_limit=selection_limit,
        board=board,
        counts=counts,
        submission_kind=kind,
    )
    if open_ended:
        changes["end"] = None
    limits = _changes(
        wall_seconds=wall_seconds, memory_mb=memory_mb, cpus=cpus, working_mb=working_mb
    )
    with _client() as client:
        if limits:
            # The limits given, the others as the phase has them (the defaults for a new one).
            current = [p for p in client.competition(slug)["phases"] if p["name"] == name]
            had = (current[0].get("code_limits") if current else None) or {}
            changes["code_limits"] = {**had, **limits}
        if changes:
            shown = client.update_phase(slug, name, changes)
        else:
            found = [p for p in client.competition(slug)["phases"] if p["name"] == name]
            if not found:
                _fail(f"'{slug}' has no phase '{name}'")
            shown = found[0]
    if changes:
        typer.echo(f"phase {name} of {slug} changed: {', '.join(sorted(changes))}")
        total = shown["total_submission_limit"]
        typer.echo(
            f"phase {shown['name']} of {slug}: {shown['start']} to "
            f"{shown['end'] or 'open-ended'} ({shown['state']}), "
            f"{shown['daily_submission_limit']} a day, "
            f"{'no limit' if total is None else total} in all"
        )
    _phase_lines(shown)


def _phase_lines(shown: dict[str, Any]) -> None:
    total = shown["total_submission_limit"]
    _table(
        [
            ["title", shown["title"]],
            ["state", shown["state"]],
            ["start", shown["start"]],
            ["end", shown["end"] or "open-ended"],
            ["daily limit", shown["daily_submission_limit"]],
            ["total limit", total if total is not None else "none"],
            ["selection limit", shown["final_selection_limit"]],
            ["board", shown["board"]],
            ["counts", shown["counts"]],
            ["takes", shown.get("submission_kind", "predictions")],
            *(
                [[f"code {k.replace('_', ' ')}", v] for k, v in shown["code_limits"].items()]
                if shown.get("code_limits")
                else []
            ),
        ],
        ["SETTING", "VALUE"],
    )


@competitions_app.command()
def settings(
    slug: Slug,
    title: Annotated[str | None, typer.Option(help="1 to 200 characters.")] = None,
    description_file: Annotated[
        Path | None, typer.Option(help="A Markdown file: the Overview tab's text.")
    ] = None,
    start: Annotated[str | None, typer.Option(help="One-phase competitions. " + _DATE_HELP)] = None,
    deadline: Annotated[
        str | None, typer.Option(help="One-phase competitions. " + _DATE_HELP)
    ] = None,
    team_merge_deadline: Annotated[
        str | None, typer.Option(help="Within the competition's dates. " + _DATE_HELP)
    ] = None,
    daily_limit: Annotated[
        int | None, typer.Option(help="One-phase competitions: 1 to 10,000 a day.")
    ] = None,
    total_limit: Annotated[int | None, typer.Option(help="One-phase competitions.")] = None,
    selection_limit: Annotated[
        int | None, typer.Option(help="One-phase competitions: 1 to 100.")
    ] = None,
    team_size: Annotated[int | None, typer.Option(help="1 to 1,000 members.")] = None,
    decimals: Annotated[int | None, typer.Option(help="Digits participants see (0 to 15).")] = None,
    board_mode: Annotated[
        str | None, typer.Option(help="exact, ladder or ladder_free (the public board).")
    ] = None,
    ladder_step: Annotated[
        float | None, typer.Option(help="A Ladder's step, between 0 and 1.")
    ] = None,
    intervals: Annotated[
        bool | None,
        typer.Option("--intervals/--no-intervals", help="Bootstrap intervals and rank bands."),
    ] = None,
    time_limit: Annotated[
        int | None, typer.Option(help="Seconds one scoring job may take (1 to 86,400).")
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option(help="Single-label classification: the labels, comma-separated."),
    ] = None,
    benchmark: Annotated[
        bool | None,
        typer.Option(
            "--benchmark/--no-benchmark",
            help="A benchmark never ends; a published key version rescores every scored "
            "submission.",
        ),
    ] = None,
    every_submission: Annotated[
        bool | None,
        typer.Option(
            "--every-submission/--team-best",
            help="A benchmark's board: every scored submission, or each team's best.",
        ),
    ] = None,
) -> None:
    """Change a competition's settings (a phase's own dates and quotas: podium competitions
    phase SLUG NAME)."""
    changes = _changes(
        title=title,
        description=description_file.read_text() if description_file else None,
        start=start,
        deadline=deadline,
        team_merge_deadline=team_merge_deadline,
        daily_submission_limit=daily_limit,
        total_submission_limit=total_limit,
        final_selection_limit=selection_limit,
        max_team_size=team_size,
        score_decimals=decimals,
        public_board_mode=board_mode,
        ladder_step=ladder_step,
        score_intervals=intervals,
        scoring_time_limit_seconds=time_limit,
        labels=[x.strip() for x in labels.split(",") if x.strip()] if labels else None,
        benchmark=benchmark,
        board_every_submission=every_submission,
    )
    if not changes:
        _fail("name at least one setting to change: podium competitions settings --help")
    with _client() as client:
        client.update_competition(slug, changes)
    typer.echo(f"{slug} changed: {', '.join(sorted(changes))}")


# --- checklist, publish, archive, delete ----------------------------------------------------


@competitions_app.command()
def checklist(slug: Slug) -> None:
    """Show the launch checklist."""
    with _client() as client:
        found = client.checklist(slug)
    _table(
        [["ok" if i["ok"] else "MISSING", i["key"], i["detail"]] for i in found["items"]],
        ["", "ITEM", "DETAIL"],
    )
    typer.echo("ready to publish" if found["ready"] else "not ready to publish")


@competitions_app.command("publish")
def publish_command(slug: Slug) -> None:
    """Publish a draft, once its checklist passes."""
    with _client() as client:
        published = client.publish(slug)
        typer.echo(f"published {slug}: {client.url}/c/{published['slug']}")


def _confirm(what: str, yes: bool) -> None:
    if not yes and not typer.confirm(what, err=True):
        _fail("cancelled")


@competitions_app.command()
def reproduce(
    slug: Slug,
    top: Annotated[int, typer.Option(help="How many ranked teams.", min=1, max=50)] = 3,
    phase: Annotated[
        str | None, typer.Option(help="The code phase (when several take code).")
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for every run, then exit 1 if any differs.")
    ] = False,
    report: Annotated[
        int | None, typer.Option(help="Show the report of this request instead of asking.")
    ] = None,
) -> None:
    """Reproduce the winners of a code phase: the top teams' counted submissions run again in
    the jail; the report says equal or not per team (each result is in the record)."""
    import time

    with _client() as client:
        found = (
            client.reproduction(slug, report)
            if report is not None
            else client.reproduce(slug, phase=phase, top=top)
        )
        while wait and any(r["outcome"] is None for r in found["runs"]):
            time.sleep(2)
            found = client.reproduction(slug, found["request"])
    typer.echo(f"reproduction {found['request']}:")
    _table(
        [
            [
                r["rank"],
                r["team"],
                r["submission_id"],
                r["outcome"] or r["status"],
                "; ".join(r["details"].get("differences") or []),
            ]
            for r in found["runs"]
        ],
        ["RANK", "TEAM", "SUBMISSION", "RESULT", "DIFFERENCES"],
    )
    if wait and any(r["outcome"] != "equal" for r in found["runs"]):
        raise typer.Exit(code=1)


@competitions_app.command()
def archive(
    slug: Slug, yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False
) -> None:
    """Archive a competition: read-only for good, its boards kept."""
    _confirm(f"Archive {slug}? It becomes read-only for good.", yes)
    with _client() as client:
        client.archive(slug)
    typer.echo(f"archived {slug}")


@competitions_app.command()
def delete(
    slug: Slug, yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False
) -> None:
    """Delete a competition nobody has submitted to, with its keys and files."""
    _confirm(f"Delete {slug} with its answer keys and data files?", yes)
    with _client() as client:
        client.delete_competition(slug)
    typer.echo(f"deleted {slug}")
