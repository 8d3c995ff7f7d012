"""Rank bands are refreshed at most once per interval and key version: a burst of scores that
move the board is folded into one refresh at the interval's end, which bumps the board revision
so rendered boards show it (the rest of the suite refreshes after every score: tests/conftest).

The pacer's clock and timer are the test's: time stands still through the burst however slowly
the machine scores, and the interval ends when the test moves the clock and fires the timer."""

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from sqlalchemy import select

from app.config import Settings
from app.honest.board.board import stored_bands
from app.jobs import honest
from app.models import AnswerKey, BoardRevision
from tests.helpers import PERFECT, PUBLIC_HALF, predictions, ready_competition, submit

EVERY = 60.0


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class HeldTimer:
    """A timer that runs when the test fires it."""

    delay: float
    run: Callable[[], None]
    daemon: bool = False
    started: bool = False

    def start(self) -> None:
        self.started = True

    def join(self) -> None:
        return None


@dataclass
class Timers:
    made: list[HeldTimer] = field(default_factory=list)

    def __call__(self, delay: float, run: Callable[[], None]) -> HeldTimer:
        self.made.append(HeldTimer(delay, run))
        return self.made[-1]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"bands_every_seconds": EVERY})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timers() -> Timers:
    return Timers()


@pytest.fixture
def pacer(monkeypatch, clock, timers):  # type: ignore[no-untyped-def]
    fresh = honest.BandsPacer(clock=clock, timer=timers)  # no other test's key ids
    monkeypatch.setattr(honest, "bands_pacer", fresh)
    return fresh


def _board(session_factory) -> tuple[set[str], int]:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        key = session.scalar(select(AnswerKey))
        stored = stored_bands(session, key_id=key.id, board="public")
        revision = session.scalar(select(BoardRevision.revision))
        return set(stored.bands if stored else {}), revision


def test_a_burst_of_scores_is_folded_into_one_refresh_at_the_intervals_end(
    client, host, make_user, session_factory, pacer, clock, timers, monkeypatch
):
    refreshes: list[int] = []
    real = honest.refresh_bands

    def counting(session, *, competition, key_id):  # type: ignore[no-untyped-def]
        refreshes.append(key_id)
        real(session, competition=competition, key_id=key_id)

    monkeypatch.setattr(honest, "refresh_bands", counting)
    ready_competition(client, host.headers)
    teams = [make_user(name) for name in ("alice", "bob", "carol")]
    files = [PERFECT, PUBLIC_HALF, predictions(a=0.9, b=0.1, c=0.2, d=0.2, e=0.7, f=0.3)]
    ids = []
    for caller, content in zip(teams, files, strict=True):
        response = submit(client, caller.headers, content)
        assert response.status_code == 202, response.text
        ids.append(str(response.json()["id"]))

    # The first score refreshed at once; the next two, inside the interval, wait for its end:
    # one timer for both, due when the interval ends.
    bands, revision = _board(session_factory)
    assert bands == {ids[0]}
    assert len(refreshes) == 1
    assert [(t.delay, t.started) for t in timers.made] == [(EVERY, True)]
    clock.now += EVERY
    timers.made[0].run()
    after, revision_after = _board(session_factory)
    assert after == set(ids)  # one refresh, with both later scores in it
    assert len(refreshes) == 2
    assert revision_after == revision + 1  # rendered boards are not served stale
    # The interval starts again from that refresh: the next score waits for a new timer.
    assert submit(client, make_user("dave").headers, PUBLIC_HALF).status_code == 202
    assert len(refreshes) == 2 and len(timers.made) == 2


def test_without_an_interval_every_score_refreshes_at_once(pacer, clock):
    assert pacer.now_or_later(7, 0) == 0.0
    assert pacer.now_or_later(7, 0) == 0.0
    assert pacer.now_or_later(7, 60) == 60  # refreshed just now: the next waits
    clock.now += 59
    assert pacer.now_or_later(7, 60) == 1
    assert pacer.now_or_later(8, 60) == 0.0  # another key version has its own interval
    clock.now += 1
    assert pacer.now_or_later(7, 60) == 0.0  # the interval has passed


def test_the_real_pacer_runs_its_timer_on_a_thread_of_its_own():
    ran = []
    pacer = honest.BandsPacer()
    pacer.schedule(1, 0.0, lambda: ran.append(1))
    pacer.wait()
    assert ran == [1]
