"""A request body as a blocking file object, so services can stream an upload of any size to
storage from a worker thread without the body ever being held whole (multipart is spooled by
Starlette; a raw body is pulled chunk by chunk from the event loop)."""

from typing import BinaryIO, cast

import anyio.from_thread
from fastapi import Request

from app.errors import BadRequest, PayloadTooLarge


class _RawBody:
    def __init__(self, request: Request) -> None:
        self._chunks = request.stream().__aiter__()
        self._buffer = bytearray()
        self._done = False

    async def _anext(self) -> bytes:
        return await self._chunks.__anext__()

    def _next_chunk(self) -> bytes | None:
        try:
            return anyio.from_thread.run(self._anext)
        except StopAsyncIteration:
            return None

    def read(self, size: int = -1) -> bytes:
        while not self._done and (size < 0 or len(self._buffer) < size):
            chunk = self._next_chunk()
            if chunk is None:
                self._done = True
            else:
                self._buffer += chunk
        if size < 0 or size >= len(self._buffer):
            out = bytes(self._buffer)
            self._buffer.clear()
        else:
            out = bytes(self._buffer[:size])
            del self._buffer[:size]
        return out


def check_declared_size(request: Request, max_bytes: int) -> None:
    """Refuse a body whose declared length is over the limit before reading any of it."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"the file is larger than the {max_bytes:,}-byte limit")


async def upload_source(request: Request, max_bytes: int) -> BinaryIO:
    """The uploaded bytes: the raw body, or the ``file`` part of a multipart form.

    Call from an ``async`` handler and read the result only from a worker thread.
    """
    check_declared_size(request, max_bytes)
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form()
        part = form.get("file")
        if part is None or isinstance(part, str):
            raise BadRequest("a multipart upload needs its bytes in a part named 'file'")
        return part.file
    return cast(BinaryIO, _RawBody(request))
