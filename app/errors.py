"""Typed business errors. One handler in ``app.main`` turns them into JSON responses.

``detail`` is what the caller may read; ``host_detail`` is kept for organisers and logs only.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
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


class ServiceUnavailable(AppError):
    """A condition that passes (the database or the file store away, a full disk): the caller is
    told why (``reason``) and when to come back, and nothing it sent was accepted."""

    status_code = 503
    code = "unavailable"

    def __init__(self, detail: str, *, reason: str, retry_after: int = 5) -> None:
        super().__init__(detail, extra={"reason": reason})
        self.headers = {"Retry-After": str(retry_after)}


class StorageUnavailable(ServiceUnavailable):
    """The file store cannot be reached or is failing (an object store down, refusing, 5xx)."""

    def __init__(
        self,
        detail: str = "file storage is unavailable; try again shortly",
        *,
        reason: str = "storage_unreachable",
    ) -> None:
        super().__init__(detail, reason=reason)


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


# --- the one error body -------------------------------------------------------------------------
# Every 4xx/5xx answer has this shape: AppErrors, FastAPI's request validation, Starlette's own
# 404/405 and unexpected failures alike (the handlers live in ``app.main``). Routes declare the
# answers they can give with :func:`error_responses`, so the OpenAPI schema shows them.


class ErrorItem(BaseModel):
    """One problem with a request: where (``loc``, as FastAPI spells it) and what."""

    loc: list[str | int]
    msg: str


class ErrorBody(BaseModel):
    """An error answer. ``errors`` is present only for a request that failed validation; some
    errors add fields of their own (a failed upload's ``kind``, a merge's submission counts)."""

    model_config = ConfigDict(extra="allow")

    detail: str = Field(description="a readable one-line summary")
    code: str = Field(description="a stable machine-readable name for the kind of error")
    errors: list[ErrorItem] | None = None


_DESCRIPTIONS = {
    400: "Bad request",
    401: "No, an unknown or a revoked bearer token",
    403: "Not allowed for this caller",
    404: "No such thing, or not visible to this caller",
    405: "Method not allowed",
    409: "Conflicts with the current state",
    413: "Upload too large",
    422: "The request or its file is invalid",
    429: "Quota exceeded, or too many requests (wrong tokens, uploads): see Retry-After",
    500: "Unexpected failure (a generic body, never a traceback)",
    503: "Unavailable for now: retry after Retry-After seconds",
}


def error_responses(*status_codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these status codes, each answered with :class:`ErrorBody`."""
    return {
        code: {"model": ErrorBody, "description": _DESCRIPTIONS.get(code, "Error")}
        for code in status_codes
    }
