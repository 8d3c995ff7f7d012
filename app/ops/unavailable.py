"""Outages answer 503 with a reason and ``Retry-After``, never a bare 500.

An unreachable or locked database, an unreachable or failing object store, and a full disk, are
conditions that pass: the caller is told to come back, nothing it sent was accepted (no 202 went
out), and the service recovers by itself when the cause goes (an idle connection is pinged
before it is reused and a failed one renews the pool, app.db; the object store is asked again on
the next request).
"""

import errno
import logging

import psycopg
from botocore.exceptions import ClientError
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.errors import ServiceUnavailable, StorageUnavailable, error_response
from app.storage.s3 import OUTAGES, is_outage

log = logging.getLogger(__name__)

_FULL = {errno.ENOSPC, errno.EDQUOT}
DATABASE_DETAIL = "the database is unavailable; try again shortly"


def outage(exc: BaseException) -> ServiceUnavailable | None:
    """The 503 that ``exc`` deserves when it is a condition that passes; None otherwise."""
    if isinstance(exc, ServiceUnavailable):
        return exc
    if isinstance(exc, OperationalError | PoolTimeout):
        text = str(exc).lower()
        reason = "database_busy" if "locked" in text or "busy" in text else "database_unreachable"
        return ServiceUnavailable(DATABASE_DETAIL, reason=reason)
    if isinstance(exc, psycopg.OperationalError):
        # Raised as it is by the upload guard's token read (app.auth.token_reader), which
        # talks to PostgreSQL without SQLAlchemy.
        return ServiceUnavailable(DATABASE_DETAIL, reason="database_unreachable")
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return ServiceUnavailable(DATABASE_DETAIL, reason="database_unreachable")
    # The S3 backend raises StorageUnavailable itself; these are boto's errors that reach here
    # without passing through it.
    if isinstance(exc, OUTAGES) or isinstance(exc, ClientError) and is_outage(exc):
        return StorageUnavailable()
    if isinstance(exc, OSError) and exc.errno in _FULL:
        return ServiceUnavailable("storage is full; try again later", reason="storage_full")
    return None


def install(app: FastAPI) -> None:
    async def answer(_request: Request, exc: Exception) -> JSONResponse:
        found = outage(exc)
        if found is None:
            raise exc
        log.warning("unavailable (%s): %s", found.extra["reason"], exc)
        return error_response(found)

    for kind in (OperationalError, PoolTimeout, DBAPIError, ClientError, *OUTAGES, OSError):
        app.add_exception_handler(kind, answer)
