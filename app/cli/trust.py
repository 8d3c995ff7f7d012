"""``podium verify``, ``podium backup`` and ``podium restore``: checking a board with no
account, and losing a server without losing a competition."""

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer


def _fail(message: str, code: int = 2) -> NoReturn:
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    raise typer.Exit(code=code)


def verify(
    source: Annotated[
        str,
        typer.Argument(
            metavar="ARCHIVE_OR_URL",
            help="A host's export (.zip), a ledger.jsonl, or the competition's URL on a server.",
        ),
    ],
    receipts: Annotated[
        Path | None,
        typer.Option(
            "--receipts",
            help="A folder of receipts (*.json) to find in the chain, e.g. the ones "
            "`podium submit` kept.",
        ),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option(
            "--key", help="The server's public key as you know it (base64): refuse any other."
        ),
    ] = None,
) -> None:
    """Check a competition's record: the chain, its signatures, your receipts, and that the
    boards follow from the chain's scores. Exits 1 on any break."""
    from app.ledger.verify import VerifyError, check, from_archive, from_url, read_receipts

    try:
        if source.startswith(("http://", "https://")):
            material = from_url(source, get=_get)
        else:
            path = Path(source)
            if not path.is_file():
                _fail(f"no such archive: {source}")
            material = from_archive(path)
        if receipts is not None:
            if not receipts.is_dir():
                _fail(f"--receipts: no such folder: {receipts}")
            material.receipts = read_receipts(receipts)
    except VerifyError as exc:
        _fail(str(exc))
    report = check(material, pinned_key=key)
    for line in report.lines():
        typer.echo(line)
    if not report.ok:
        raise typer.Exit(code=1)


def _get(url: str) -> tuple[int, str]:
    import httpx

    try:
        response = httpx.get(url, timeout=60, follow_redirects=True)
    except httpx.HTTPError as exc:
        _fail(f"cannot reach {url}: {exc}")
    return response.status_code, response.text


def backup(
    to: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="DIR_OR_S3_URL",
            help="A folder, or s3://bucket/prefix (with this install's PODIUM_S3_* settings).",
        ),
    ],
    keep: Annotated[
        int | None,
        typer.Option(help="Then delete the oldest backups there beyond this many.", min=1),
    ] = None,
) -> None:
    """Back up this install while it serves: the database (SQLite's online backup or pg_dump),
    the stored files, the record's signing key, the settings without secrets, a manifest of
    checksums."""
    from app.backup.snapshot import BackupError, take
    from app.config import get_settings

    try:
        taken = take(get_settings(), to, keep=keep)
    except BackupError as exc:
        _fail(str(exc))
    typer.echo(f"backup {taken.name}: {taken.files} files, {taken.bytes} bytes, in {taken.where}")
    for name in taken.pruned:
        typer.echo(f"pruned {name}")


def restore(
    source: Annotated[
        str,
        typer.Argument(
            metavar="FROM",
            help="A backup folder, or s3://bucket/prefix[/podium-backup-…] (its newest).",
        ),
    ],
) -> None:
    """Restore a backup into this install, which must be empty (refused otherwise); then check
    it with `podium verify`."""
    from app.backup.restore import restore as restore_backup
    from app.backup.snapshot import BackupError
    from app.config import get_settings

    try:
        restored = restore_backup(get_settings(), source)
    except BackupError as exc:
        _fail(str(exc))
    moved = " (file references moved to this install's store)" if restored.rewritten else ""
    typer.echo(f"restored {restored.source}: {restored.files} stored files{moved}")


def register(app: typer.Typer) -> None:
    app.command()(verify)
    app.command()(backup)
    app.command()(restore)
