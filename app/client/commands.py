"""The participant commands of `podium`: log in to a server, list competitions, download data,
submit (and follow a submission until it is scored), see submissions and boards, select.

Every failure is one ``error:`` line on stderr and exit status 2, as for `podium score`.
"""

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

if TYPE_CHECKING:
    from app.client.http import PodiumClient, Progress

PROGRESS_FROM_BYTES = 1 << 20  # smaller transfers finish before a bar would help


def _fail(message: str) -> NoReturn:
    sys.stderr.write("error: " + " ".join(str(message).split()) + "\n")
    raise typer.Exit(code=2)


@contextmanager
def _client() -> Iterator["PodiumClient"]:
    from app.client.config import current_login
    from app.client.http import ClientError, PodiumClient

    try:
        login = current_login()
        with PodiumClient(login.url, login.token) as client:
            yield client
    except ClientError as exc:
        _fail(str(exc))


@contextmanager
def _progress(total: int, label: str) -> Iterator["Progress"]:
    if total < PROGRESS_FROM_BYTES:
        yield lambda _n: None
        return
    with typer.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


def _table(rows: list[list[Any]], header: list[str]) -> None:
    cells = [header] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        typer.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())


def login(
    url: Annotated[str, typer.Argument(help="The Podium server, e.g. https://podium.example.org")],
    token: Annotated[
        str | None, typer.Option(help="Your API token (asked for when not given).")
    ] = None,
) -> None:
    """Check URL and an API token, then keep both in your config file (mode 0600)."""
    from app.client.config import Login, save_login
    from app.client.http import ClientError, PodiumClient

    if not url.startswith(("http://", "https://")):
        _fail(f"the URL must start with http:// or https://, not '{url}'")
    if token is None:
        token = typer.prompt("API token", hide_input=True)
    try:
        with PodiumClient(url, token) as client:
            me = client.me()
    except ClientError as exc:
        _fail(f"login failed: {exc}")
    path = save_login(Login(url=url.rstrip("/"), token=token))
    typer.echo(f"logged in to {url.rstrip('/')} as {me['name']} (saved in {path})")


def files(slug: Annotated[str, typer.Argument(help="The competition.")]) -> None:
    """List a competition's data files (a host: each with when participants get it)."""
    with _client() as client:
        rows = client.files(slug)
    _table(
        [[f["name"], f["size_bytes"], f["sha256"][:16], _release_words(f)] for f in rows],
        ["NAME", "BYTES", "SHA256", "PARTICIPANTS GET IT"],
    )


def _release_words(stored: dict[str, Any]) -> str:
    if stored.get("visibility") == "hidden":
        return "never (code runs only)"
    if stored.get("release_with"):
        when = (stored.get("releases_at") or "")[:16].replace("T", " ")
        return f"when {stored['release_with']} starts ({when} UTC)"
    return "now"


def download(
    slug: Annotated[str, typer.Argument(help="The competition.")],
    name: Annotated[str | None, typer.Argument(help="One file (default: all of them).")] = None,
    path: Annotated[Path, typer.Option("--path", "-p", help="Directory to save into.")] = Path(),
) -> None:
    """Download a competition's data files."""
    path.mkdir(parents=True, exist_ok=True)
    with _client() as client:
        listed = client.files(slug)
        wanted = [f for f in listed if name is None or f["name"] == name]
        if name is not None and not wanted:
            _fail(f"'{slug}' has no data file '{name}'")
        for f in wanted:
            with _progress(f["size_bytes"], f["name"]) as progress:
                size = client.download(slug, f["name"], path / f["name"], progress)
            typer.echo(f"saved {path / f['name']} ({size:,} bytes)")


def _follow(client: "PodiumClient", submission_id: int, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    delay = 0.5
    while True:
        sub = client.submission(submission_id)
        if sub["status"] in ("scored", "failed"):
            return sub
        if time.monotonic() > deadline:
            _fail(f"submission {submission_id} is still {sub['status']} after {timeout:g} s")
        time.sleep(delay)
        delay = min(delay * 1.5, 5.0)


def _scores(sub: dict[str, Any]) -> str:
    """A submission's scores in words: each column's public (and, once shown, private) value,
    or why there is none to show."""
    if sub.get("score_note"):
        return str(sub["score_note"])
    columns = sub.get("scores") or {}
    if len(columns) > 1:
        parts = []
        for key, values in columns.items():
            shown = f"public {_number(values.get('public'))}"
            if values.get("private") is not None:
                shown += f", private {_number(values['private'])}"
            parts.append(f"{key}: {shown}")
        return "; ".join(parts)
    if sub.get("public_score") is None:
        return "no public score (the phase shows none)"
    parts = [f"public {_number(sub['public_score'])}"]
    if sub.get("private_score") is not None:
        parts.append(f"private {_number(sub['private_score'])}")
    return ", ".join(parts)


def _number(value: Any, digits: int | None = None) -> str:
    """A score as the server rounded it, at ``digits`` decimals when the column has them."""
    if value is None:
        return "-"
    if digits is not None and isinstance(value, int | float):
        return f"{value:.{digits}f}"
    return str(value)


def _digits(column: dict[str, Any], decimals: int | None) -> int | None:
    """The decimals a column is shown at: its precision, within the competition's."""
    precision = column.get("precision")
    if precision is None or decimals is None:
        return decimals
    return int(min(precision, decimals))


def submit(
    slug: Annotated[str, typer.Argument(help="The competition.")],
    file: Annotated[
        Path,
        typer.Argument(
            help="Your predictions (.csv, .csv.gz or .zip), or in a code phase your code "
            "(.py, .ipynb or .zip)."
        ),
    ],
    message: Annotated[str, typer.Option("--message", "-m", help="A description.")] = "",
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the submission until it is scored.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="How long --wait waits, in seconds.")] = 3600,
    phase: Annotated[
        str | None, typer.Option(help="The phase (needed when several are open).")
    ] = None,
    detail: Annotated[
        list[str] | None,
        typer.Option(
            "--detail", help="An entry detail the phase asks for, KEY=VALUE (repeatable)."
        ),
    ] = None,
    receipts: Annotated[
        Path | None,
        typer.Option(
            "--receipts",
            help="Where to keep the upload's receipt (default: receipts/<competition> beside "
            "the login's config file).",
        ),
    ] = None,
) -> None:
    """Submit a predictions file; with --wait, print its score or why it failed. The server's
    signed receipt is kept (for `podium verify --receipts`)."""
    if not file.is_file():
        _fail(f"file not found: {file}")
    details = {}
    for item in detail or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            _fail(f"--detail takes KEY=VALUE, not '{item}'")
        details[key.strip()] = value
    with _client() as client:
        with _progress(file.stat().st_size, "uploading") as progress:
            accepted = client.submit(
                slug, file, message, progress, phase=phase, details=details or None
            )
        submission_id = accepted["id"]
        typer.echo(f"submission {submission_id} {accepted['status']}")
        if accepted.get("receipt"):
            from app.client.config import keep_receipt, receipts_path

            kept = keep_receipt(receipts or receipts_path(slug), accepted["receipt"])
            typer.echo(f"receipt kept in {kept}")
        if not wait:
            return
        sub = _follow(client, submission_id, timeout)
    if sub["status"] == "failed":
        _fail(f"submission {submission_id} failed: {sub.get('error') or 'no reason given'}")
    typer.echo(f"submission {submission_id} scored: {_scores(sub)}")


def submissions(
    slug: Annotated[
        str, typer.Argument(help="The competition; or 'log' to print one submission's run log.")
    ],
    submission_id: Annotated[
        int | None, typer.Argument(help="With 'log': the submission's id.", show_default=False)
    ] = None,
    phase: Annotated[str | None, typer.Option(help="Only this phase's submissions.")] = None,
) -> None:
    """List your team's submissions, each column's score at its precision (blind ones say so);
    `podium submissions log ID` prints a code submission's run log."""
    if submission_id is not None:
        if slug != "log":
            _fail(f"to read a run log: podium submissions log {submission_id}")
        _print_log(submission_id)
        return
    with _client() as client:
        rows = client.submissions(slug, phase)
        competition = client.competition(slug)
    columns = _visible_columns(competition, phase or (rows[0]["phase"] if rows else None))
    decimals = competition.get("score_decimals")
    several = len(competition.get("phases") or []) > 1
    heads = [c.get("title") or c["key"] for c in columns]
    _table(
        [
            [
                s["id"],
                *([s.get("phase") or ""] if several else []),
                s["status"],
                *_submission_cells(s, columns, decimals),
                "yes" if s["selected"] else "",
                s["created_at"][:19],
                s["description"],
                s.get("error") or "",
            ]
            for s in rows
        ],
        ["ID", *(["PHASE"] if several else []), "STATUS"]
        + [f"{h} (PUBLIC/PRIVATE)" for h in heads]
        + ["SELECTED", "CREATED", "DESCRIPTION", "ERROR"],
    )


def _visible_columns(competition: dict[str, Any], phase: str | None) -> list[dict[str, Any]]:
    """The columns a phase's scores are in (its own, else the competition's), hidden ones left
    out unless the server showed them (a host)."""
    found = [p for p in competition.get("phases") or [] if p["name"] == phase]
    columns = (found[0].get("columns") if found else None) or competition.get("leaderboard_columns")
    return list(columns or [{"key": competition["metric"]["name"]}])


def _submission_cells(
    sub: dict[str, Any], columns: list[dict[str, Any]], decimals: int | None
) -> list[str]:
    if sub.get("score_note"):
        return ["blind until the phase ends"] + [""] * (len(columns) - 1)
    scores = sub.get("scores") or {}
    cells = []
    for i, column in enumerate(columns):
        values = scores.get(column["key"])
        if values is None and i == 0:
            values = {"public": sub.get("public_score"), "private": sub.get("private_score")}
        if values is None:
            cells.append("hidden" if column.get("hidden") else "-")
            continue
        digits = _digits(column, decimals)
        cell = _number(values.get("public"), digits)
        if values.get("private") is not None:
            cell += " / " + _number(values["private"], digits)
        cells.append(cell)
    return cells


def _print_log(submission_id: int) -> None:
    with _client() as client:
        run = client.submission_log(submission_id)
    if run.get("failure"):
        words = run.get("kaggle_words") or run["failure"]
        typer.echo(f"submission {submission_id} {run['status']}: {words}", err=True)
    if run.get("log") is None:
        _fail(f"submission {submission_id} has no log yet: it is {run['status']}")
    typer.echo(run["log"], nl=not run["log"].endswith("\n"))
    if run.get("truncated"):
        typer.echo(
            f"(the log was {run['total_bytes']:,} bytes: its first 8 KB and last 64 KB are shown)",
            err=True,
        )


def leaderboard(
    slug: Annotated[str, typer.Argument(help="The competition.")],
    private: Annotated[bool, typer.Option("--private", help="The private board.")] = False,
    phase: Annotated[
        str | None,
        typer.Option(
            help="The phase's board (default: one you may read, an open public one first)."
        ),
    ] = None,
) -> None:
    """Show a competition's leaderboard: every column you may see, at its precision."""
    with _client() as client:
        board = client.leaderboard(slug, "private" if private else "public", phase)
    columns = board.get("columns") or [{"key": board["metric"], "title": board["metric"]}]
    decimals = board.get("score_decimals")

    def cells(row: dict[str, Any]) -> list[str]:
        scores = row.get("scores") or {}
        if not scores:  # a Ladder board: the ranking column's released value only
            return [_number(row["score"], _digits(columns[0], decimals))] + [""] * (
                len(columns) - 1
            )
        return [_number(scores.get(c["key"]), _digits(c, decimals)) for c in columns]

    _table(
        [
            [
                r["rank"] if r["rank"] is not None else "-",
                r["team"],
                *cells(r),
                r["entries"],
                _interval(r.get("interval")),
                r.get("band") if r.get("band") is not None else "-",
            ]
            for r in board["rows"]
        ],
        ["RANK", "TEAM"]
        + [(c.get("title") or c["key"]).upper() for c in columns]
        + ["ENTRIES", "95% INTERVAL", "BAND"],
    )
    if not board["rows"]:
        typer.echo("(no team on this board yet)")
    if board.get("phase"):
        typer.echo(f"({board['board']} board of phase {board['phase']})")
    if board.get("public_board_mode", "exact") != "exact" and board.get("board") == "public":
        typer.echo("(a Ladder board: scores move only on real improvements, shown on a grid)")


def _interval(interval: dict[str, Any] | None) -> str:
    """The BCa interval of a board row, or '-' (Ladder boards and metrics without one)."""
    if not interval:
        return "-"
    return f"{interval['bca_low']:.4f}..{interval['bca_high']:.4f}"


def select(
    submission_id: Annotated[int, typer.Argument(help="The submission's id.")],
    undo: Annotated[bool, typer.Option("--undo", help="Unselect it instead.")] = False,
) -> None:
    """Select a submission for the private leaderboard (or unselect it with --undo)."""
    with _client() as client:
        sub = client.select(submission_id, not undo)
    typer.echo(f"submission {sub['id']} {'selected' if sub['selected'] else 'not selected'}")


COMMANDS: list[Callable[..., None]] = [
    login,
    files,
    download,
    submit,
    submissions,
    leaderboard,
    select,
]


def register(app: typer.Typer) -> None:
    for command in COMMANDS:
        app.command()(command)
