"""The sweep: hand out again what no scorer holds.

- ``queued`` submissions whose delivery is overdue (never delivered: the broker was down, the
  server died before its thread got to them) are enqueued again;
- ``running`` and ``scoring`` ones whose lease lapsed (the worker died, or hung past its time
  limit) go back to ``queued`` and are enqueued again (a code run starts over: nothing of the lost
  run was kept, and its score is written once, by the run that settles it);
- one that has used up its attempts fails instead, with a reason for the host only and a refund;
- a phase that has ended gets its ``revealed`` entry in the record (app.ledger).

Run by Celery beat (``podium beat``), by ``podium sweep``, and by the embedded thread backend at
start-up and periodically. Enqueuing twice is harmless: a job claims its submission atomically.
"""

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import unit_of_work
from app.jobs.lease import give_up, now
from app.ledger.service import reveal_ended
from app.models import Phase, Submission, SubmissionStatus
from app.models.phase import KIND_CODE, KIND_SIMULATION
from app.models.submission import HELD_STATUSES
from app.ops.telemetry import SWEEP_ACTIONS

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    requeued: int = 0  # queued, delivery overdue
    expired: int = 0  # scoring, lease lapsed: back to queued
    failed: int = 0  # out of attempts
    revealed: int = 0  # phases ended since the record last said so (app.ledger)


def sweep(
    factory: sessionmaker[Session],
    enqueue: Callable[[int], None],
    *,
    settings: Settings,
    grace_seconds: float | None = None,
    enqueue_code: Callable[[int], None] | None = None,
    enqueue_episode: Callable[[int], None] | None = None,
) -> SweepReport:
    """One pass. ``grace_seconds``: how long a queued submission may wait for its delivery
    (0 at a thread backend's start-up, when nothing queued can be in its memory).
    ``enqueue_code``: where code submissions go (their own lane), when not to ``enqueue``.
    ``enqueue_episode``: where simulation episodes go; with it, queued and lapsed episodes are
    handed out again and each simulation phase's ladder is topped up."""
    at = now()
    grace = timedelta(
        seconds=settings.sweep_grace_seconds if grace_seconds is None else grace_seconds
    )
    report = SweepReport()
    todo: list[int] = []
    with unit_of_work(factory) as session:
        overdue_queued = and_(
            Submission.status == SubmissionStatus.queued,
            or_(
                and_(Submission.lease_expires_at.is_(None), Submission.created_at <= at - grace),
                Submission.lease_expires_at <= at,
            ),
        )
        lapsed = and_(
            Submission.status.in_(HELD_STATUSES),
            or_(Submission.lease_expires_at.is_(None), Submission.lease_expires_at < at),
        )
        rows = session.scalars(
            select(Submission)
            .where(or_(overdue_queued, lapsed))
            .order_by(Submission.id)
            .with_for_update(skip_locked=True)
        ).all()
        for submission in rows:
            if submission.status in HELD_STATUSES:
                if submission.attempts >= settings.scoring_max_attempts:
                    give_up(submission, settings)
                    report.failed += 1
                    continue
                submission.status = SubmissionStatus.queued
                report.expired += 1
            else:
                report.requeued += 1
            # The next delivery is due after another grace period, not at every pass.
            submission.lease_expires_at = at + timedelta(seconds=settings.sweep_grace_seconds)
            todo.append(submission.id)
        code_phases = (
            set(
                session.scalars(
                    select(Phase.id).where(Phase.submission_kind.in_((KIND_CODE, KIND_SIMULATION)))
                )
            )
            if todo and enqueue_code is not None
            else set()
        )
        lanes = {row.id: enqueue_code for row in rows if row.phase_id in code_phases}
    if enqueue_episode is not None:
        from app.jobs.episodes import sweep_episodes  # the simulation lane's own imports

        for episode_id in sweep_episodes(factory, grace_seconds=grace.total_seconds()):
            try:
                enqueue_episode(episode_id)
            except Exception:  # noqa: BLE001 - the broker is down: the next pass tries again
                log.warning("sweep could not enqueue episode %s", episode_id, exc_info=True)
    try:
        with unit_of_work(factory) as session:
            report.revealed = reveal_ended(session, now=at)
    except Exception:  # noqa: BLE001 - the next pass says it instead
        log.warning("sweep could not record the phases that ended", exc_info=True)
    for action in ("requeued", "expired", "failed"):
        if getattr(report, action):
            SWEEP_ACTIONS.labels(action).inc(getattr(report, action))
    for submission_id in todo:
        try:
            (lanes.get(submission_id) or enqueue)(submission_id)
        except Exception:  # noqa: BLE001 - the broker is down: the next pass tries again
            log.warning("sweep could not enqueue submission %s", submission_id, exc_info=True)
    if todo or report.failed:
        log.info(
            "sweep: %d requeued, %d expired leases, %d out of attempts",
            report.requeued,
            report.expired,
            report.failed,
        )
    return report


class Sweeper:
    """The embedded backend's periodic sweep: a daemon thread, one pass every interval."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        enqueue: Callable[[int], None],
        settings: Settings,
        enqueue_code: Callable[[int], None] | None = None,
        enqueue_episode: Callable[[int], None] | None = None,
    ) -> None:
        self.factory, self.enqueue, self.settings = factory, enqueue, settings
        self.enqueue_code = enqueue_code
        self.enqueue_episode = enqueue_episode
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="podium-sweep", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.settings.sweep_interval_seconds):
            try:
                sweep(
                    self.factory,
                    self.enqueue,
                    settings=self.settings,
                    enqueue_code=self.enqueue_code,
                    enqueue_episode=self.enqueue_episode,
                )
            except Exception:  # noqa: BLE001 - the database is away: try at the next interval
                log.warning(
                    "sweep failed; trying again in %s s", self.settings.sweep_interval_seconds
                )
