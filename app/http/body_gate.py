"""Every request body is read within bounds, and before anything shared is held for it.

A route that takes its database session (or a board place, or a worker thread) and only then
reads its body lets one client that sends its headers and then waits hold that resource as long
as it likes. This ASGI middleware sits in front of every such resource (outside the board gate
and the upload guard, before any routing) and reads bodies in one of two ways:

- a small body (JSON, a web form, a ``kaggle`` call: every route that does not take a file) is
  read whole here, at most ``max_request_bytes``, within ``body_timeout_seconds`` for all of it,
  before the application runs; the application then gets it at once;
- a file upload (the routes of :data:`UPLOADS`) is streamed to the application, which spools it
  as multipart or raw bytes (``app.http.request_body``), counted against the route's limit and
  with ``body_timeout_seconds`` allowed between two pieces of it.

A declared ``Content-Length`` over the limit is 413 before a byte is read, a body that goes past
it is cut there with 413, and a client too slow is answered 408.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.errors import AppError, BadRequest, PayloadTooLarge, error_response

# The kaggle client sends absolute-form targets (http://host/api/...), seen here before
# app.kaggle.proxy rewrites them.
_ABSOLUTE_FORM = re.compile(r"^https?://[^/]+")
# The routes whose body is a file: submissions, answer keys and metric files (API and web forms)
# and the kaggle client's signed upload URL; data files have a limit of their own.
UPLOADS = re.compile(
    r"^(/api/v1/competitions/[^/]+/(submissions|answer-key|custom-metric|phases/[^/]+/answer-key"
    r"|submissions/[0-9]+/code)"
    r"|/api/v1/kaggle/uploads/[^/]+"
    r"|/c/[^/]+/(submissions|host/keys|host/metric))/?$"
)
# Competition bundles, imported through the API or the host page (app.competitions.bundles).
BUNDLES = re.compile(r"^(/api/v1/competitions/import|/host/import)/?$")
DATA_FILES = re.compile(
    r"^(/api/v1/competitions/[^/]+/files/[^/]+|/c/[^/]+/host/files"
    r"|/api/v1/kaggle/blob-uploads/[^/]+)/?$"
)
# The kaggle client's calls: it reads an error only in its own shape, ``{"code": <status>,
# "message": ...}`` (app.kaggle.router); Podium's (a text ``code``) stops it with a traceback.
KAGGLE_CALLS = re.compile(r"^/api/v1/[a-z]+\.[A-Za-z]+Service/")
# The multipart framing and the small form fields around the file.
FRAMING_BYTES = 64 * 1024


def kaggle_response(exc: AppError) -> JSONResponse:
    return JSONResponse(
        status_code=exc.status_code, content={"code": exc.status_code, "message": exc.detail}
    )


class BodyTimeout(AppError):
    status_code = 408
    code = "body_timeout"


class _Cut(Exception):
    """Raised into the application when its body stops: too large, too slow, or gone."""


@dataclass
class _Reading:
    refusal: AppError | None = None
    gone: bool = False
    started: bool = False


def body_limit(path: str, settings: Settings) -> tuple[int, bool]:
    """The most bytes a body to ``path`` may have, and whether it is a file (streamed)."""
    path = _ABSOLUTE_FORM.sub("", path)
    if UPLOADS.match(path):
        return settings.max_upload_bytes + FRAMING_BYTES, True
    if BUNDLES.match(path):
        return settings.bundle_max_bytes + FRAMING_BYTES, True
    if DATA_FILES.match(path):
        return settings.max_data_file_bytes + FRAMING_BYTES, True
    return settings.max_request_bytes, False


class BodyGate:
    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        self._settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        length = headers.get("content-length")
        if length is None and "transfer-encoding" not in headers:
            await self.app(scope, receive, send)  # no body
            return
        limit, is_file = body_limit(scope["path"], self._settings)
        refuse = (
            kaggle_response
            if KAGGLE_CALLS.match(_ABSOLUTE_FORM.sub("", scope["path"]))
            else error_response
        )
        if length is not None and not length.isdigit():
            await refuse(BadRequest("Content-Length is not a number"))(scope, receive, send)
            return
        if length is not None and int(length) > limit:
            await refuse(self._too_large(limit, is_file))(scope, receive, send)
            return
        if is_file:
            await self._streamed(limit, scope, receive, send)
        else:
            await self._buffered(limit, scope, receive, send, refuse)

    def _too_large(self, limit: int, is_file: bool) -> PayloadTooLarge:
        if is_file:
            limit -= FRAMING_BYTES
            return PayloadTooLarge(f"the file is larger than the {limit:,}-byte upload limit")
        return PayloadTooLarge(f"the request body is larger than the {limit:,}-byte limit")

    def _too_slow(self) -> BodyTimeout:
        seconds = self._settings.body_timeout_seconds
        return BodyTimeout(f"the request body did not arrive within {seconds:g} s")

    async def _buffered(
        self,
        limit: int,
        scope: Scope,
        receive: Receive,
        send: Send,
        refuse: Callable[[AppError], JSONResponse],
    ) -> None:
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.fail_after(self._settings.body_timeout_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return  # nobody is left to answer
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        await refuse(self._too_large(limit, False))(scope, receive, send)
                        return
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            await refuse(self._too_slow())(scope, receive, send)
            return
        body: bytes | None = b"".join(chunks)

        async def replay() -> Message:
            nonlocal body
            if body is None:
                return await receive()  # after the body: the disconnect, whenever it comes
            message: Message = {"type": "http.request", "body": body, "more_body": False}
            body = None
            return message

        await self.app(scope, replay, send)

    async def _streamed(self, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
        reading = _Reading()
        received = 0
        complete = False

        async def counted_receive() -> Message:
            nonlocal received, complete
            if complete:
                return await receive()
            try:
                with anyio.fail_after(self._settings.body_timeout_seconds):
                    message = await receive()
            except TimeoutError:
                reading.refusal = self._too_slow()
                raise _Cut from None
            if message["type"] == "http.disconnect":
                reading.gone = True
                raise _Cut
            received += len(message.get("body", b""))
            if received > limit:
                reading.refusal = self._too_large(limit, True)
                raise _Cut
            complete = not message.get("more_body", False)
            return message

        async def guarded_send(message: Message) -> None:
            if reading.refusal is not None or reading.gone:
                return  # whatever the application answers to a cut body, the answer is below
            if message["type"] == "http.response.start":
                reading.started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            # Whatever the cut turned into on its way out (the error of a spooling thread, a
            # task group's), it is the cut's: answered below. Anything else is the app's own.
            if reading.refusal is None and not reading.gone:
                raise
        if reading.refusal is not None and not reading.started:
            await error_response(reading.refusal)(scope, receive, send)
