"""Board reads run side by side (app.http.board_gate): no queue of their own, anything else goes
straight through, and only past the bound of reads in flight (real overload) a board read gets
503 with Retry-After at once."""

import asyncio
import json

import pytest

from app.http.board_gate import BOARD_ROUTES, BoardGate
from tests.helpers import API, create_competition, upload_key


@pytest.mark.parametrize(
    "path",
    [
        f"{API}/competitions/churn/leaderboard",
        f"{API}/competitions/churn/leaderboard.csv",
        "/c/churn",
        "/c/churn/leaderboard",
        f"{API}/competitions.CompetitionApiService/GetLeaderboard",
        f"{API}/competitions.CompetitionApiService/DownloadLeaderboard",
        f"http://localhost{API}/competitions.CompetitionApiService/GetLeaderboard",
    ],
)
def test_board_routes_are_gated(path):
    assert BOARD_ROUTES.match(path)


@pytest.mark.parametrize(
    "path",
    [
        f"{API}/competitions/churn/submissions",
        f"{API}/competitions/churn",
        "/c/churn/submissions",
        f"{API}/competitions.CompetitionApiService/CreateSubmission",
        f"http://localhost{API}/competitions.CompetitionApiService/CreateSubmission",
        "/healthz",
    ],
)
def test_other_routes_are_not(path):
    assert not BOARD_ROUTES.match(path)


class _App:
    """An ASGI app whose requests stay in flight until released, recording how many overlap."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.release = asyncio.Event()

    async def __call__(self, scope, receive, send):
        self.running += 1
        self.most = max(self.most, self.running)
        await self.release.wait()
        self.running -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def _request(gate, path):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await gate({"type": "http", "method": "GET", "path": path, "headers": []}, receive, send)
    return sent


def test_board_reads_run_side_by_side_and_others_pass():
    async def scenario():
        inner = _App()
        gate = BoardGate(inner, most=10)
        board = f"{API}/competitions/churn/leaderboard"
        readers = [asyncio.create_task(_request(gate, board)) for _ in range(6)]
        await asyncio.sleep(0.05)
        assert inner.running == 6  # none waits for another
        upload = asyncio.create_task(_request(gate, f"{API}/competitions/churn/submissions"))
        await asyncio.sleep(0.05)
        assert inner.running == 7  # the upload went straight in
        inner.release.set()
        done = await asyncio.gather(*readers, upload)
        assert all(sent[0]["status"] == 200 for sent in done)
        assert inner.most == 7 and gate.in_flight == 0

    asyncio.run(scenario())


def test_past_the_bound_a_board_read_is_told_to_come_back_and_others_still_pass():
    async def scenario():
        inner = _App()
        gate = BoardGate(inner, most=3)
        board = "/c/churn"
        held = [asyncio.create_task(_request(gate, board)) for _ in range(3)]
        await asyncio.sleep(0.05)
        refused = await _request(gate, board)
        start, body = refused
        assert start["status"] == 503
        assert (b"retry-after", b"1") in start["headers"]
        answer = json.loads(body["body"])
        assert answer["code"] == "unavailable" and answer["reason"] == "board_busy"
        assert inner.running == 3  # the refused read never reached the app
        other = asyncio.create_task(_request(gate, f"{API}/competitions/churn"))
        await asyncio.sleep(0.05)
        assert inner.running == 4
        inner.release.set()
        assert all(sent[0]["status"] == 200 for sent in await asyncio.gather(*held, other))
        # The reads ended: the next one goes in again.
        assert (await _request(gate, board))[0]["status"] == 200

    asyncio.run(scenario())


def test_a_gate_lets_at_least_one_read_in():
    with pytest.raises(ValueError):
        BoardGate(_App(), most=0)


def test_the_app_serves_the_board_through_the_gate(client, host, alice):
    create_competition(client, host.headers)
    assert upload_key(client, host.headers).status_code in (200, 201)
    for path in ("leaderboard", "leaderboard.csv"):
        response = client.get(f"{API}/competitions/churn/{path}", headers=alice.headers)
        assert response.status_code == 200, response.text
        # Behind the gate the app's rules still hold: the public board needs no token, and a
        # wrong one is refused.
        assert client.get(f"{API}/competitions/churn/{path}").status_code == 200
        wrong = {"Authorization": "Bearer pdm_wrong"}
        assert client.get(f"{API}/competitions/churn/{path}", headers=wrong).status_code == 401
