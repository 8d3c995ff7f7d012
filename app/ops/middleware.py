"""Per-request plumbing: the request id and the latency histogram, as one ASGI middleware."""

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.ops.logs import request_id_context, request_id_from
from app.ops.router import PROMETHEUS_PATH
from app.ops.telemetry import REQUEST_SECONDS, UPLOAD_BYTES, UPLOADS

_UPLOAD_ROUTE = "/api/v1/competitions/{slug}/submissions"


class RequestTelemetry:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        accept = headers.get(b"accept", b"")
        if scope.get("path") == "/metrics" and (
            b"openmetrics" in accept or b"text/plain" in accept
        ):
            scope = {**scope, "path": PROMETHEUS_PATH, "raw_path": PROMETHEUS_PATH.encode()}
        raw = headers.get(b"x-request-id")
        request_id = request_id_from(raw.decode("latin-1") if raw else None)
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", request_id.encode()),
                ]
            await send(message)

        with request_id_context(request_id):
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                template = _template(scope)
                method = scope.get("method", "")
                REQUEST_SECONDS.labels(method, template, str(status)).observe(
                    time.perf_counter() - started
                )
                if method == "POST" and template == _UPLOAD_ROUTE:
                    UPLOADS.labels("accepted" if status == 202 else str(status)).inc()
                    length = headers.get(b"content-length")
                    if length and length.isdigit():
                        UPLOAD_BYTES.observe(int(length))


def _template(scope: Scope) -> str:
    """The matched route's path template (``/api/v1/competitions/{slug}``), never the raw path:
    one series per route, whatever the slugs and ids."""
    # FastAPI keeps an included router's full path in its effective route context.
    context = (scope.get("fastapi") or {}).get("effective_route_context")
    path = getattr(context, "path", None) or getattr(scope.get("route"), "path", None)
    return path or "unmatched"
