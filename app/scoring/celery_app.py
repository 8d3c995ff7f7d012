"""Celery workers for scoring at scale: ``celery -A app.scoring.celery_app worker``.

Each worker scores with the same job function as the embedded thread, against the database in
``PODIUM_DATABASE_URL``; ``acks_late`` re-delivers a job whose worker died, and the job is idempotent.
"""

from functools import lru_cache

from celery import Celery

from app.config import Settings, get_settings
from app.db import make_engine, make_session_factory


def make_celery(settings: Settings) -> Celery:
    celery = Celery("podium", broker=settings.celery_broker_url)
    celery.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
    )

    @celery.task(name="podium.score_submission")
    def score_submission_task(submission_id: int) -> None:
        from app.scoring.jobs import score_submission

        score_submission(_factory(), submission_id)

    return celery


@lru_cache
def _factory():  # type: ignore[no-untyped-def]
    return make_session_factory(make_engine(get_settings().database_url))


app = make_celery(get_settings())
