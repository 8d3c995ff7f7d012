"""Events of time: a phase opened, closes within 24 hours, closed, its private board revealed.
Every process's sweep looks; the first to see a moment writes its event, keyed by phase, so the
others' inserts do nothing. Drafts and archived competitions have no moments; a moment more than
a day old is not news (a competition published late does not announce last month's phase)."""

from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import unit_of_work
from app.events.stream import (
    BOARD_REVEALED,
    PHASE_CLOSED,
    PHASE_CLOSING,
    PHASE_OPENED,
    emit,
)
from app.models import Competition, Phase
from app.models.competition import PUBLISHED
from app.models.types import utcnow

NEWS = timedelta(days=1)
SOON = timedelta(hours=24)


def sweep_moments(factory: sessionmaker[Session], *, now: datetime | None = None) -> int:
    """One pass; returns how many events this pass wrote."""
    at = now or utcnow()
    written = 0
    with unit_of_work(factory) as session:
        rows = session.execute(
            select(Phase, Competition.slug)
            .join(Competition, Competition.id == Phase.competition_id)
            .where(
                Competition.status == PUBLISHED,
                or_(
                    and_(Phase.start <= at, Phase.start > at - NEWS),
                    and_(Phase.end.is_not(None), Phase.end > at - NEWS, Phase.end <= at + SOON),
                ),
            )
        ).all()
        for phase, slug in rows:
            written += _moments(session, phase, slug, at)
    return written


def _moments(session: Session, phase: Phase, slug: str, at: datetime) -> int:
    said = {"competition": slug, "phase": phase.name}
    times = {"start": phase.start.isoformat(), "end": phase.end.isoformat() if phase.end else None}

    def once(kind: str) -> int:
        return int(
            emit(
                session,
                kind,
                competition_id=phase.competition_id,
                phase_id=phase.id,
                payload={**said, **times},
                key=f"{kind}:{phase.id}",
            )
        )

    written = 0
    if at - NEWS < phase.start <= at:
        written += once(PHASE_OPENED)
    if phase.end is not None:
        if at < phase.end <= at + SOON:
            written += once(PHASE_CLOSING)
        if at - NEWS < phase.end <= at:
            written += once(PHASE_CLOSED)
            written += once(BOARD_REVEALED)
    return written
