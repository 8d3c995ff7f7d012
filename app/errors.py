"""Typed business errors. One handler in ``app.main`` turns them into JSON responses.

``detail`` is what the caller may read; ``host_detail`` is kept for organisers and logs only.
"""

from typing import Any

from starlette.responses import JSONResponse


class AppError(Exception):
    status_code = 400
    code = "error"
    # True for a refusal the service has recorded (a failed submission kept in the history):
    # answered as an error, while the transaction that recorded it is committed.
    recorded = False

    def __init__(self, detail: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra or {}


class BadRequest(AppError):
    status_code = 400
    code = "bad_request"


class Unauthorized(AppError):
    status_code = 401
    code = "unauthorized"


class Forbidden(AppError):
    status_code = 403
    code = "forbidden"


class NotFound(AppError):
    status_code = 404
    code = "not_found"


class Conflict(AppError):
    status_code = 409
    code = "conflict"


class PayloadTooLarge(AppError):
    status_code = 413
    code = "payload_too_large"


class Unprocessable(AppError):
    status_code = 422
    code = "unprocessable"


class TooManyRequests(AppError):
    status_code = 429
    code = "quota_exceeded"


class RateLimited(TooManyRequests):
    """Too many requests in a short time; ``retry_after`` seconds until the next is accepted."""

    code = "rate_limited"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail, extra={"retry_after": retry_after})
        self.headers = {"Retry-After": str(retry_after)}


def error_response(exc: AppError) -> JSONResponse:
    """The one JSON body of every error: ``detail``, ``code`` and any extra fields."""
    headers = dict(getattr(exc, "headers", None) or {})
    if exc.status_code == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(
        status_code=exc.status_code,
        content={"detail": exc.detail, "code": exc.code, **exc.extra},
        headers=headers or None,
    )
