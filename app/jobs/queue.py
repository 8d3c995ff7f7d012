"""Where scoring jobs run: inline in a server thread (the default), eagerly, or on Celery.

A job is a submission id, plus an answer-key id when it rescored against a given key version.
"""

import logging
import queue
import threading
from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.jobs.score import run_job

log = logging.getLogger(__name__)


class ScoringQueue(Protocol):
    def enqueue(self, submission_id: int, key_id: int | None = None) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...


class EagerQueue:
    """Scores during the enqueue call itself: deterministic, for tests and one-shot tools."""

    def __init__(self, factory: sessionmaker[Session], settings: Settings | None = None) -> None:
        self.factory = factory
        self.settings = settings

    def enqueue(self, submission_id: int, key_id: int | None = None) -> None:
        run_job(self.factory, submission_id, key_id, self.settings)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


class ThreadQueue:
    """A scoring thread inside the server process; what is queued survives restarts in the DB."""

    def __init__(self, factory: sessionmaker[Session], settings: Settings | None = None) -> None:
        self.factory = factory
        self.settings = settings
        self._jobs: queue.Queue[tuple[int, int | None] | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def enqueue(self, submission_id: int, key_id: int | None = None) -> None:
        self._jobs.put((submission_id, key_id))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="podium-scorer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(timeout=30)
            self._thread = None

    def join(self) -> None:
        """Wait until every job queued so far has finished."""
        self._jobs.join()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                run_job(self.factory, job[0], job[1], self.settings)
            except Exception:  # noqa: BLE001 - the thread must outlive any one job
                log.exception("scoring job %s failed", job)
            finally:
                self._jobs.task_done()


class CeleryQueue:
    """Hands jobs to Celery workers (``podium worker``).

    A broker that is down never fails the request that enqueues: the submission is committed as
    queued already, and the sweep delivers it once the broker is back.
    """

    def __init__(self, settings: Settings) -> None:
        from app.jobs.celery_app import make_celery

        self.celery = make_celery(settings)

    def enqueue(self, submission_id: int, key_id: int | None = None) -> None:
        try:
            self.celery.send_task("podium.score_submission", args=[submission_id, key_id])
        except Exception:  # noqa: BLE001 - any broker failure: the sweep delivers it later
            log.warning("could not hand submission %s to the broker; the sweep will", submission_id)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def make_queue(settings: Settings, factory: sessionmaker[Session]) -> ScoringQueue:
    if settings.scoring_backend == "eager":
        return EagerQueue(factory, settings)
    if settings.scoring_backend == "celery":
        return CeleryQueue(settings)
    return ThreadQueue(factory, settings)
