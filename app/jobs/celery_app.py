"""Celery workers for scoring at scale: ``podium worker`` (and ``podium beat`` for the sweep).

Each worker scores with the same job function as the embedded thread, against the database in
``PODIUM_DATABASE_URL``. Celery's own machinery covers the broker side (``acks_late``,
``reject_on_worker_lost``, prefetch 1, a hard time limit as a backstop); the database covers the
rest: a job claims its submission under a lease, so a redelivered task stops, and the sweep
(task ``podium.sweep``, scheduled by beat) re-enqueues what no worker holds.

Code submissions' runs are a task of their own, routed to the queue ``code``: a worker started
with ``podium worker --queues code`` runs only them (``PODIUM_CODE_CONCURRENCY`` at once), one
with ``--queues celery`` only the scoring of uploaded files; the default takes both.
"""

from celery import Celery
from sqlalchemy.orm import Session, sessionmaker

import app.leaderboard.standings  # noqa: F401  (its session events keep the standings true)
from app.config import Settings, get_settings
from app.db import make_engine, make_session_factory
from app.jobs.names import (
    CODE_QUEUE,
    CODE_TASK,
    DEFAULT_QUEUE,
    EPISODE_TASK,
    SCORE_TASK,
    SWEEP_TASK,
)

__all__ = ["CODE_QUEUE", "CODE_TASK", "DEFAULT_QUEUE", "SCORE_TASK", "SWEEP_TASK", "make_celery"]


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
        task_default_queue=DEFAULT_QUEUE,
        task_routes={CODE_TASK: {"queue": CODE_QUEUE}, EPISODE_TASK: {"queue": CODE_QUEUE}},
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

    # A run may take its phase's wall limit (at most PODIUM_CODE_MAX_WALL_SECONDS), then scoring.
    @celery.task(
        name=CODE_TASK,
        shared=False,
        time_limit=int(
            settings.code_max_wall_seconds + settings.scoring_time_limit_seconds * 2 + 60
        ),
    )
    def run_code_task(submission_id: int, key_id: int | None = None) -> None:
        from app.jobs.score import run_job
        from app.jobs.turns import next_in_line

        factory = session_factory()
        for episode_id in run_job(factory, submission_id, key_id, settings):
            play_episode_task.apply_async(args=[episode_id])
        following = next_in_line(factory, submission_id)
        if following is not None:  # the team's next run, waiting for this one to end
            run_code_task.apply_async(args=[following, None])

    # A simulation episode: the ladder's next ones are queued by the one that settles.
    @celery.task(
        name=EPISODE_TASK,
        shared=False,
        time_limit=int(3600 + settings.scoring_time_limit_seconds + 120),
    )
    def play_episode_task(episode_id: int) -> None:
        from app.jobs.episodes import play_episode

        for following in play_episode(session_factory(), episode_id, settings):
            play_episode_task.apply_async(args=[following])

    @celery.task(name=SWEEP_TASK, shared=False)
    def sweep_task() -> dict[str, int]:
        from app.jobs.sweep import sweep

        report = sweep(
            session_factory(),
            lambda submission_id: score_submission_task.apply_async(args=[submission_id, None]),
            settings=settings,
            enqueue_code=lambda submission_id: run_code_task.apply_async(
                args=[submission_id, None]
            ),
            enqueue_episode=lambda episode_id: play_episode_task.apply_async(args=[episode_id]),
        )
        return vars(report)

    return celery


def __getattr__(name: str) -> Celery:
    # `celery -A app.jobs.celery_app` looks up `app`; build it only when asked.
    if name == "app":
        return make_celery(get_settings())
    raise AttributeError(name)
