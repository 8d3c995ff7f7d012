"""A ConnectX phase end to end on the real jail: four agents (random, kaggle-environments'
negamax, one that crashes, one that times out) are validated, the valid ones play the ladder,
their ratings move the right way and the board ranks them by μ − kσ."""

from typing import Any

import pytest

from tests.helpers import API, predictions, ready_competition, submit
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
    assert (best["agent"], worst["agent"]) == (negamax_agent["id"], random_agent["id"])


def test_episodes_replays_and_logs_are_shown_to_whom_they_belong(
    jail, client, host, alice, bob, make_user
):
    stranger = make_user("stranger")
    _competition(client, host)
    mine = _submit(client, alice, RANDOM)
    theirs = _submit(client, bob, RANDOM)
    queue = client.app.state.scoring_queue
    assert queue.play_episodes(1) == 1
    listed = client.get(f"{API}/submissions/{mine['id']}/episodes")  # no token: public
    assert listed.status_code == 200, listed.text
    assert {e["kind"] for e in listed.json()} == {"ladder"}  # the validation is the team's only
    own = client.get(f"{API}/submissions/{mine['id']}/episodes", headers=alice.headers).json()
    assert {e["kind"] for e in own} == {"ladder", "validation"}
    ladder = next(e for e in listed.json() if e["status"] == "done")
    assert {s["submission_id"] for s in ladder["agents"]} == {mine["id"], theirs["id"]}
    replay = client.get(f"{API}/episodes/{ladder['id']}")
    assert replay.status_code == 200
    assert replay.json()["name"] == "connectx"
    assert len(replay.json()["steps"]) == ladder["steps"]
    seat = next(s["position"] for s in ladder["agents"] if s["submission_id"] == mine["id"])
    other = 1 - seat
    log = client.get(f"{API}/episodes/{ladder['id']}/logs/{seat}", headers=alice.headers)
    assert log.status_code == 200, log.text
    assert log.json()["status"] in ("DONE", "ERROR", "TIMEOUT", "INVALID")
    assert any("duration" in step for step in log.json()["steps"])
    assert client.get(f"{API}/episodes/{ladder['id']}/logs/{seat}", headers=host.headers).is_success
    for caller, position in ((bob, seat), (alice, other), (stranger, seat)):
        refused = client.get(
            f"{API}/episodes/{ladder['id']}/logs/{position}", headers=caller.headers
        )
        assert refused.status_code == 404, (caller.name, position)
    assert client.get(f"{API}/episodes/{ladder['id']}/logs/{seat}").status_code == 404
    validation = next(e for e in own if e["kind"] == "validation")
    assert client.get(f"{API}/episodes/{validation['id']}", headers=bob.headers).status_code == 404
    assert client.get(f"{API}/episodes/{validation['id']}", headers=alice.headers).is_success
    assert client.get(f"{API}/episodes/999999").status_code == 404


def test_a_seat_that_is_not_a_small_number_is_422(client):
    for bad in ("-1", "100", "x", "1.5"):
        assert client.get(f"{API}/episodes/1/logs/{bad}").status_code == 422, bad


def test_the_episode_page_plays_the_replay_with_no_outside_script(jail, client, host, alice, bob):
    _competition(client, host)
    mine = _submit(client, alice, RANDOM)
    _submit(client, bob, RANDOM)
    assert client.app.state.scoring_queue.play_episodes(1) == 1
    listed = client.get(f"{API}/submissions/{mine['id']}/episodes").json()
    episode = next(e for e in listed if e["status"] == "done")
    page = client.get(f"/episodes/{episode['id']}")
    assert page.status_code == 200, page.text
    html = page.text
    assert "window.kaggle.renderer" in html and '"name": "connectx"' in html
    assert "https://unpkg.com" not in html and "cdnjs" not in html
    for script in ("preact.umd.js", "hooks.umd.js", "htm.umd.js", "styled-components.min.js"):
        assert f'src="/static/kaggle-player/{script}"' in html
        assert client.get(f"/static/kaggle-player/{script}").status_code == 200
    policy = page.headers["content-security-policy"]
    assert "script-src 'self' 'sha256-" in policy and "unsafe-inline" not in policy.split(";")[1]
    assert client.get("/episodes/999999").status_code == 404


def test_each_team_keeps_its_newest_agents_and_the_end_stops_new_ones(
    jail, client, host, alice, session_factory
):
    from datetime import UTC, datetime

    from app.models import AgentRating
    from tests.helpers import set_competition

    body = {
        "slug": "one-active",
        "title": "One active",
        "metric": {"name": "accuracy"},
        "phases": [{**PHASE, "simulation": {**PHASE["simulation"], "active_agents": 1}}],
    }
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).is_success
    first = _submit(client, alice, RANDOM, slug="one-active")
    second = _submit(client, alice, RANDOM, slug="one-active")
    set_competition(session_factory, "one-active", deadline=datetime.now(UTC))
    late = _submit(client, alice, RANDOM, slug="one-active")
    assert (first["status"], second["status"], late["status"]) == ("scored",) * 3
    with session_factory() as session:
        active = {
            r.submission_id: r.active
            for r in session.query(AgentRating).filter(
                AgentRating.submission_id.in_([first["id"], second["id"], late["id"]])
            )
        }
    assert active == {first["id"]: False, second["id"]: True, late["id"]: False}
    board = _board(client, "one-active")
    assert [row["team"] for row in board] == ["alice"] and board[0]["episodes"] == 0


def test_an_agents_page_shows_its_skill_over_time_and_its_episodes(
    jail, client, host, alice, bob, browser, with_password
):
    _competition(client, host)
    mine = _submit(client, alice, RANDOM)
    _submit(client, bob, RANDOM)
    assert client.app.state.scoring_queue.play_episodes(2) == 2
    with_password("alice")
    page = browser("alice").get(f"/c/connectx/submissions/{mine['id']}")
    assert page.status_code == 200, page.text
    assert "after 2 episodes" in page.text and "<svg" in page.text
    assert page.text.count('href="/episodes/') == 2
    board = browser().get("/c/connectx/leaderboard")  # the Leaderboard tab, to anyone
    assert board.status_code == 200, board.text
    assert "alice" in board.text and "bob" in board.text and "μ ± σ" in board.text
    # Each row's team leads to its agent's page (the board's JSON names the agent).
    for row in client.get(f"{API}/competitions/connectx/leaderboard").json()["rows"]:
        assert f'href="/c/connectx/agents/{row["agent"]}"' in board.text


def test_an_agents_public_page_shows_its_rating_over_episodes_and_replays_to_anyone(
    jail, client, host, alice, bob, browser, with_password
):
    _competition(client, host)
    mine = _submit(client, alice, RANDOM)
    theirs = _submit(client, bob, RANDOM)
    assert client.app.state.scoring_queue.play_episodes(3) == 3
    page = browser().get(f"/c/connectx/agents/{mine['id']}")  # a visitor, signed out
    assert page.status_code == 200, page.text
    assert "after 3 episodes" in page.text
    chart = page.text[page.text.index('<svg class="chart"') : page.text.index("</svg>")]
    assert "<script" not in chart and "href" not in chart  # inline SVG, drawn by the server
    assert chart.count("<circle") == 4  # the prior, then one point per rated episode
    assert page.text.count('href="/episodes/') == 3  # the ladder's replays; not its validation
    assert f'href="/c/connectx/agents/{theirs["id"]}"' in page.text  # its opponent's page
    assert "/logs/" not in page.text  # the logs are the team's
    with_password("alice")
    own = browser("alice").get(f"/c/connectx/agents/{mine['id']}")
    assert own.status_code == 200, own.text
    assert own.text.count('href="/episodes/') == 4  # its validation too, for its team
    assert own.text.count("/logs/") == 4
    with_password("bob")
    other = browser("bob").get(f"/c/connectx/agents/{mine['id']}")  # the wrong user
    assert other.status_code == 200 and "/logs/" not in other.text


def test_an_agents_page_is_404_for_what_is_not_an_agent_of_the_competition(
    jail, client, host, alice, bob, browser
):
    _competition(client, host)
    mine = _submit(client, alice, RANDOM)
    failed = _submit(client, bob, CRASHES)
    assert failed["status"] == "failed"
    ready_competition(client, host.headers, "files")
    for path in (
        f"/c/connectx/agents/{failed['id']}",  # failed its validation: never on the ladder
        f"/c/files/agents/{mine['id']}",  # another competition's agent
        "/c/connectx/agents/999999",
    ):
        assert browser().get(path).status_code == 404, path


def test_a_file_submission_has_no_agent_page(client, host, alice, browser):
    ready_competition(client, host.headers, "files")
    sent = submit(client, alice.headers, predictions(a=0.9, b=0.1), "files")
    assert sent.status_code == 202, sent.text
    assert browser().get(f"/c/files/agents/{sent.json()['id']}").status_code == 404


@pytest.mark.parametrize("board", ["blind", "hidden"])
def test_a_blind_or_hidden_phase_keeps_its_agents_ratings_from_others(
    jail, client, host, alice, bob, browser, with_password, board
):
    phase = {**PHASE, "board": board}
    body = {"slug": "quiet", "title": "Quiet", "metric": {"name": "accuracy"}, "phases": [phase]}
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 201
    mine = _submit(client, alice, RANDOM, slug="quiet")
    assert mine["status"] == "scored", mine
    _submit(client, bob, RANDOM, slug="quiet")
    assert client.app.state.scoring_queue.play_episodes(1) == 1
    episodes = f"{API}/submissions/{mine['id']}/episodes"

    def played(headers: dict[str, str] | None = None) -> dict[str, Any]:
        listed = client.get(episodes, headers=headers).json()
        return next(e for e in listed if e["kind"] == "ladder" and e["status"] == "done")

    # The episode is anyone's; the ratings in it are not.
    assert [seat["mu_after"] for seat in played()["agents"]] == [None, None]
    assert all(seat["mu_after"] is not None for seat in played(host.headers)["agents"])
    path = f"/c/quiet/agents/{mine['id']}"
    assert browser().get(path).status_code == 403
    with_password("bob")
    assert browser("bob").get(path).status_code == 403
    with_password("alice")
    # A hidden board: each team sees its own; a blind one: nobody but the hosts until it ends.
    assert browser("alice").get(path).status_code == (200 if board == "hidden" else 403)
    own = browser("alice").get(f"/c/quiet/submissions/{mine['id']}")  # its team's own page
    assert own.status_code == 200, own.text
    assert ("μ = " in own.text) == (board == "hidden")
    with_password("host")
    assert browser("host").get(path).status_code == 200
