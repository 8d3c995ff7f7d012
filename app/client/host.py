"""The host commands of `podium competitions`: write a template, create a competition from a
YAML or JSON file, upload its answer key and data files, read its launch checklist, publish,
archive or delete it. All through the HTTP API with the saved `podium login`, as `podium submit`.

Every failure is one ``error:`` line on stderr naming the field (and, for a YAML file, its line),
exit status 2.
"""

import re
from pathlib import Path
from typing import Annotated, Any

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


def template(metric_name: str, phases: int | None = None) -> str:
    """A commented competition body that `create` accepts once the placeholders are filled:
    one metric and one window, or (``phases``) a ``columns`` list and that many phases."""
    metric = _metric(metric_name)
    if phases is not None:
        return _HEAD + _phased(metric, phases) + _TAIL
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
# A time without a zone (2030-01-31T18:00:00) is UTC; one with a zone is converted.
start: 2030-01-01
# team_merge_deadline: 2030-01-24
deadline: 2030-01-31

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
# Who takes part: open (join at once), approval (you approve each request) or invite (the
# allow list, or your invitation links). The deny list applies in every mode.
registration: open
# allow: ["ada@example.org", "@uni.example.edu"]
# deny: ["@spam.example"]
# Markdown rules that participants accept to join, and again after each change.
# rules: |
#   One account per person. No sharing of code or data outside teams.
"""


def _phased(metric: Any, count: int) -> str:
    """The ``columns`` list (the chosen metric ranks) and ``count`` phases, a month each."""
    from datetime import date, timedelta

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
        "# A time without a zone (2030-01-31T18:00:00) is UTC; one with a zone is converted.",
        "# Each phase has its own answer key: podium competitions key SLUG --phase NAME key.csv",
        "# Quotas left out take the competition's, below the phases.",
        "phases:",
    ]
    first = date(2030, 1, 1)
    for i in range(count):
        start = first + timedelta(days=31 * i)
        end = start + timedelta(days=30)
        name = f"phase-{i + 1}" if count > 1 else "main"
        last = i == count - 1
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
            f"    board: {'blind' if last and count > 1 else 'public'}",
            "    # which submission stands: best, last, or chosen (the team's final selections)",
            "    counts: chosen",
            "    # columns: [...]   # the phase's own columns (else the competition's)",
            "    # entry_fields:     # what an uploader is asked with each submission",
            "    #   - {key: method_name, title: Method, type: text, required: true, "
            "on_board: true}",
        ]
    lines += [
        "",
        "# team_merge_deadline: 2030-01-24   # within the phases' dates",
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


def load_body(file: Path) -> Any:
    """The file's body, checked by the API's own schema, or one error line (and exit 2)."""
    from pydantic import ValidationError

    from app.client.bodyfile import BodyFileError, read_body
    from app.competitions.schemas import CompetitionCreate

    try:
        body = read_body(file)
    except BodyFileError as exc:
        _fail(f"{file.name}: {exc}")
    try:
        CompetitionCreate.model_validate(body.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(p for p in first["loc"] if not str(p).startswith("function-"))
        _fail(_field_error(file, body, loc, first["msg"]))
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
) -> None:
    """Create a competition from a file (a draft unless --publish), and say what it still lacks."""
    from app.client.http import ClientError

    body = load_body(file)
    data = {**body.data, "status": "draft"}
    with _client() as client:
        try:
            created = client.create_competition(data)
        except ClientError as exc:
            errors = exc.body.get("errors") or []
            if errors:
                loc = tuple(p for p in errors[0].get("loc", []) if p != "body")
                _fail(_field_error(file, body, loc, errors[0].get("msg", str(exc))))
            field = exc.body.get("field")
            if isinstance(field, str):
                # A service refusal names its field as the message does: phases[1].end.
                _fail(f"{_where(file, body.line_of(_loc(field)))}: {exc.body.get('detail', exc)}")
            raise
        slug = created["slug"]
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


@competitions_app.command()
def files(
    slug: Slug,
    paths: Annotated[list[Path], typer.Argument(help="Data files to publish.")],
) -> None:
    """Upload data files for participants (streamed; a progress bar for large ones)."""
    for path in paths:
        _existing(path)
    with _client() as client:
        for path in paths:
            with _progress(path.stat().st_size, path.name) as progress:
                stored = client.upload_file(slug, path, progress)
            typer.echo(f"uploaded {stored['name']} ({stored['size_bytes']:,} bytes)")


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
