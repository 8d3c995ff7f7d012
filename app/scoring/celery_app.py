"""Celery workers for scoring at scale: ``celery -A app.scoring.celery_app worker``.

Each worker scores with the same job function as the embedded thread, against the database in
``PODIUM_DATABASE_URL``; ``acks_late`` re-delivers a job whose worker died, and the job is
idempotent.
"""

from celery import Celery
from sqlalchemy.orm import Session, sessionmaker

import app.leaderboard.standings  # noqa: F401  (its session events keep the standings true)
from app.config import Settings, get_settings
from app.db import make_engine, make_session_factory


def make_celery(settings: Settings, factory: sessionmaker[Session] | None = None) -> Celery:
    celery = Celery("podium", broker=settings.celery_broker_url)
    celery.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
    )
    sessions: list[sessionmaker[Session]] = [factory] if factory else []

    @celery.task(name="podium.score_submission")
    def score_submission_task(submission_id: int, key_id: int | None = None) -> None:
        from app.scoring.jobs import run_job

        if not sessions:  # the worker's engine is made in the worker, not at import
            sessions.append(make_session_factory(make_engine(settings.database_url)))
        run_job(sessions[0], submission_id, key_id, settings)

    return celery


def __getattr__(name: str) -> Celery:
    # `celery -A app.scoring.celery_app` looks up `app`; build it only when asked.
    if name == "app":
        return make_celery(get_settings())
    raise AttributeError(name)
