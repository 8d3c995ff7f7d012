"""`podium bundle import` and `podium bundle export`: a competition bundle (EvalAI, Codabench v2,
CodaLab v1.5) to a Podium competition and back, through the HTTP API with the saved
`podium login`, as `podium competitions create` does. The server reads the bundle; this side
only zips a directory and sends it.
"""

import io
import os
import zipfile
from pathlib import Path
from typing import Annotated, Any

import typer

from app.client.commands import _client, _fail, _progress, _table

bundle_app = typer.Typer(
    help="Competition bundles: import an EvalAI, Codabench or CodaLab bundle, export a Codabench one.",
    no_args_is_help=True,
)

# A directory is zipped in memory before it is sent: as large as the server takes by default.
MAX_DIRECTORY_BYTES = 256 * 1024 * 1024


def zip_directory(root: Path, *, max_bytes: int = MAX_DIRECTORY_BYTES) -> bytes:
    """The directory as a zip (its contents at the zip's root), ``.git`` left out; a symbolic
    link or more than ``max_bytes`` of files is refused here, before anything is sent."""
    out = io.BytesIO()
    total = 0
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            for name in sorted([*dirnames, *filenames]):
                if os.path.islink(os.path.join(dirpath, name)):
                    _fail(f"{Path(dirpath, name)} is a symbolic link; bundles may not hold links")
            for name in sorted(filenames):
                path = Path(dirpath, name)
                total += path.stat().st_size
                if total > max_bytes:
                    _fail(f"{root} holds more than {max_bytes:,} bytes; zip it and check its size")
                archive.write(path, path.relative_to(root).as_posix())
    return out.getvalue()


def _report(body: dict[str, Any]) -> None:
    verb = "would create" if body.get("dry_run") else "created"
    typer.echo(f"{verb} {body['slug']} ({body['title']}), a {body['status']}")
    _table(
        [
            [p["name"], p["title"], p["start"], p["end"] or "-", p["board"], p["counts"]]
            for p in body["phases"]
        ],
        ["PHASE", "TITLE", "START", "END", "BOARD", "COUNTS"],
    )
    _table(
        [
            [
                c["key"],
                c["title"],
                c["direction"],
                "program"
                if c.get("program")
                else (c.get("metric") or (c.get("computed") or {}).get("op", "")),
            ]
            for c in body["leaderboard_columns"]
        ],
        ["COLUMN", "TITLE", "DIRECTION", "SCORED BY"],
    )
    for warning in body.get("warnings", []):
        typer.echo(f"warning: {warning}", err=True)


@bundle_app.command("import")
def import_bundle(
    path: Annotated[Path, typer.Argument(help="The bundle: a .zip file or a directory.")],
    slug: Annotated[str | None, typer.Option(help="The new competition's slug.")] = None,
    owner: Annotated[
        str | None, typer.Option(help="Make it for this organiser (site admins only).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be created; create nothing.")
    ] = False,
    start_now: Annotated[
        bool,
        typer.Option(
            "--start-now",
            help="Move every date by one offset so that the first phase opens now (without "
            "it, past dates stay: the competition publishes as ended).",
        ),
    ] = False,
) -> None:
    """Make a competition (a draft) from a bundle; its warnings name what could not be
    carried over, or was kept as the bundle says but looks wrong."""
    if path.is_dir():
        data, name = zip_directory(path), f"{path.resolve().name or 'bundle'}.zip"
    elif path.is_file():
        data, name = path.read_bytes(), path.name
    else:
        _fail(f"{path} is neither a file nor a directory")
    form = {"dry_run": "true" if dry_run else "false"}
    if start_now:
        form["start_now"] = "true"
    if slug:
        form["slug"] = slug
    if owner:
        form["owner"] = owner
    with _client() as client, _progress(len(data), "Uploading") as progress:
        body = client.import_bundle(name, data, form, progress)
    _report(body)


@bundle_app.command("export")
def export_bundle(
    slug: Annotated[str, typer.Argument(help="The competition's slug.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The zip file to write.")],
    with_submissions: Annotated[
        bool, typer.Option("--with-submissions", help="Add every submission and its scores.")
    ] = False,
) -> None:
    """Write a competition you host as a Codabench v2 bundle, which Podium imports back."""
    with _client() as client, _progress(0, "Downloading") as progress:
        size = client.export_bundle(slug, output, with_submissions, progress)
    typer.echo(f"wrote {output} ({size:,} bytes)")
