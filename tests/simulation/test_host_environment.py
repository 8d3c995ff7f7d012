"""A host's own environment, written to kaggle-environments' interface, uploaded and run in the
jail: agents are validated and play it, the board ranks them; one whose interpreter raises is
refused with its traceback and the phase keeps its environment."""

import io
import json
import zipfile

import pytest

from tests.helpers import API

pytestmark = pytest.mark.slow

SPEC = {
    "name": "bigger",
    "title": "Bigger number",
    "description": "Each agent names a number from 0 to 9; the bigger wins.",
    "version": "1.0.0",
    "agents": [2],
    "configuration": {"episodeSteps": 2, "actTimeout": 1},
    "reward": {"description": "1 for the bigger number", "type": "number", "default": 0},
    "observation": {"remainingOverageTime": 2},
    "action": {"description": "0 to 9", "type": "integer", "minimum": 0, "maximum": 9},
}
INTERPRETER = """
def interpreter(state, env):
    if env.done:
        return state
    values = [a.action if a.status == "ACTIVE" else -1 for a in state]
    best = max(values)
    for agent, value in zip(state, values):
        if agent.status == "ACTIVE":
            agent.reward = 1 if value == best and values.count(best) == 1 else 0
            agent.status = "DONE"
    return state


def renderer(state, env):
    return str([a.action for a in state])
"""
NINE = b"def agent(observation, configuration):\n    return 9\n"
THREE = b"def agent(observation, configuration):\n    return 3\n"
PHASE = {
    "name": "main",
    "submission_kind": "simulation",
    "environment": {"name": "rps"},  # until the host's own is uploaded
    "simulation": {"episodes_in_flight": 1, "k": 1},
}


def _zip(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return out.getvalue()


def _upload(client, host, content: bytes):  # type: ignore[no-untyped-def]
    return client.put(
        f"{API}/competitions/bigger/phases/main/environment",
        files={"file": ("bigger.zip", content, "application/zip")},
        headers=host.headers,
    )


def test_a_hosts_environment_is_made_in_the_jail_and_played(jail, client, host, alice, bob):
    body = {"slug": "bigger", "title": "Bigger", "metric": {"name": "accuracy"}, "phases": [PHASE]}
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).is_success
    good = _zip({"bigger.json": json.dumps(SPEC), "bigger.py": INTERPRETER})
    assert _upload(client, alice, good).status_code == 403
    made = _upload(client, host, good)
    assert made.status_code == 200, made.text
    assert made.json()["environment"]["name"] == "bigger"
    assert made.json()["environment"]["configuration"]["episodeSteps"] == 2
    sent = {}
    for caller, agent in ((alice, NINE), (bob, THREE)):
        response = client.post(
            f"{API}/competitions/bigger/submissions",
            files={"file": ("main.py", agent, "text/x-python")},
            headers=caller.headers,
        )
        assert response.status_code == 202, response.text
        sent[caller.name] = client.get(
            f"{API}/submissions/{response.json()['id']}", headers=caller.headers
        ).json()
    assert {s["status"] for s in sent.values()} == {"scored"}, sent
    assert client.app.state.scoring_queue.play_episodes(3) == 3
    rows = client.get(f"{API}/competitions/bigger/leaderboard").json()["rows"]
    assert [r["team"] for r in rows] == ["alice", "bob"]
    assert rows[0]["episodes"] == 3
    episodes = client.get(f"{API}/submissions/{sent['alice']['id']}/episodes").json()
    replay = client.get(f"{API}/episodes/{episodes[-1]['id']}").json()
    assert replay["name"] == "bigger" and replay["steps"][-1][0]["status"] == "DONE"
    # The host's renderer is their code: the page does not run it on this site.
    assert client.get(f"/episodes/{episodes[-1]['id']}").status_code == 409


def test_an_environment_that_fails_is_refused_and_the_phase_keeps_its_own(jail, client, host):
    body = {"slug": "bigger", "title": "Bigger", "metric": {"name": "accuracy"}, "phases": [PHASE]}
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).is_success
    broken = INTERPRETER.replace("    if env.done:", "    1 / 0\n    if env.done:")
    refused = _upload(client, host, _zip({"bigger.json": json.dumps(SPEC), "bigger.py": broken}))
    assert refused.status_code == 422
    assert "ZeroDivisionError" in refused.json()["detail"], refused.text
    for files, words in (
        ({"bigger.py": INTERPRETER}, "exactly one <name>.json"),
        ({"bigger.json": json.dumps(SPEC)}, "no bigger.py"),
        ({"../bigger.json": "{}", "bigger.py": ""}, "at the zip's root"),
    ):
        bad = _upload(client, host, _zip(files))
        assert bad.status_code == 422 and words in bad.json()["detail"], bad.text
    assert _upload(client, host, b"not a zip").status_code == 422
    phase = client.get(f"{API}/competitions/bigger/phases", headers=host.headers).json()[0]
    assert phase["environment"]["name"] == "rps"


def _environment_item(client, host) -> dict:  # type: ignore[no-untyped-def,type-arg]
    checklist = client.get(f"{API}/competitions/bigger/checklist", headers=host.headers)
    assert checklist.status_code == 200, checklist.text
    items = [i for i in checklist.json()["items"] if i["key"] == "environment"]
    assert len(items) == 1, checklist.json()
    assert not any(
        i["key"].startswith(("answer_key", "sample_scores")) for i in checklist.json()["items"]
    )
    return items[0]  # type: ignore[no-any-return]


def test_an_environment_that_fails_mid_episode_fails_its_phases_checklist(
    jail, client, host, alice
):
    body = {"slug": "bigger", "title": "Bigger", "metric": {"name": "accuracy"}, "phases": [PHASE]}
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).is_success
    assert _environment_item(client, host)["ok"]  # kaggle-environments' rps until the upload
    # Made and reset at upload, it raises at its first step: every episode fails, not the server.
    later = INTERPRETER.replace(
        "        return state\n    values", "        return state\n    1 / 0\n    values", 1
    )
    assert later != INTERPRETER
    made = _upload(client, host, _zip({"bigger.json": json.dumps(SPEC), "bigger.py": later}))
    assert made.status_code == 200, made.text
    item = _environment_item(client, host)
    assert item["ok"] and "made and reset in the jail" in item["detail"]
    response = client.post(
        f"{API}/competitions/bigger/submissions",
        files={"file": ("main.py", NINE, "text/x-python")},
        headers=alice.headers,
    )
    assert response.status_code == 202, response.text
    sent = client.get(f"{API}/submissions/{response.json()['id']}", headers=alice.headers).json()
    assert sent["status"] == "failed", sent
    item = _environment_item(client, host)
    assert not item["ok"]
    assert "could not be played" in item["detail"] and "ZeroDivisionError" in item["detail"], item
