"""The record inside a host's export: ``ledger.jsonl`` (the whole chain, opened, with its signed
heads) and each phase's boards as published, so ``podium verify`` can check the archive offline
years later."""

import io
import zipfile


def add_files(archive: bytes, files: dict[str, bytes]) -> bytes:
    """``archive`` (a zip) with ``files`` added, or replaced when already there."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(archive)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            if info.filename not in files:
                target.writestr(info, source.read(info))
        for name, data in files.items():
            target.writestr(name, data)
    return out.getvalue()
