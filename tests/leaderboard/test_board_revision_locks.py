"""The board revision is bumped by every standings write, in a row of its own: a host's
transaction holding the competition row (a moved deadline waits on submissions a scorer holds)
never makes a standings write wait, so the two cannot deadlock."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text, update

from app.auth.service import create_user
from app.db import make_engine, make_session_factory
from app.leaderboard.standings import apply_pending
from app.models import (
    AnswerKey,
    BoardRevision,
    Competition,
    Phase,
    Role,
    Score,
    Standing,
    Submission,
    SubmissionStatus,
    Team,
    TeamMember,
    User,
)
from app.teams.service import locked_team_for


def _competition(session) -> tuple[int, int, int, int]:  # type: ignore[no-untyped-def]
    user, _token = create_user(session, name="host", role=Role.organiser, secret_key="k" * 32)
    session.flush()
    competition = Competition(
        slug="locks", title="Locks", metric_name="rmse", metric_params={}, created_by_id=user.id
    )
    session.add(competition)
    session.flush()
    phase = Phase(
        competition_id=competition.id,
        name="main",
        title="Main",
        position=0,
        start=datetime.now(UTC) - timedelta(days=2),
        entry_fields=[],
    )
    session.add(phase)
    session.flush()
    key = AnswerKey(
        competition_id=competition.id,
        phase_id=phase.id,
        version=1,
        path="key.csv",
        sha256="0" * 64,
        id_column="id",
        target_columns=["y"],
        n_rows=2,
        n_public=1,
        n_private=1,
        uploaded_by_id=user.id,
        published_at=datetime.now(UTC) - timedelta(days=1),
    )
    team = Team(competition_id=competition.id, name="t")
    session.add_all([key, team])
    session.flush()
    return competition.id, key.id, team.id, user.id


def _phase_id(session, competition_id: int) -> int:  # type: ignore[no-untyped-def]
    return session.scalar(select(Phase.id).where(Phase.competition_id == competition_id))


def _scored(session, competition_id, key_id, team_id, user_id) -> None:  # type: ignore[no-untyped-def]
    submission = Submission(
        competition_id=competition_id,
        phase_id=_phase_id(session, competition_id),
        team_id=team_id,
        user_id=user_id,
        filename="s.csv",
        path="s.csv",
        size_bytes=1,
        sha256="0" * 64,
        status=SubmissionStatus.scored,
    )
    session.add(submission)
    session.flush()
    session.add(
        Score(
            submission_id=submission.id,
            answer_key_id=key_id,
            score=0.5,
            public_score=0.5,
            private_score=0.5,
        )
    )
    session.flush()


def test_two_standings_writers_of_one_team_take_turns(fresh_database_url):
    """A score and an upload of one team on two processes both rewrite the team's standings:
    the second waits for the first to commit instead of inserting the same rows beside it
    (which failed on the unique constraint)."""
    if not fresh_database_url.startswith("postgresql"):
        pytest.skip("SQLite serialises every writer anyway (BEGIN IMMEDIATE)")
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    try:
        with factory() as session:
            competition_id, key_id, team_id, user_id = _competition(session)
            session.commit()
        errors: list[BaseException] = []
        first_wrote = threading.Event()
        with factory() as first:
            _scored(first, competition_id, key_id, team_id, user_id)
            apply_pending(first)  # its standings are written, not yet committed
            first_wrote.set()

            def second() -> None:
                try:
                    with factory() as session:
                        _scored(session, competition_id, key_id, team_id, user_id)
                        session.commit()
                except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                    errors.append(exc)

            thread = threading.Thread(target=second)
            thread.start()
            thread.join(timeout=1.0)
            assert thread.is_alive()  # waiting for the first writer, not failing
            first.commit()
        thread.join(timeout=30)
        assert not thread.is_alive() and errors == []
        with factory() as session:
            rows = session.scalars(select(Standing).where(Standing.team_id == team_id)).all()
            assert sorted(r.board for r in rows) == ["private", "public"]
    finally:
        engine.dispose()


def test_a_standings_write_never_waits_on_the_competition_row(fresh_database_url):
    if not fresh_database_url.startswith("postgresql"):
        pytest.skip("SQLite serialises every writer anyway (BEGIN IMMEDIATE)")
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    try:
        with factory() as session:
            competition_id, key_id, team_id, user_id = _competition(session)
            session.commit()
        with factory() as host, factory() as scorer:
            # The host's transaction holds the competition row, as a moved deadline does.
            host.execute(
                update(Competition).where(Competition.id == competition_id).values(title="T2")
            )
            scorer.execute(text("SET LOCAL lock_timeout = '5s'"))
            _scored(scorer, competition_id, key_id, team_id, user_id)
            scorer.commit()  # a lock timeout here would fail the test
            host.commit()
        with factory() as session:
            revision = session.scalar(
                select(BoardRevision.revision).where(BoardRevision.competition_id == competition_id)
            )
            assert revision is not None and revision >= 1
    finally:
        engine.dispose()


def test_a_scorer_rewrites_a_teams_standings_while_an_upload_holds_the_team(fresh_database_url):
    """An upload holds its team's row until it commits; a scorer holding the standings lock
    inserts standings rows that reference that team (a key-share lock on it). The upload's lock
    is NO KEY UPDATE, so the scorer goes on: with FOR UPDATE it waited on the upload, and an
    upload that then wanted the standings lock (as uploads did, and merges do) deadlocked."""
    if not fresh_database_url.startswith("postgresql"):
        pytest.skip("SQLite serialises every writer anyway (BEGIN IMMEDIATE)")
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    try:
        with factory() as session:
            competition_id, key_id, team_id, user_id = _competition(session)
            session.add(TeamMember(team_id=team_id, competition_id=competition_id, user_id=user_id))
            session.commit()
        with factory() as upload, factory() as scorer:
            competition = upload.get_one(Competition, competition_id)
            user = upload.get_one(User, user_id)
            assert locked_team_for(upload, competition=competition, user=user).id == team_id
            # Fail at once instead of waiting: a wait here is the deadlock's first half.
            scorer.execute(text("SET LOCAL lock_timeout = '3s'"))
            _scored(scorer, competition_id, key_id, team_id, user_id)
            apply_pending(scorer)  # takes the standings lock, inserts the team's rows
            scorer.commit()
            upload.commit()
        with factory() as session:
            rows = session.scalars(select(Standing).where(Standing.team_id == team_id)).all()
            assert sorted(r.board for r in rows) == ["private", "public"]
    finally:
        engine.dispose()
