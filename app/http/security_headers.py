"""The security headers on every response: a Content-Security-Policy, ``nosniff``, no framing
and a same-origin ``Referrer-Policy``.

A plain ASGI middleware (not ``BaseHTTPMiddleware``), so a streamed upload or download passes
through untouched: only the response's start message is amended. A response that set its own
``Content-Security-Policy`` keeps it (the API explorer's pages: :mod:`app.web.docs`).
"""

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def csp(**directives: str) -> str:
    """A policy from ``name=sources`` pairs (underscores become dashes)."""
    return "; ".join(f"{name.replace('_', '-')} {value}" for name, value in directives.items())


# The pages are rendered on the server with their script and style sheet under /static: no inline
# script or style, no eval. Images: a description may show https images (app.web.markdown).
PAGE_POLICY = csp(
    default_src="'self'",
    script_src="'self'",
    style_src="'self'",
    img_src="'self' data: https:",
    connect_src="'self'",
    font_src="'self'",
    object_src="'none'",
    base_uri="'none'",
    form_action="'self'",
    frame_ancestors="'none'",
)

HEADERS = {
    "content-security-policy": PAGE_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # Signed download links carry their permission in the URL: never send it to another site.
    "referrer-policy": "same-origin",
}


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])  # optional in ASGI
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
