"""Races on a real database (no per-test rollback): each thread commits its own transaction.

SQLite serialises writers (BEGIN IMMEDIATE); on PostgreSQL the threads truly interleave, so the
losers of ``team_for`` hit the UNIQUE constraints and must read the winner's team instead.
"""

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from app.db import make_engine, make_session_factory, unit_of_work
from app.errors import AppError
from app.models import Competition, Role, Team, TeamInvitation, TeamMember, User
from app.teams.merge import accept
from app.teams.service import locked_team_for, team_for

THREADS = 12


@pytest.fixture
def real_factory(fresh_database_url: str) -> Iterator[sessionmaker[Session]]:
    # A database of its own beside the shared test database, so committed rows leak nowhere.
    engine = make_engine(fresh_database_url)
    try:
        yield make_session_factory(engine)
    finally:
        engine.dispose()


def _race(factory: sessionmaker[Session], work: Callable[[Session], object]) -> list[object]:
    """Run ``work`` in THREADS transactions that start together; results or raised AppErrors."""
    barrier = threading.Barrier(THREADS)

    def one() -> object:
        try:
            with unit_of_work(factory) as session:
                if session.get_bind().dialect.name == "postgresql":
                    # Connect first, so the threads race on the work, not on opening connections.
                    # (On SQLite that would take the write lock and stall the barrier.)
                    session.execute(text("SELECT 1"))
                barrier.wait()
                return work(session)
        except AppError as exc:
            return exc

    with ThreadPoolExecutor(THREADS) as pool:
        return [f.result() for f in [pool.submit(one) for _ in range(THREADS)]]


def _seed(factory: sessionmaker[Session], *names: str) -> tuple[int, dict[str, int]]:
    with unit_of_work(factory) as session:
        host = User(name="host", role=Role.organiser)
        users = [User(name=name, role=Role.participant) for name in names]
        session.add_all([host, *users])
        session.flush()
        competition = Competition(
            slug="race", title="Race", metric_name="roc_auc", created_by_id=host.id
        )
        session.add(competition)
        session.flush()
        return competition.id, {user.name: user.id for user in users}


def _team_for(session: Session, competition_id: int, user_id: int) -> Team:
    competition = session.get_one(Competition, competition_id)
    return team_for(session, competition=competition, user=session.get_one(User, user_id))


def test_concurrent_first_requests_make_exactly_one_team(real_factory):
    competition_id, users = _seed(real_factory, "alice")

    def work(session: Session) -> int:
        return _team_for(session, competition_id, users["alice"]).id

    team_ids = _race(real_factory, work)
    assert len(set(team_ids)) == 1 and all(isinstance(t, int) for t in team_ids)
    with real_factory() as session:
        assert session.scalar(select(func.count(Team.id))) == 1
        assert session.scalar(select(func.count(TeamMember.id))) == 1
        assert session.get_one(Team, team_ids[0]).leader_id == users["alice"]


def test_concurrent_first_requests_of_many_users_make_one_team_each(real_factory):
    names = [f"user{i}" for i in range(THREADS)]
    competition_id, users = _seed(real_factory, *names)
    turn = iter(names)
    lock = threading.Lock()

    def work(session: Session) -> str:
        with lock:
            name = next(turn)
        return _team_for(session, competition_id, users[name]).name

    assert sorted(_race(real_factory, work)) == sorted(names)  # type: ignore[type-var]


def test_concurrent_accepts_put_the_invitee_on_one_team(real_factory):
    leaders = [f"leader{i}" for i in range(THREADS)]
    competition_id, users = _seed(real_factory, "bob", *leaders)
    with unit_of_work(real_factory) as session:
        invitations = []
        for name in leaders:
            team = _team_for(session, competition_id, users[name])
            invitation = TeamInvitation(
                competition_id=competition_id,
                team_id=team.id,
                inviter_id=users[name],
                invitee_id=users["bob"],
            )
            session.add(invitation)
            session.flush()
            invitations.append(invitation.id)
    turn = iter(invitations)
    lock = threading.Lock()

    def work(session: Session) -> int:
        with lock:
            invitation = next(turn)
        bob = session.get_one(User, users["bob"])
        return accept(session, invitation_id=invitation, user=bob).id

    results = _race(real_factory, work)
    joined = [r for r in results if isinstance(r, int)]
    assert len(joined) == 1, results
    assert all(isinstance(r, AppError) and r.status_code == 409 for r in results if r not in joined)
    with real_factory() as session:
        bob_teams = list(
            session.scalars(select(TeamMember.team_id).where(TeamMember.user_id == users["bob"]))
        )
        assert bob_teams == joined


def _once_waiting_on_a_lock(
    factory: sessionmaker[Session], backend: int, then: Callable[[], None], seen: threading.Event
) -> None:
    """Watch PostgreSQL backend ``backend`` until it waits on a lock (bounded), then ``then()``."""
    deadline = time.monotonic() + 30
    with factory() as watcher:
        while time.monotonic() < deadline:
            state = watcher.scalar(
                text("SELECT wait_event_type FROM pg_stat_activity WHERE pid = :pid"),
                {"pid": backend},
            )
            watcher.rollback()  # pg_stat_activity is read once per transaction
            if state == "Lock":
                seen.set()
                break
            time.sleep(0.01)
    then()


# SQLite serialises whole transactions: the interleaving happens on PostgreSQL only.
@pytest.mark.parametrize("fresh_database_url", ["postgresql"], indirect=True)
def test_a_submission_waiting_on_a_merge_is_charged_to_the_merged_team(real_factory):
    """``locked_team_for`` re-reads the team after its lock waited for a merge that absorbed it."""
    competition_id, users = _seed(real_factory, "alice", "bob")
    with unit_of_work(real_factory) as session:
        alices = _team_for(session, competition_id, users["alice"]).id
        bobs = _team_for(session, competition_id, users["bob"]).id
        invitation = TeamInvitation(
            competition_id=competition_id,
            team_id=alices,
            inviter_id=users["alice"],
            invitee_id=users["bob"],
        )
        session.add(invitation)
        session.flush()
        invitation_id = invitation.id

    merging = real_factory()
    accept(merging, invitation_id=invitation_id, user=merging.get_one(User, users["bob"]))
    # bob's submission read his old team before the merge commits, then waits on its lock.
    with unit_of_work(real_factory) as session:
        competition = session.get_one(Competition, competition_id)
        bob = session.get_one(User, users["bob"])
        assert team_for(session, competition=competition, user=bob).id == bobs
        # The merge commits once the submission is seen waiting on the lock, not after a guess.
        backend = session.scalar(text("SELECT pg_backend_pid()"))
        waited = threading.Event()
        watcher = threading.Thread(
            target=_once_waiting_on_a_lock,
            args=(real_factory, backend, lambda: (merging.commit(), merging.close()), waited),
        )
        watcher.start()
        locked = locked_team_for(session, competition=competition, user=bob)
        watcher.join()
        assert waited.is_set(), "the submission never waited on the merge's lock"
        assert locked.id == alices
