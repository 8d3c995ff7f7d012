"""Celery workers for scoring at scale: ``podium worker`` (and ``podium beat`` for the sweep).

Each worker scores with the same job function as the embedded thread, against the database in
``PODIUM_DATABASE_URL``. Celery's own machinery covers the broker side (``acks_late``,
``reject_on_worker_lost``, prefetch 1, a hard time limit as a backstop); the database covers the
rest: a job claims its submission under a lease, so a redelivered task stops, and the sweep
(task ``podium.sweep``, scheduled by beat) re-enqueues what no worker holds.
"""

from celery import Celery
from sqlalchemy.orm import Session, sessionmaker

import app.leaderboard.standings  # noqa: F401  (its session events keep the standings true)
from app.config import Settings, get_settings
from app.db import make_engine, make_session_factory

SCORE_TASK = "podium.score_submission"
SWEEP_TASK = "podium.sweep"


def make_celery(settings: Settings, factory: sessionmaker[Session] | None = None) -> Celery:
    celery = Celery("podium", broker=settings.celery_broker_url)
    celery.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        # An upload must not wait on a broker that is down: publishing fails fast, the
        # submission stays queued in the database and the sweep delivers it later.
        task_publish_retry=False,
        broker_transport_options={"socket_connect_timeout": 2, "socket_timeout": 5},
        # The job stops itself at its competition's limit; this only catches a stuck worker.
        task_time_limit=int(settings.scoring_time_limit_seconds * 2 + 60),
        worker_hijack_root_logger=False,
        beat_schedule={
            "podium-sweep": {"task": SWEEP_TASK, "schedule": settings.sweep_interval_seconds}
        },
    )
    sessions: list[sessionmaker[Session]] = [factory] if factory else []

    def session_factory() -> sessionmaker[Session]:
        if not sessions:  # the worker's engine is made in the worker, not at import
            sessions.append(make_session_factory(make_engine(settings.database_url)))
        return sessions[0]

    @celery.task(name=SCORE_TASK, shared=False)
    def score_submission_task(submission_id: int, key_id: int | None = None) -> None:
        from app.jobs.score import run_job

        run_job(session_factory(), submission_id, key_id, settings)

    @celery.task(name=SWEEP_TASK, shared=False)
    def sweep_task() -> dict[str, int]:
        from app.jobs.sweep import sweep

        report = sweep(
            session_factory(),
            lambda submission_id: score_submission_task.apply_async(args=[submission_id, None]),
            settings=settings,
        )
        return vars(report)

    return celery


def __getattr__(name: str) -> Celery:
    # `celery -A app.jobs.celery_app` looks up `app`; build it only when asked.
    if name == "app":
        return make_celery(get_settings())
    raise AttributeError(name)
