"""Where scoring jobs run: inline in a server thread (the default), eagerly, or on Celery.

A job is a submission id, plus an answer-key id when it rescored against a given key version.
A code submission's run (``code=True``) has its own lane: ``PODIUM_CODE_CONCURRENCY`` threads in
the server, Celery's queue ``code`` on workers, so that a long run never holds up the scoring of
uploaded files. A run that settles hands its team's next waiting run to the lane
(:func:`app.jobs.turns.next_in_line`). A simulation phase's episodes are jobs of the code lane
too (:mod:`app.jobs.episodes`): each one that settles queues the ladder's next.
"""

import logging
import queue
import threading
from typing import NamedTuple, Protocol

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.jobs.names import CODE_TASK, EPISODE_TASK, SCORE_TASK
from app.jobs.score import run_job, score_submissions
from app.jobs.turns import next_in_line

log = logging.getLogger(__name__)


class EpisodeJob(NamedTuple):
    """A simulation episode to play, on the code lane."""

    episode_id: int


Job = tuple[int, int | None] | EpisodeJob | None  # (submission id, key id); None stops a thread


class ScoringQueue(Protocol):
    def enqueue(
        self, submission_id: int, key_id: int | None = None, *, code: bool = False
    ) -> None: ...
    def enqueue_episode(self, episode_id: int) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...


class EagerQueue:
    """Scores during the enqueue call itself: deterministic, for tests and one-shot tools.

    Simulation episodes are kept in ``episodes`` instead of played at once (each one played
    queues the next: the ladder would never return); :meth:`play_episodes` plays them."""

    def __init__(self, factory: sessionmaker[Session], settings: Settings | None = None) -> None:
        self.factory = factory
        self.settings = settings
        self.episodes: list[int] = []

    def enqueue_episode(self, episode_id: int) -> None:
        self.episodes.append(episode_id)

    def play_episodes(self, limit: int) -> int:
        """Play up to ``limit`` waiting episodes in order (those they queue join the end)."""
        from app.jobs.episodes import play_episode

        played = 0
        while self.episodes and played < limit:
            episode_id = self.episodes.pop(0)
            self.episodes.extend(
                play_episode(self.factory, episode_id, self.settings or Settings())
            )
            played += 1
        return played

    def enqueue(self, submission_id: int, key_id: int | None = None, *, code: bool = False) -> None:
        self.episodes.extend(run_job(self.factory, submission_id, key_id, self.settings))
        if code and (following := next_in_line(self.factory, submission_id)) is not None:
            self.enqueue(following, code=True)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


class ThreadQueue:
    """Scoring threads inside the server process; what is queued survives restarts in the DB.

    One thread scores uploaded files in order, those already waiting together (up to
    ``scoring_batch``: :func:`app.jobs.score.score_submissions`); ``code_concurrency`` more run
    code submissions, one at a time each.
    """

    def __init__(self, factory: sessionmaker[Session], settings: Settings | None = None) -> None:
        self.factory = factory
        self.settings = settings
        self._jobs: queue.Queue[Job] = queue.Queue()
        self._code_jobs: queue.Queue[Job] = queue.Queue()
        self._threads: list[tuple[queue.Queue[Job], threading.Thread]] = []
        self.code_threads = (settings or Settings()).code_concurrency
        self.batch = (settings or Settings()).scoring_batch

    def enqueue(self, submission_id: int, key_id: int | None = None, *, code: bool = False) -> None:
        (self._code_jobs if code else self._jobs).put((submission_id, key_id))

    def enqueue_episode(self, episode_id: int) -> None:
        self._code_jobs.put(EpisodeJob(episode_id))

    def start(self) -> None:
        lanes = [(self._jobs, False, "podium-scorer")] + [
            (self._code_jobs, True, f"podium-code-{n}") for n in range(self.code_threads)
        ]
        for jobs, code, name in lanes:
            thread = threading.Thread(target=self._run, args=(jobs, code), name=name, daemon=True)
            thread.start()
            self._threads.append((jobs, thread))

    def stop(self) -> None:
        for jobs, _thread in self._threads:
            jobs.put(None)
        for _jobs, thread in self._threads:
            thread.join(timeout=30)
        self._threads = []

    def join(self) -> None:
        """Wait until every job queued so far has finished (and the runs they handed over)."""
        self._jobs.join()
        self._code_jobs.join()

    def _run(self, jobs: "queue.Queue[Job]", code: bool) -> None:
        while True:
            batch = [jobs.get()]
            # The file lane takes what else is waiting already (never waits for more): on a
            # deadline's flood the queue is deep, and a batch shares its statements out.
            while not code and len(batch) < self.batch and batch[-1] is not None:
                try:
                    batch.append(jobs.get_nowait())
                except queue.Empty:
                    break
            try:
                self._work([job for job in batch if job is not None], code, jobs)
            finally:
                for _ in batch:
                    jobs.task_done()
            if batch[-1] is None:
                return

    def _work(
        self,
        batch: list[tuple[int, int | None] | EpisodeJob],
        code: bool,
        jobs: "queue.Queue[Job]",
    ) -> None:
        for episode in [job for job in batch if isinstance(job, EpisodeJob)]:
            try:
                from app.jobs.episodes import play_episode

                settings = self.settings or Settings()
                for following in play_episode(self.factory, episode.episode_id, settings):
                    jobs.put(EpisodeJob(following))
            except Exception:  # noqa: BLE001 - the thread must outlive any one episode
                log.exception("episode %s failed", episode.episode_id)
        batch = [job for job in batch if not isinstance(job, EpisodeJob)]
        new = [submission_id for submission_id, key_id in batch if key_id is None]
        if len(new) > 1:
            try:
                score_submissions(self.factory, new, self.settings)
            except Exception:  # noqa: BLE001 - the thread must outlive any one batch
                log.exception("scoring jobs %s failed", new)
            batch = [job for job in batch if job[1] is not None]
        for job in batch:
            try:
                for episode_id in run_job(self.factory, job[0], job[1], self.settings):
                    jobs.put(EpisodeJob(episode_id))
                if code and (following := next_in_line(self.factory, job[0])) is not None:
                    jobs.put((following, None))
            except Exception:  # noqa: BLE001 - the thread must outlive any one job
                log.exception("scoring job %s failed", job)


class CeleryQueue:
    """Hands jobs to Celery workers (``podium worker``).

    A broker that is down never fails the request that enqueues: the submission is committed as
    queued already, and the sweep delivers it once the broker is back.
    """

    def __init__(self, settings: Settings) -> None:
        from app.jobs.celery_app import make_celery  # celery is an optional extra

        self.celery = make_celery(settings)
        # The server's publisher tries a broker that is down once: kombu's default connect retry
        # (sleep 2 s, then 4 s more) made each upload wait 6 s for a refusal. Workers and beat
        # keep the default: they wait for their broker by design.
        options = self.celery.conf.broker_transport_options
        self.celery.conf.broker_transport_options = {**options, "max_retries": 0}

    def enqueue(self, submission_id: int, key_id: int | None = None, *, code: bool = False) -> None:
        # The task's name routes it: a code run goes to the queue named "code" (celery_app).
        task = CODE_TASK if code else SCORE_TASK
        try:
            self.celery.send_task(task, args=[submission_id, key_id])
        except Exception:  # noqa: BLE001 - any broker failure: the sweep delivers it later
            log.warning("could not hand submission %s to the broker; the sweep will", submission_id)

    def enqueue_episode(self, episode_id: int) -> None:
        try:
            self.celery.send_task(EPISODE_TASK, args=[episode_id])
        except Exception:  # noqa: BLE001 - any broker failure: the sweep delivers it later
            log.warning("could not hand episode %s to the broker; the sweep will", episode_id)

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
