"""HTML error pages for browser routes; the API keeps its JSON errors.

A browser route is any path outside the API, the docs and the static files. A failed form
(a service said no) goes back to its page with the reason shown; a refused page, a bad CSRF
token, an unknown page or a crash gets an error page with the right status code.
"""

import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.accounts.admin import AdminsOnly
from app.errors import AppError
from app.web.session import CsrfRejected, HostsOnly, SignInRequired, redirect, web_user
from app.web.templating import render

log = logging.getLogger(__name__)

_NOT_BROWSER = ("/api/", "/healthz", "/static/", "/docs", "/redoc", "/openapi.json")

_TITLES = {
    400: "Bad request",
    401: "Sign in needed",
    403: "Not allowed",
    404: "Page not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "File too large",
    422: "Cannot process this",
    429: "Too many requests",
    500: "Something went wrong",
}


def is_browser_route(request: Request) -> bool:
    return not request.url.path.startswith(_NOT_BROWSER)


def wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def error_page(request: Request, status_code: int, detail: str) -> Response:
    title = _TITLES.get(status_code, "Error")
    return render(
        request,
        "error.html",
        {"status": status_code, "title": title, "detail": detail},
        status_code=status_code,
    )


def _find_viewer(request: Request) -> None:
    session = request.app.state.session_factory()
    try:
        web_user(request, session, request.app.state.settings)
        session.commit()  # the session's "last seen", as any page read refreshes it
    except Exception:  # noqa: BLE001 - an error page is drawn whatever the session store says
        session.rollback()
        request.state.viewer = None
    finally:
        session.close()


def _back(request: Request) -> str:
    back = getattr(request.state, "back", None)
    if isinstance(back, str):
        return back
    referer = urlsplit(request.headers.get("referer", ""))
    if referer.netloc == request.url.netloc and referer.path.startswith("/"):
        return referer.path + (f"?{referer.query}" if referer.query else "")
    return "/"


def install_error_pages(app: FastAPI) -> None:
    # The API's own handlers (app.http.error_handlers) answer everything that is not a browser page.
    api_app_error = app.exception_handlers.get(AppError)
    api_http_error = app.exception_handlers.get(StarletteHTTPException, http_exception_handler)
    api_crash = app.exception_handlers.get(Exception)

    async def app_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, AppError)
        if not is_browser_route(request) or (api_app_error is not None and wants_json(request)):
            assert api_app_error is not None
            handler: Callable[[Request, Exception], Awaitable[Response]] = api_app_error  # type: ignore[assignment]
            return await handler(request, exc)
        guard = isinstance(exc, CsrfRejected | HostsOnly | AdminsOnly)
        if request.method == "POST" and not guard:
            field = exc.extra.get("field")
            if isinstance(field, str) and getattr(request.state, "form_field", None) is None:
                request.state.form_field = field  # shown beside it where the form names itself
            return redirect(request, _back(request), error=exc.detail)
        return error_page(request, exc.status_code, exc.detail)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if is_browser_route(request) and not wants_json(request):
            detail = (
                "There is no page at this address." if exc.status_code == 404 else str(exc.detail)
            )
            if not hasattr(request.state, "viewer"):
                # No page's dependencies ran (no route matched): the frame still shows who is
                # signed in, never "Sign in" to someone who is.
                await run_in_threadpool(_find_viewer, request)
            return error_page(request, exc.status_code, detail)
        return await api_http_error(request, exc)  # type: ignore[no-any-return,operator]

    async def sign_in_required(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SignInRequired)
        if wants_json(request):
            return JSONResponse(
                {"detail": "sign in first", "code": "unauthorized"}, status_code=401
            )
        from urllib.parse import quote

        return RedirectResponse(f"/signin?next={quote(exc.next_path)}", status_code=303)

    async def crash(request: Request, exc: Exception) -> Response:
        browser = is_browser_route(request) and not wants_json(request)
        if not browser and api_crash is not None:
            return await api_crash(request, exc)  # type: ignore[no-any-return]  # it logs
        log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        if browser:
            return error_page(
                request, 500, "The server failed to answer this request. It has been logged."
            )
        if api_crash is not None:
            return await api_crash(request, exc)  # type: ignore[no-any-return,operator]
        return JSONResponse(
            {"detail": "internal server error", "code": "internal"}, status_code=500
        )

    app.add_exception_handler(AppError, app_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(SignInRequired, sign_in_required)
    app.add_exception_handler(Exception, crash)
