"""Events of time: written once each whatever the number of processes sweeping (three OS
processes on one PostgreSQL database here), never for a draft, and told to each participant
once."""

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from app.auth.service import create_user
from app.competitions.schemas import CompetitionCreate, MetricConfig, PhaseConfig
from app.competitions.service import create_competition
from app.db import make_engine, make_session_factory, unit_of_work
from app.events.moments import sweep_moments
from app.models import Event, Notification, Registration, RegistrationStatus, Role
from tests.conftest import _throwaway_postgres

# Each process sweeps and reads the stream many times over, as every API process's thread does.
WORKER = textwrap.dedent(
    """
    import sys
    from app.config import Settings
    from app.db import make_engine, make_session_factory
    from app.dispatch.worker import process_once

    engine = make_engine(sys.argv[1])
    factory = make_session_factory(engine)
    settings = Settings(env="test", database_url=sys.argv[1], secret_key="three-processes-secret")
    sys.stdin.readline()  # all three start together
    for _ in range(15):
        process_once(factory, settings)
    engine.dispose()
    """
)


def _competition(session, owner, slug: str, *, status: str, start: datetime, end: datetime):  # type: ignore[no-untyped-def]
    return create_competition(
        session,
        data=CompetitionCreate(
            slug=slug,
            title=slug.title(),
            status=status,
            metric=MetricConfig(name="roc_auc"),
            phases=[PhaseConfig(name="final", start=start, end=end)],
        ),
        owner=owner,
    )


@pytest.mark.slow
def test_a_phase_opened_is_written_and_told_once_by_three_processes():
    for url in _throwaway_postgres(migrated=True):
        engine = make_engine(url)
        factory = make_session_factory(engine)
        now = datetime.now(UTC)
        with unit_of_work(factory) as session:
            owner, _ = create_user(session, name="host", role=Role.organiser, secret_key="s")
            ada, _ = create_user(session, name="ada", role=Role.participant, secret_key="s")
            live = _competition(
                session,
                owner,
                "live",
                status="published",
                start=now - timedelta(minutes=1),
                end=now + timedelta(days=10),
            )
            _competition(
                session,
                owner,
                "draft",
                status="draft",
                start=now - timedelta(minutes=1),
                end=now + timedelta(days=10),
            )
            session.add(
                Registration(
                    competition_id=live.id,
                    user_id=ada.id,
                    status=RegistrationStatus.approved,
                    message="",
                    decision_message="",
                )
            )
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, url],
                stdin=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "PODIUM_ENV": "test"},
            )
            for _ in range(3)
        ]
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write(b"go\n")
            worker.stdin.flush()
        for worker in workers:
            _out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err.decode()[-2000:]
        with factory() as session:
            events = session.execute(select(Event.kind, Event.competition_id)).all()
            notices = session.scalars(select(Notification.kind)).all()
        assert events == [("phase.opened", live.id)]  # once; none for the draft
        assert notices == ["phase.opened"]  # ada hears of it once
        engine.dispose()


def test_moments_of_a_phase_in_order_and_only_as_news(session_factory, host_user):
    now = datetime.now(UTC)
    with session_factory() as session:
        _competition(
            session,
            host_user(session),
            "soon",
            status="published",
            start=now - timedelta(hours=1),
            end=now + timedelta(hours=5),
        )
        old = _competition(
            session,
            host_user(session),
            "old",
            status="published",
            start=now - timedelta(days=40),
            end=now + timedelta(days=40),
        )
        session.commit()
    assert sweep_moments(session_factory, now=now) == 2  # opened, closing within 24 h
    assert sweep_moments(session_factory, now=now) == 0  # the same moments: nothing new
    later = now + timedelta(hours=6)
    assert sweep_moments(session_factory, now=later) == 2  # closed, board revealed
    with session_factory() as session:
        kinds = session.scalars(select(Event.kind).order_by(Event.id)).all()
        assert kinds == ["phase.opened", "phase.closing", "phase.closed", "board.revealed"]
        assert not session.scalars(select(Event).where(Event.competition_id == old.id)).all()


@pytest.fixture
def host_user():  # type: ignore[no-untyped-def]
    made = {}

    def get(session):  # type: ignore[no-untyped-def]
        if "host" not in made:
            made["host"], _ = create_user(session, name="host", role=Role.organiser, secret_key="s")
            session.flush()
        return made["host"]

    return get
