"""What a web form must carry before its body is read: this browser's CSRF cookie and, for a form
that needs a signed-in user, a live session.

FastAPI reads a form (and spools its files) before any dependency runs, so without this a 50 MB
post with no cookie at all would be read whole and only then refused. This ASGI middleware looks
at the headers only, before the body gate reads a byte. Every POST outside the API is a form
(each declares :func:`check_csrf`; ``tests/web/test_form_gate.py`` holds the routes to that):
one without the CSRF cookie, or with an ``X-CSRF-Token`` header that is not this browser's
token, is 403; every form but signing in and out needs a signed-in user, and without a live
session goes to sign in, as it would after its body. The token in the form itself is checked by
:func:`check_csrf` once the bounded body is read.
"""

import hmac
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from app.auth.service import web_session_for
from app.config import Settings
from app.errors import AppError, error_response
from app.ops.unavailable import outage
from app.web.errors import error_page, wants_json
from app.web.session import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, CsrfRejected, csrf_token

NOT_FORMS = ("/api/", "/static/", "/docs", "/redoc", "/healthz", "/readyz", "/metrics")
# The forms that need no signed-in user.
SIGNED_OUT_FORMS = (
    "/signin",
    "/signout",
    "/signup",
    "/verify-email",
    "/password-reset",
    "/password-reset/confirm",
    "/unsubscribe",  # every mail's link: it works without signing in
)


class FormGate:
    def __init__(
        self,
        app: ASGIApp,
        *,
        settings: Settings,
        session_factory: sessionmaker[Session],
    ) -> None:
        self.app = app
        self._settings = settings
        self._session_factory = session_factory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"].startswith(NOT_FORMS)
        ):
            await self.app(scope, receive, send)
            return
        refusal = await self._refusal(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _refusal(self, request: Request) -> Response | None:
        sent = request.headers.get(CSRF_HEADER)
        if not request.cookies.get(CSRF_COOKIE):
            return self._forbidden(
                request, "this form has no CSRF token; reload the page and try again"
            )
        if sent is not None and not hmac.compare_digest(sent, csrf_token(request)):
            return self._forbidden(
                request, "this form's CSRF token is wrong or stale; reload the page and try again"
            )
        if request.url.path.rstrip("/") not in SIGNED_OUT_FORMS:
            try:
                signed_in = await run_in_threadpool(self._live_session, request)
            except Exception as exc:
                # Out here no exception handler runs: a database outage is answered 503 all the same.
                unavailable = outage(exc)
                if unavailable is None:
                    raise
                return error_response(unavailable)
            if not signed_in:
                return _sign_in_first(request)
        return None

    def _live_session(self, request: Request) -> bool:
        secret = request.cookies.get(SESSION_COOKIE)
        if not secret:
            return False
        with self._session_factory() as session:
            live = web_session_for(session, secret=secret, secret_key=self._settings.secret_key)
            return live is not None

    def _forbidden(self, request: Request, detail: str) -> Response:
        refusal: AppError = CsrfRejected(detail)
        if wants_json(request):
            return error_response(refusal)
        return error_page(request, refusal.status_code, detail)


def _sign_in_first(request: Request) -> Response:
    """What ``SignInRequired`` answers (app.web.errors), before the body instead of after."""
    if wants_json(request):
        return JSONResponse({"detail": "sign in first", "code": "unauthorized"}, status_code=401)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/signin?next={quote(target)}", status_code=303)
