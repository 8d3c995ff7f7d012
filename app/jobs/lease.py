"""Leases: which scorer holds a submission, until when, and at which attempt.

The database is the truth. A scorer claims a submission with one conditional UPDATE (queued, or
held with a lapsed lease), which bumps ``attempts``; that number is the claim's token. A held
submission is ``running`` (a code run in the jail) or ``scoring``; the holder may move it from one
to the other (:func:`advance`) without giving it up. The
holder renews the lease while it scores, and writes its outcome only while the token is still
the submission's (a scorer whose lease lapsed and was taken over writes nothing). A sweep puts
back what nobody holds any more (:mod:`app.jobs.sweep`).
"""

import functools
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Integer, and_, bindparam, or_, update
from sqlalchemy.orm import Session, object_session, sessionmaker

from app.config import Settings
from app.db import unit_of_work
from app.events.stream import SUBMISSION_FAILED, emit
from app.leaderboard.standings import UNSCORED_ONLY
from app.models import Submission, SubmissionStatus
from app.models.submission import HELD_STATUSES
from app.ops.telemetry import SCORING_FAILURES

log = logging.getLogger(__name__)


def now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Lease:
    submission_id: int
    attempt: int  # the token: the submission's attempts when this claim was made
    seconds: float


def claimable(at: datetime):  # type: ignore[no-untyped-def]
    """Queued, or held (running, scoring) under a lease that has lapsed."""
    return or_(
        Submission.status == SubmissionStatus.queued,
        and_(
            Submission.status.in_(HELD_STATUSES),
            or_(Submission.lease_expires_at.is_(None), Submission.lease_expires_at < at),
        ),
    )


def try_claim(
    session: Session,
    submission_id: int,
    *,
    seconds: float,
    status: SubmissionStatus = SubmissionStatus.scoring,
    also: Any = None,
) -> Lease | None:
    """Take the submission for scoring (or, with ``status=running``, for its code run), or None
    when someone holds it or it is finished. ``also``: a further condition of the claim, part of
    the same statement (a code run's turn in its team)."""
    assert status in HELD_STATUSES
    at = now()
    # Built once, and run on the session's connection as the Core statement it is: it moves the
    # submission between unscored statuses only, so no board can change (no standings hook).
    statement = _claim_statement(status)
    if also is not None:
        statement = statement.where(also)
    attempt = session.connection().scalar(
        statement,
        {"submission_id": submission_id, "at": at, "until": at + timedelta(seconds=seconds)},
    )
    return None if attempt is None else Lease(submission_id, attempt, seconds)


def try_claim_many(
    session: Session, submission_ids: list[int], *, seconds: float
) -> dict[int, Lease]:
    """:func:`try_claim` for several submissions in one statement (a scorer taking what its
    queue holds): the leases of those it took, by submission id."""
    if len(submission_ids) == 1:  # the statement of one, without an expanding IN to render
        [submission_id] = submission_ids
        lease = try_claim(session, submission_id, seconds=seconds)
        return {} if lease is None else {submission_id: lease}
    if not submission_ids:
        return {}
    at = now()
    taken = session.connection().execute(
        _claim_many_statement(),
        {
            "submission_ids": sorted(submission_ids),
            "at": at,
            "until": at + timedelta(seconds=seconds),
        },
    )
    return {row.id: Lease(row.id, row.attempts, seconds) for row in taken}


def _claiming(status: SubmissionStatus, which: Any):  # type: ignore[no-untyped-def]
    table = Submission.__table__
    at = bindparam("at", type_=table.c.started_at.type)
    return (
        update(table)
        .where(which)
        .where(claimable(at))  # type: ignore[arg-type]
        .values(
            status=status,
            attempts=table.c.attempts + 1,
            started_at=at,
            lease_expires_at=bindparam("until", type_=table.c.started_at.type),
        )
    )


@functools.cache
def _claim_statement(status: SubmissionStatus):  # type: ignore[no-untyped-def]
    which = Submission.__table__.c.id == bindparam("submission_id", type_=Integer)
    return _claiming(status, which).returning(Submission.__table__.c.attempts)


@functools.cache
def _claim_many_statement():  # type: ignore[no-untyped-def]
    table = Submission.__table__
    which = table.c.id.in_(bindparam("submission_ids", expanding=True))
    return _claiming(SubmissionStatus.scoring, which).returning(table.c.id, table.c.attempts)


def held(lease: Lease):  # type: ignore[no-untyped-def]
    """The condition under which ``lease`` still holds its submission."""
    return _held(lease.submission_id, lease.attempt)


def held_as_parameters():  # type: ignore[no-untyped-def]
    """:func:`held` for a statement built once: the lease in parameters ``submission_id`` and
    ``attempt`` (:func:`lease_parameters`)."""
    return _held(bindparam("submission_id", type_=Integer), bindparam("attempt", type_=Integer))


def lease_parameters(lease: Lease) -> dict[str, int]:
    return {"submission_id": lease.submission_id, "attempt": lease.attempt}


def _held(submission_id: Any, attempt: Any):  # type: ignore[no-untyped-def]
    return and_(
        Submission.id == submission_id,
        Submission.status.in_(HELD_STATUSES),
        Submission.attempts == attempt,
    )


def advance(factory: sessionmaker[Session], lease: Lease, status: SubmissionStatus) -> bool:
    """Move a held submission to another held status (a code run's output goes to ``scoring``),
    committed at once so that readers see it; False when the lease no longer holds it."""
    assert status in HELD_STATUSES
    with unit_of_work(factory) as session:
        result = session.execute(
            update(Submission)
            .where(held(lease))
            .values(status=status)
            .execution_options(synchronize_session=False, **{UNSCORED_ONLY: True})
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def renew(factory: sessionmaker[Session], lease: Lease) -> bool:
    with unit_of_work(factory) as session:
        result = session.execute(
            update(Submission)
            .where(held(lease))
            .values(lease_expires_at=now() + timedelta(seconds=lease.seconds))
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


@contextmanager
def renewing(
    factory: sessionmaker[Session], lease: Lease, *, until: float | None = None
) -> Iterator[None]:
    """Renew ``lease`` every third of its length while the block runs, for at most ``until``
    seconds: a job stuck past its time limit lets its lease lapse, and the sweep takes over.

    One thread of the process renews every lease held in it (:class:`Renewer`): a thread
    started and joined for each job cost about 0.3 ms of CPU, most jobs last milliseconds, and
    the first renewal is due after a third of the lease."""
    held_lease = renewer.hold(factory, lease, until=until)
    try:
        yield
    finally:
        renewer.release(held_lease)


@dataclass
class _Held:
    factory: sessionmaker[Session]
    lease: Lease
    due: float  # time.monotonic() of the next renewal
    stop_at: float | None  # no renewal after this


class Renewer:
    """The one thread that renews the leases held in this process, each every third of its
    length, in order of when it is due. Started on first use, and anew in a forked child."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        # Also in a forked child (a Celery worker): the parent's thread does not run there, and
        # its lock may have been held at the fork.
        self._changed = threading.Condition()
        self._held: dict[int, _Held] = {}
        self._next_token = 0
        self._thread: threading.Thread | None = None

    def hold(
        self, factory: sessionmaker[Session], lease: Lease, *, until: float | None = None
    ) -> int:
        started = time.monotonic()
        entry = _Held(
            factory,
            lease,
            due=started + lease.seconds / 3,
            stop_at=None if until is None else started + until,
        )
        with self._changed:
            self._next_token += 1
            token = self._next_token
            self._held[token] = entry
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="leases", daemon=True)
                self._thread.start()
            self._changed.notify()
        return token

    def release(self, token: int) -> None:
        with self._changed:
            self._held.pop(token, None)

    def held(self) -> int:
        """How many leases are held now (tests)."""
        with self._changed:
            return len(self._held)

    def _run(self) -> None:
        while True:
            with self._changed:
                at = time.monotonic()
                due = [(t, e) for t, e in self._held.items() if e.due <= at]
                if not due:
                    soonest = min((e.due for e in self._held.values()), default=at + 60)
                    self._changed.wait(timeout=max(soonest - at, 0.001))
                    continue
            for token, entry in due:
                self._renew(token, entry)

    def _renew(self, token: int, entry: _Held) -> None:
        lease = entry.lease
        if entry.stop_at is not None and time.monotonic() > entry.stop_at:
            self.release(token)  # stuck past its limit: the lease lapses, the sweep takes over
            return
        try:
            renewed = renew(entry.factory, lease)
        except Exception:  # noqa: BLE001 - a database hiccup: try again next round
            log.warning("could not renew the lease on submission %s", lease.submission_id)
            renewed = True
        with self._changed:
            if token not in self._held:
                return  # the job ended meanwhile (and may have settled: nothing was lost)
            if renewed:
                entry.due = time.monotonic() + lease.seconds / 3
                return
            self._held.pop(token)
        log.warning("lost the lease on submission %s", lease.submission_id)


renewer = Renewer()
os.register_at_fork(after_in_child=renewer._reset)


def put_back(factory: sessionmaker[Session], lease: Lease) -> bool:
    """Hand the submission back to the queue without using up an attempt, for the next sweep to
    deliver: what stopped it was neither its fault nor the scorer's (the file store was down)."""
    with unit_of_work(factory) as session:
        result = session.execute(
            update(Submission)
            .where(held(lease))
            .values(
                status=SubmissionStatus.queued,
                attempts=Submission.attempts - 1,
                lease_expires_at=now(),
            )
            .execution_options(synchronize_session=False, **{UNSCORED_ONLY: True})
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


GAVE_UP = "scoring failed because of a problem on our side; the host has been notified"


def give_up(submission: Submission, settings: Settings) -> None:
    """Out of attempts: fail it, with the reason for the host only, and refund it."""
    submission.status = SubmissionStatus.failed
    submission.error = GAVE_UP
    submission.host_error = (
        f"scoring did not finish in {submission.attempts} attempt(s) "
        f"(PODIUM_SCORING_MAX_ATTEMPTS={settings.scoring_max_attempts}): each time the scorer "
        "died or passed its time limit without writing an outcome"
    )
    submission.refunded = True
    submission.finished_at = now()
    submission.lease_expires_at = None
    SCORING_FAILURES.labels("attempts").inc()
    session = object_session(submission)
    if session is not None:
        emit(
            session,
            SUBMISSION_FAILED,
            competition_id=submission.competition_id,
            team_id=submission.team_id,
            user_id=submission.user_id,
            phase_id=submission.phase_id,
            submission_id=submission.id,
            payload={"platform": True},
        )
