"""Rank bands are refreshed at most once per interval and key version: a burst of scores that
move the board is folded into one refresh at the interval's end, which bumps the board revision
so rendered boards show it (the rest of the suite refreshes after every score: tests/conftest)."""

import pytest
from sqlalchemy import select

from app.config import Settings
from app.honest.board.board import stored_bands
from app.jobs import honest
from app.models import AnswerKey, BoardRevision
from tests.helpers import PERFECT, PUBLIC_HALF, predictions, ready_competition, submit

EVERY = 3.0  # long enough for two eager scorings on a loaded machine


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"bands_every_seconds": EVERY})


@pytest.fixture
def pacer(monkeypatch):  # type: ignore[no-untyped-def]
    fresh = honest.BandsPacer()  # no other test's key ids
    monkeypatch.setattr(honest, "bands_pacer", fresh)
    return fresh


def _board(session_factory) -> tuple[set[str], int]:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        key = session.scalar(select(AnswerKey))
        stored = stored_bands(session, key_id=key.id, board="public")
        revision = session.scalar(select(BoardRevision.revision))
        return set(stored.bands if stored else {}), revision


def test_a_burst_of_scores_is_folded_into_one_refresh_at_the_intervals_end(
    client, host, make_user, session_factory, pacer, monkeypatch
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

    # The first score refreshed at once; the next two, inside the interval, wait for its end.
    bands, revision = _board(session_factory)
    assert bands == {ids[0]}
    assert len(refreshes) == 1
    pacer.wait()
    after, revision_after = _board(session_factory)
    assert after == set(ids)  # one refresh, with both later scores in it
    assert len(refreshes) == 2
    assert revision_after == revision + 1  # rendered boards are not served stale


def test_without_an_interval_every_score_refreshes_at_once(pacer):
    assert pacer.now_or_later(7, 0) == 0.0
    assert pacer.now_or_later(7, 0) == 0.0
    assert pacer.now_or_later(7, 60) > 59  # refreshed just now: the next waits
    assert pacer.now_or_later(8, 60) == 0.0  # another key version has its own interval
