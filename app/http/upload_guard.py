"""Checks made on an API upload before its body is read: the size it declares and who sends it.

FastAPI parses a multipart body before any dependency runs, so without this a 3 GB upload with a
wrong token would be read (and spooled to disk) before the 401. This ASGI middleware sits in
front of the upload routes and answers at once, without reading a byte of the body:

- 413 when ``Content-Length`` is above the upload limit (plus room for the multipart framing);
- 401 when there is no bearer token or no user has it, 429 when the client's address has
  failed too often (:mod:`app.auth.throttle`, which counts this failure too).

A body sent without ``Content-Length`` (chunked) is counted while the application reads it and
cut at the same limit with a 413 by :mod:`app.http.body_gate`, in front of this guard.
"""

import re
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.auth.service import user_for_token
from app.auth.throttle import FailedAuthLimiter, client_address
from app.auth.token_reader import TokenReader
from app.auth.tokens import hash_token
from app.config import Settings
from app.errors import AppError, PayloadTooLarge, RateLimited, Unauthorized, error_response
from app.http.body_gate import FRAMING_BYTES
from app.models import User
from app.ops.unavailable import outage

# The routes that take a file: submissions, answer keys and metric files; and bundles to import.
UPLOAD_ROUTES = re.compile(
    r"^/api/v1/competitions/[^/]+/(submissions|answer-key|custom-metric|phases/[^/]+/answer-key"
    r"|submissions/[0-9]+/code)/?$"
)
BUNDLE_ROUTE = re.compile(r"^/api/v1/competitions/import/?$")


@dataclass(frozen=True)
class GuardedUser:
    """Who the guard let in, and the Authorization header it checked."""

    user: User
    authorization: str


# Where the guard leaves the user in the request's state (read by app.deps).
GUARDED_USER = "podium.guarded_user"


class UploadGuard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        settings: Settings,
        session_factory: sessionmaker[Session],
        limiter: FailedAuthLimiter,
        tokens: TokenReader | None = None,
    ) -> None:
        self.app = app
        # PostgreSQL: the token read on the event loop (app.auth.token_reader); else a thread's.
        self._tokens = tokens
        self._settings = settings
        self._session_factory = session_factory
        self._limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ("POST", "PUT")
            or not (UPLOAD_ROUTES.match(scope["path"]) or BUNDLE_ROUTE.match(scope["path"]))
        ):
            await self.app(scope, receive, send)
            return
        bundle = BUNDLE_ROUTE.match(scope["path"]) is not None
        max_bytes = self._settings.bundle_max_bytes if bundle else self._settings.max_upload_bytes
        found = await self._check(
            Headers(scope=scope), max_bytes + FRAMING_BYTES, max_bytes, client_address(scope)
        )
        if isinstance(found, AppError):
            await error_response(found)(scope, receive, send)
            return
        # Authenticated once: the route's dependency takes this user instead of asking again.
        scope.setdefault("state", {})[GUARDED_USER] = found
        await self.app(scope, receive, send)

    async def _check(
        self, headers: Headers, limit: int, max_bytes: int, address: str
    ) -> AppError | GuardedUser:
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return _too_large(max_bytes)
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return Unauthorized("missing bearer token")
        try:
            user = await self._authenticate(address, token.strip())
        except (Unauthorized, RateLimited) as exc:
            return exc
        except Exception as exc:
            # Out here no exception handler runs: a database outage is answered 503 all the same.
            refusal = outage(exc)
            if refusal is None:
                raise
            return refusal
        return GuardedUser(user, f"{scheme} {token}")

    async def _authenticate(self, address: str, token: str) -> User:
        if self._tokens is not None:
            found = await self._tokens.user(hash_token(token, secret_key=self._settings.secret_key))
            if found is not None:
                return found  # a right token costs the limiter nothing (app.auth.throttle)
            check = _unknown_token
        else:
            check = lambda: self._check_token(token)  # noqa: E731
        # A wrong token is counted, and maybe refused 429, on a worker thread: the limiter's
        # counters may be in Redis or the database.
        return await run_in_threadpool(self._limiter.attempt_token, address, token, check)

    def _check_token(self, token: str) -> User:
        with self._session_factory() as session:
            # Detached with its columns loaded: the route's session takes it without a query.
            return user_for_token(session, token=token, secret_key=self._settings.secret_key)


def _unknown_token() -> User:
    raise Unauthorized("unknown or revoked token")


def _too_large(max_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"the file is larger than the {max_bytes:,}-byte upload limit")
