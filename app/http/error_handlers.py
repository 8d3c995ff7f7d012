"""Turning every failure into the one error body of :class:`app.errors.ErrorBody`.

Business errors carry their status; FastAPI's request validation becomes a 422 with a one-line
``detail`` and the list of ``errors``; Starlette's own answers (unknown routes, methods) keep their
status; anything unexpected is logged with its traceback and answered with a generic 500.
"""

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.errors import AppError, error_response
from app.http.messages import sentence

log = logging.getLogger(__name__)

# Problems spelled out in a validation error's one-line detail; the rest are counted.
_SHOWN = 3

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def _error(status: int, detail: str, code: str, headers: Any = None, **extra: Any) -> JSONResponse:
    return JSONResponse(
        status_code=status, content={"detail": detail, "code": code, **extra}, headers=headers
    )


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc) or "request"


def validation_errors(errors: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """A one-line summary and the ``errors`` list (location and message, never the input)."""
    items = [{"loc": list(e.get("loc", ())), "msg": sentence(e)} for e in errors]
    shown = "; ".join(f"{_where(i['loc'])}: {i['msg']}" for i in items[:_SHOWN])
    more = f"; and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    summary = " ".join(f"invalid request: {shown}{more}".split())
    return summary, items


def _routes(routes: Sequence[Any]) -> Iterator[Any]:
    # FastAPI >= 0.16x keeps included routers as branches; iter_route_contexts walks them.
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: the routes are flat already
        yield from routes
        return
    yield from iter_route_contexts(routes)


def _allowed_methods(request: Request) -> str:
    """Every method some route of the app takes on this path, e.g. ``GET, HEAD, PATCH``.

    Each method of a path is its own route, and Starlette answers 405 from the first route whose
    path matched, so its ``Allow`` names that route's methods only.
    """
    methods: set[str] = set()
    for route in _routes(request.app.router.routes):
        route_methods = getattr(route, "methods", None)
        if route_methods and route.matches(request.scope)[0] is not Match.NONE:
            methods |= set(route_methods)
    return ", ".join(sorted(methods))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def app_error(_request: Request, exc: AppError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        detail, items = validation_errors(list(exc.errors()))
        return _error(422, detail, "validation_error", errors=items)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no route {request.url.path}"
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            allowed = _allowed_methods(request) or headers.get("Allow", "")
            if allowed:
                headers["Allow"] = allowed
            detail = f"method {request.method} is not allowed on {request.url.path}" + (
                f"; allowed: {allowed}" if allowed else ""
            )
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return _error(exc.status_code, detail, code, headers or None)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # The traceback is for the host's logs only, never for the caller.
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return _error(500, "internal server error", "internal_error")
