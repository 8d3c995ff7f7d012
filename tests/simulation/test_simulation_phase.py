"""A ConnectX phase end to end on the real jail: four agents (random, kaggle-environments'
negamax, one that crashes, one that times out) are validated, the valid ones play the ladder,
their ratings move the right way and the board ranks them by μ − kσ."""

from typing import Any

import pytest

from tests.helpers import API
from tests.simulation.agents import CRASHES, RANDOM, SLEEPS, negamax

pytestmark = pytest.mark.slow

PHASE = {
    "name": "main",
    "submission_kind": "simulation",
    "environment": {"name": "connectx", "configuration": {"actTimeout": 1}},
    # A small overage: the sleeping agent's TIMEOUT comes after 1 + 1 s.
    "simulation": {"overage_seconds": 1, "episodes_in_flight": 1, "explore": 0, "k": 1},
}


def _competition(client, host, slug: str = "connectx") -> None:
    body = {"slug": slug, "title": "ConnectX", "metric": {"name": "accuracy"}, "phases": [PHASE]}
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 201, response.text


def _submit(client, caller, content: bytes, name: str = "main.py", slug: str = "connectx"):
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": (name, content, "application/octet-stream")},
        headers=caller.headers,
    )
    assert response.status_code == 202, response.text
    return client.get(f"{API}/submissions/{response.json()['id']}", headers=caller.headers).json()


def _board(client, slug: str = "connectx") -> list[dict[str, Any]]:
    response = client.get(f"{API}/competitions/{slug}/leaderboard")
    assert response.status_code == 200, response.text
    return response.json()["rows"]


def test_a_connectx_ladder_validates_plays_and_ranks(jail, client, host, alice, bob, make_user):
    carol, dave = make_user("carol"), make_user("dave")
    _competition(client, host)
    random_agent = _submit(client, alice, RANDOM)
    negamax_agent = _submit(client, bob, negamax())
    crashing = _submit(client, carol, CRASHES)
    sleeping = _submit(client, dave, SLEEPS)
    assert random_agent["status"] == "scored", random_agent
    assert negamax_agent["status"] == "scored", negamax_agent
    assert crashing["status"] == "failed"
    assert "Validation Episode failed" in crashing["error"]
    assert "ValueError: this agent always crashes" in crashing["error"]
    assert sleeping["status"] == "failed"
    assert "TIMEOUT" in sleeping["error"], sleeping["error"]
    queue = client.app.state.scoring_queue
    assert queue.play_episodes(6) == 6
    board = _board(client)
    assert [row["team"] for row in board] == ["bob", "alice"]
    best, worst = board
    assert best["mu"] > 25 > worst["mu"]
    assert best["episodes"] == worst["episodes"] == 6
    assert best["score"] == pytest.approx(best["mu"] - best["sigma"])
