"""Outages answer 503 with a reason and ``Retry-After``, never a bare 500.

An unreachable or locked database, an unreachable or failing object store, and a full disk, are
conditions that pass: the caller is told to come back, nothing it sent was accepted (no 202 went
out), and the service recovers by itself when the cause goes (connections are re-checked by the
pool's pre-ping; the object store is asked again on the next request).
"""

import errno
import logging

from botocore.exceptions import ClientError
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.storage.s3 import OUTAGES, is_outage

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
_FULL = {errno.ENOSPC, errno.EDQUOT}
STORAGE_DETAIL = "file storage is unavailable; try again shortly"


def unavailable(detail: str, reason: str) -> JSONResponse:
    return JSONResponse(
        status_code=503,
        content={"detail": detail, "code": "unavailable", "reason": reason},
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def install(app: FastAPI) -> None:
    @app.exception_handler(OperationalError)
    @app.exception_handler(PoolTimeout)
    async def database_unavailable(_request: Request, exc: Exception) -> JSONResponse:
        log.warning("database unavailable: %s", exc)
        text = str(exc).lower()
        reason = "database_busy" if "locked" in text or "busy" in text else "database_unreachable"
        return unavailable("the database is unavailable; try again shortly", reason)

    @app.exception_handler(DBAPIError)
    async def database_disconnected(_request: Request, exc: DBAPIError) -> JSONResponse:
        if not exc.connection_invalidated:
            raise exc
        log.warning("database connection lost: %s", exc)
        return unavailable("the database is unavailable; try again shortly", "database_unreachable")

    # The S3 backend raises StorageUnavailable (an AppError, answered the same way); these catch
    # what reaches here from boto without passing through it.
    @app.exception_handler(ClientError)
    async def storage_failing(_request: Request, exc: ClientError) -> JSONResponse:
        if not is_outage(exc):
            raise exc
        log.warning("storage failing: %s", exc)
        return unavailable(STORAGE_DETAIL, "storage_unreachable")

    for outage in OUTAGES:

        @app.exception_handler(outage)
        async def storage_unreachable(_request: Request, exc: Exception) -> JSONResponse:
            log.warning("storage unreachable: %s", exc)
            return unavailable(STORAGE_DETAIL, "storage_unreachable")

    @app.exception_handler(OSError)
    async def storage_full(_request: Request, exc: OSError) -> JSONResponse:
        if exc.errno not in _FULL:
            raise exc
        log.error("storage full: %s", exc)
        return unavailable("storage is full; try again later", "storage_full")
