"""Whether the database, the broker and the storage answer, each within a short timeout."""

import logging

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from app import storage
from app.config import Settings
from app.models import Submission
from app.models.submission import PENDING_STATUSES

log = logging.getLogger(__name__)


def _database(factory: sessionmaker[Session]) -> None:
    with factory() as session:
        session.execute(text("SELECT 1"))


def _broker(settings: Settings) -> None:
    import redis  # the scale extra: only a Celery deployment has a broker to check

    redis.Redis.from_url(
        settings.celery_broker_url, socket_connect_timeout=2, socket_timeout=2
    ).ping()


def check_all(settings: Settings, factory: sessionmaker[Session]) -> dict[str, str]:
    """``{"database": "ok" | reason, "broker": ..., "storage": ...}``."""
    checks = {"database": lambda: _database(factory), "storage": lambda: storage.check(settings)}
    if settings.scoring_backend == "celery":
        checks["broker"] = lambda: _broker(settings)
    result = {}
    for name, check in checks.items():
        try:
            check()
            result[name] = "ok"
        except Exception as exc:  # noqa: BLE001 - any failure is a reason to report
            log.warning("readiness: %s unreachable: %s", name, exc)
            result[name] = f"unreachable: {type(exc).__name__}: {str(exc)[:200]}"
    return result


def queue_depth(factory: sessionmaker[Session]) -> dict[str, int]:
    with factory() as session:
        rows = session.execute(
            select(Submission.status, func.count())
            .where(Submission.status.in_(PENDING_STATUSES))
            .group_by(Submission.status)
        )
        return {str(getattr(s, "value", s)): n for s, n in rows}
