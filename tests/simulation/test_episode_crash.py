"""A worker killed mid-episode loses no result and doubles none: the episode's lease lapses, the
sweep hands it out again, another claim plays and settles it once, and the dead claim's late
write (had it lived) is refused."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from app.config import Settings
from app.db import make_engine, make_session_factory
from app.jobs.episodes import Seat, finish_episode, play_episode, sweep_episodes
from app.jobs.queue import EagerQueue
from app.main import create_app
from app.models import AgentRating, Episode, Submission
from tests.asgi_client import TestClient
from tests.databases import migrated
from tests.helpers import API
from tests.simulation.agents import RANDOM

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# Thinks for a twentieth of a second a move: the episode lasts long enough to be killed in.
THINKS = b"""
import random, time

def act(observation, configuration):
    time.sleep(0.05)
    return random.choice([c for c in range(configuration.columns) if observation.board[c] == 0])
"""
PHASE = {
    "name": "main",
    "submission_kind": "simulation",
    "environment": {"name": "connectx"},
    "simulation": {"episodes_in_flight": 1},
}


@pytest.fixture
def stack(tmp_path):  # type: ignore[no-untyped-def]
    data = Path(tempfile.mkdtemp(prefix="podium-crash-"))  # the jail's user reads the agents
    data.chmod(0o755)
    database_url = f"sqlite:///{tmp_path}/podium.db"
    migrated(database_url)
    settings = Settings(
        env="test",
        database_url=database_url,
        data_dir=data,
        secret_key="f" * 40,
        scoring_backend="eager",
        scoring_lease_seconds=2,
        uploads_per_minute=10_000,
    )
    engine = make_engine(database_url)
    factory = make_session_factory(engine)
    yield settings, factory
    engine.dispose()
    shutil.rmtree(data, ignore_errors=True)


def _users(factory, settings, names):  # type: ignore[no-untyped-def]
    from app.auth.service import create_user
    from app.models import Role

    tokens = {}
    with factory() as session:
        for name in names:
            role = Role.organiser if name == "host" else Role.participant
            _user, tokens[name] = create_user(
                session, name=name, role=role, secret_key=settings.secret_key
            )
        session.commit()
    return {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}


_WORKER = textwrap.dedent(
    """
    import sys
    from app.config import Settings
    from app.db import make_engine, make_session_factory
    from app.jobs.episodes import play_episode

    settings = Settings.model_validate_json(sys.stdin.read())
    play_episode(make_session_factory(make_engine(settings.database_url)), int(sys.argv[1]), settings)
    """
)


def test_a_worker_killed_mid_episode_loses_nothing_and_doubles_nothing(jail, stack):
    settings, factory = stack
    headers = _users(factory, settings, ["host", "alice", "bob"])
    app = create_app(settings, session_factory=factory, scoring_queue=EagerQueue(factory, settings))
    with TestClient(app) as client:
        body = {"slug": "cx", "title": "CX", "metric": {"name": "accuracy"}, "phases": [PHASE]}
        assert client.post(f"{API}/competitions", json=body, headers=headers["host"]).is_success
        for name, agent in (("alice", RANDOM), ("bob", THINKS)):
            sent = client.post(
                f"{API}/competitions/cx/submissions",
                files={"file": ("main.py", agent, "text/x-python")},
                headers=headers[name],
            )
            assert sent.status_code == 202, sent.text
        [episode_id] = app.state.scoring_queue.episodes
    worker = subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(episode_id)],
        stdin=subprocess.PIPE,
        cwd=ROOT,
        start_new_session=True,
    )
    assert worker.stdin is not None
    worker.stdin.write(settings.model_dump_json().encode())
    worker.stdin.close()
    deadline = time.monotonic() + 60
    while _episode(factory, episode_id).status != "running":  # the worker is mid-episode
        assert worker.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    dead = _episode(factory, episode_id)
    assert (dead.status, dead.attempts) == ("running", 1)
    while episode_id not in sweep_episodes(factory):  # once its lease lapsed
        assert time.monotonic() < deadline + 60
        time.sleep(0.05)
    play_episode(factory, episode_id, settings)
    done = _episode(factory, episode_id)
    assert (done.status, done.attempts) == ("done", 2)
    with factory() as session:
        ratings = session.scalars(select(AgentRating)).all()
        seats = [
            Seat(s.id, s.team_id, s.filename, s.path) for s in session.scalars(select(Submission))
        ]
    assert [r.episodes for r in ratings] == [1, 1]
    # The killed claim, had it lived to write, writes nothing: no episode counts twice.
    assert not finish_episode(factory, episode_id, 1, seats, None, "late")
    with factory() as session:
        assert [r.episodes for r in session.scalars(select(AgentRating))] == [1, 1]
        assert session.get(Episode, episode_id).status == "done"


def _episode(factory, episode_id):  # type: ignore[no-untyped-def]
    with factory() as session:
        episode = session.get(Episode, episode_id)
        session.expunge(episode)
        return episode
