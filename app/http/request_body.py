"""A request body as a file object, so services can store an upload of any size from a worker
thread without the body ever being held whole in memory.

The body is read on the event loop into a spooled file (memory, then disk) before the caller
gets it: multipart by Starlette, a raw body here. No worker thread ever waits on the client,
and a request that holds a database slot can give it back while it waits
(``session=``), so a client that sends slowly holds nothing anyone else needs.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from tempfile import SpooledTemporaryFile
from typing import BinaryIO, cast

from fastapi import Request
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.db import no_transaction
from app.errors import BadRequest, PayloadTooLarge

# A raw body up to this size stays in memory; past it, it is spooled to a temporary file.
IN_MEMORY_BYTES = 1024 * 1024


def check_declared_size(request: Request, max_bytes: int) -> None:
    """Refuse a body whose declared length is over the limit before reading any of it."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"the file is larger than the {max_bytes:,}-byte limit")


async def upload_source(
    request: Request, max_bytes: int, *, session: Session | None = None
) -> BinaryIO:
    """The uploaded bytes: the raw body, or the ``file`` part of a multipart form.

    With ``session`` (a request's unit of work that has only read so far), its transaction and
    database slot are given back while the body arrives (``app.db.no_transaction``). Call from
    an ``async`` handler and read the result from a worker thread.
    """
    check_declared_size(request, max_bytes)
    if session is None:
        return await _read(request, max_bytes)
    async with _paused(session):
        return await _read(request, max_bytes)


async def _read(request: Request, max_bytes: int) -> BinaryIO:
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form()
        part = form.get("file")
        if part is None or isinstance(part, str):
            raise BadRequest("a multipart upload needs its bytes in a part named 'file'")
        return part.file
    # Closed (and its disk file removed) when the handler lets go of it.
    spool = SpooledTemporaryFile(max_size=IN_MEMORY_BYTES)  # noqa: SIM115
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            spool.close()
            raise PayloadTooLarge(f"the file is larger than the {max_bytes:,}-byte limit")
        if size > IN_MEMORY_BYTES:
            await run_in_threadpool(spool.write, chunk)
        else:
            spool.write(chunk)
    spool.seek(0)
    return cast(BinaryIO, spool)


@asynccontextmanager
async def _paused(session: Session) -> AsyncIterator[None]:
    # no_transaction hands its slot back and takes it again from a worker thread.
    pause = no_transaction(session)
    await run_in_threadpool(pause.__enter__)
    try:
        yield
    finally:
        await run_in_threadpool(pause.__exit__, None, None, None)
