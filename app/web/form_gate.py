"""What a web form must carry before its body is read: this browser's CSRF cookie and, for a form
that needs a signed-in user, a live session.

FastAPI reads a form (and spools its files) before any dependency runs, so without this a 50 MB
post with no cookie at all would be read whole and only then refused. This ASGI middleware looks
at the headers only, before the body gate reads a byte: a form route (one whose dependencies
include :func:`check_csrf`) posted without the CSRF cookie, or with an ``X-CSRF-Token`` header
that is not this browser's token, is 403; one that needs a signed-in user
(:func:`signed_in_user`) without a live session goes to sign in, as it would after the body.
The token in the form itself is checked by :func:`check_csrf` once the bounded body is read.

Which routes need what is read from the routes' own dependencies, so a new form is covered as
soon as it declares them.
"""

import hmac
from dataclasses import dataclass
from urllib.parse import quote

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from app.auth.service import user_for_web_session
from app.config import Settings
from app.errors import AppError, error_response
from app.ops.unavailable import outage
from app.web.errors import error_page, wants_json
from app.web.session import (
    CSRF_COOKIE,
    CSRF_HEADER,
    SESSION_COOKIE,
    CsrfRejected,
    check_csrf,
    csrf_token,
    signed_in_user,
)

_NOT_FORMS = ("/api/", "/static/", "/docs", "/redoc", "/healthz", "/readyz", "/metrics")


@dataclass(frozen=True)
class _Needs:
    route: APIRoute
    csrf: bool
    session: bool


def _calls(dependant: Dependant) -> set[object]:
    found: set[object] = set()
    todo = [dependant]
    while todo:
        current = todo.pop()
        found.add(current.call)
        todo.extend(current.dependencies)
    return found


class FormGate:
    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: list[BaseRoute],
        settings: Settings,
        session_factory: sessionmaker[Session],
    ) -> None:
        self.app = app
        # The application's route list, filled in after the middleware is added: read at first use.
        self._routes = routes
        self._forms: list[_Needs] | None = None
        self._settings = settings
        self._session_factory = session_factory

    def _form_routes(self) -> list[_Needs]:
        if self._forms is None:
            forms = []
            for route in self._routes:
                if not isinstance(route, APIRoute) or route.path.startswith(_NOT_FORMS):
                    continue
                calls = _calls(route.dependant)
                if check_csrf in calls or signed_in_user in calls:
                    forms.append(_Needs(route, check_csrf in calls, signed_in_user in calls))
            self._forms = forms
        return self._forms

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        needs = next(
            (n for n in self._form_routes() if n.route.matches(scope)[0] is Match.FULL), None
        )
        refusal = None if needs is None else await self._refusal(Request(scope), needs)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _refusal(self, request: Request, needs: _Needs) -> Response | None:
        if needs.csrf:
            sent = request.headers.get(CSRF_HEADER)
            if not request.cookies.get(CSRF_COOKIE):
                return self._forbidden(
                    request, "this form has no CSRF token; reload the page and try again"
                )
            if sent is not None and not hmac.compare_digest(sent, csrf_token(request)):
                return self._forbidden(
                    request,
                    "this form's CSRF token is wrong or stale; reload the page and try again",
                )
        if needs.session:
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
            user = user_for_web_session(
                session, secret=secret, secret_key=self._settings.secret_key
            )
            return user is not None

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
