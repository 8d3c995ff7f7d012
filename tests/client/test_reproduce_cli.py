"""`podium competitions reproduce SLUG --wait` (issue 43) against a real server, whose own loop
runs the reproduction in the real jail: the report names each team's result, and a prediction
competition is told to ask for the code instead."""

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.client.test_participant_cli import one_error_line, podium
from tests.coderun.conftest import jail as jail  # the jail's one self-test, as tests/coderun's
from tests.coderun.test_code_scoring import KEY, SCRIPT
from tests.live_server import LiveServer, free_port, live_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("reproduce-cli"), free_port()) as running:
        yield running


def _api(server: LiveServer, who: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"{server.url}/api/v1",
        headers={"Authorization": f"Bearer {server.tokens[who]}"},
        timeout=60,
    )


@pytest.mark.usefixtures("jail")
def test_the_host_reproduces_the_winners_from_the_command_line(
    server: LiveServer, tmp_path: Path
) -> None:
    with _api(server, "host") as host, _api(server, "alice") as alice:
        body = {
            "slug": "code",
            "title": "Code",
            "metric": {"name": "rmse"},
            "phases": [{"name": "main", "submission_kind": "code"}],
        }
        assert host.post("/competitions", json=body).status_code == 201
        assert host.put(
            "/competitions/code/answer-key", files={"file": ("key.csv", KEY)}
        ).status_code in (200, 201)
        hidden = "/competitions/code/files/test.csv?visibility=hidden"
        assert host.put(hidden, content=b"id\na\nb\nc\nd\n").status_code == 201
        made = alice.post(
            "/competitions/code/submissions", files={"file": ("main.py", SCRIPT)}
        ).json()["id"]
        for _ in range(600):  # the server scores it in its own thread
            if alice.get(f"/submissions/{made}").json()["status"] == "scored":
                break
            time.sleep(0.2)
    home = tmp_path / "home"
    run = podium(
        home,
        "competitions",
        "reproduce",
        "code",
        "--top",
        "1",
        "--wait",
        PODIUM_URL=server.url,
        PODIUM_TOKEN=server.tokens["host"],
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (row,) = [line for line in run.stdout.splitlines() if "alice" in line]
    assert row.split()[:4] == ["1", "alice", str(made), "equal"]
    # A participant may not ask.
    theirs = podium(
        home,
        "competitions",
        "reproduce",
        "code",
        PODIUM_URL=server.url,
        PODIUM_TOKEN=server.tokens["alice"],
    )
    assert theirs.returncode == 2


def test_a_prediction_competition_is_told_to_ask_for_the_code(
    server: LiveServer, tmp_path: Path
) -> None:
    run = podium(
        tmp_path / "home",
        "competitions",
        "reproduce",
        "churn",
        PODIUM_URL=server.url,
        PODIUM_TOKEN=server.tokens["host"],
    )
    assert run.returncode == 2
    assert "attach the code" in one_error_line(run)
