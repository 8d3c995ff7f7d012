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


def register(app: typer.Typer) -> None:
    app.command()(verify)
