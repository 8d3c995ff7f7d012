"""Migration between phases (Codabench's ``auto_migrate_to_this_phase``, CodaLab's
``auto_migration``, a host's choice on any competition): when a phase whose ``migrate`` names
another opens, each team's submissions there (its last scored one, or those it selected: its
latest scored when it selected none) are copied into it once, scored on it, charged to no quota
and marked as migrated (``migrated_from_id``).

It runs the first time the phase is reached after it opened (an upload into it, its board read)
or when a host asks (``POST .../phases/{name}/migrate``, which may run it early).
"""

from datetime import UTC, datetime
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.db import after_commit
from app.errors import Conflict
from app.ledger import facts
from app.models import Competition, Phase, Submission, User
from app.models.submission import SubmissionStatus


class ScoringQueue(Protocol):
    """What a migration needs of app.jobs.queue's queues (named here: jobs imports the
    competitions' domain, not the other way round)."""

    def enqueue(
        self, submission_id: int, key_id: int | None = None, *, code: bool = False
    ) -> None: ...


def due(phase: Phase, now: datetime) -> bool:
    return bool(phase.migrate) and phase.migrated_at is None and phase.start <= now


def _chosen(session: Session, source: Phase, take: str) -> list[Submission]:
    """Per team, the submissions that go: oldest first, so the copies keep their order."""
    rows = session.scalars(
        select(Submission)
        .where(
            Submission.phase_id == source.id,
            Submission.status == SubmissionStatus.scored,
            Submission.baseline.is_(False),
            Submission.hidden.is_(False),
        )
        .order_by(Submission.created_at, Submission.id)
    ).all()
    by_team: dict[int, list[Submission]] = {}
    for row in rows:
        by_team.setdefault(row.team_id, []).append(row)
    out = []
    for team_rows in by_team.values():
        selected = [r for r in team_rows if r.selected] if take == "selected" else []
        out += selected or team_rows[-1:]
    return sorted(out, key=lambda r: (r.created_at, r.id))


def migrate_phase(
    session: Session,
    *,
    competition: Competition,
    phase: Phase,
    queue: ScoringQueue,
    now: datetime | None = None,
    actor: User | None = None,
) -> list[int]:
    """Copy the source phase's chosen submissions into ``phase`` and queue each for scoring;
    the ids of the copies. Once per phase: a second call is a 409."""
    if not phase.migrate:
        raise Conflict(f"phase '{phase.name}' migrates no submissions (its 'migrate' is unset)")
    if phase.migrated_at is not None:
        raise Conflict(
            f"phase '{phase.name}' was migrated at {phase.migrated_at.isoformat()}; it runs once"
        )
    now = now or datetime.now(UTC)
    source = next((p for p in competition.phases if p.name == phase.migrate.get("from")), None)
    if source is None:
        raise Conflict(f"phase '{phase.name}' migrates from '{phase.migrate.get('from')}', gone")
    copies = []
    for original in _chosen(session, source, str(phase.migrate.get("take", "selected"))):
        copy = Submission(
            competition_id=competition.id,
            phase_id=phase.id,
            team_id=original.team_id,
            user_id=original.user_id,
            description=original.description,
            details=original.details,
            filename=original.filename,
            path=original.path,
            size_bytes=original.size_bytes,
            sha256=original.sha256,
            created_at=now,
            late=False,
            # Charged to no quota: the team did not upload it again.
            refunded=True,
            status=SubmissionStatus.queued,
            migrated_from_id=original.id,
        )
        session.add(copy)
        copies.append(copy)
    phase.migrated_at = now
    session.flush()
    for copy in copies:  # each copy enters the phase's boards: the record holds it as received
        facts.received(
            session,
            competition_id=competition.id,
            submission=copy,
            team_name=copy.team.name,
            phase=phase.name,
            migrated_from=copy.migrated_from_id,
        )
    ids = [c.id for c in copies]
    code = phase.takes_code
    after_commit(session, lambda: [queue.enqueue(i, code=code) for i in ids])
    if actor is not None:
        record(
            session,
            competition=competition,
            actor=actor,
            action="phase_migrate",
            target=f"{competition.slug}/{phase.name}",
            before=None,
            after={"from": source.name, "submissions": len(ids)},
        )
    return ids


def migrate_due(
    session: Session, *, competition: Competition, queue: ScoringQueue, now: datetime
) -> None:
    """Every phase of the competition whose migration is due, run now (idempotent)."""
    for phase in competition.phases:
        if due(phase, now):
            migrate_phase(session, competition=competition, phase=phase, queue=queue, now=now)
