"""The hosts' "Reproduce the winners" on the real jail (issue 43): each ranked team's counted
submission of a code phase runs again on the same inputs and runtime, and the report says equal
or not per team; each result is in the record. Only the competition's hosts may ask or read."""

import json

from app.jobs.reproduce import run_due
from tests.coderun.test_code_scoring import SCRIPT, _competition, _submit, _view
from tests.helpers import API, PERFECT, close_now, ready_competition

# Different predictions at every run: its score cannot be reproduced.
RANDOM = b"""
import os
import random

rows = ["a", "b", "c", "d"]
with open("/kaggle/working/submission.csv", "w") as out:
    out.write("id,y\\n")
    for row in rows:
        out.write(f"{row},{random.SystemRandom().uniform(0, 10)}\\n")
"""
URL = f"{API}/competitions/code/reproductions"


def _chained(client, host) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    lines = client.get(f"{API}/competitions/code/ledger", headers=host.headers).text.splitlines()
    return [json.loads(line) for line in lines[1:] if '"reproduced"' in line]


def test_the_winners_runs_are_reproduced_and_each_result_chained(
    jail, client, host, alice, bob, session_factory, settings
):
    _competition(client, host, "code", "code")
    steady = _submit(client, alice, "code", "main.py", SCRIPT)["id"]
    wobbly = _submit(client, bob, "code", "main.py", RANDOM)["id"]
    for made in (steady, wobbly):
        assert _view(client, host, made)["status"] == "scored"
    asked = client.post(URL, json={"top": 5}, headers=host.headers)
    assert asked.status_code == 202, asked.text
    queued = asked.json()
    assert {r["submission_id"] for r in queued["runs"]} == {steady, wobbly}
    assert {r["status"] for r in queued["runs"]} == {"pending"}
    assert run_due(session_factory, settings, batch=10) == 2
    assert run_due(session_factory, settings, batch=10) == 0  # each run once
    report = client.get(URL, headers=host.headers)
    assert report.status_code == 200, report.text
    by_team = {r["team"]: r for r in report.json()["runs"]}
    assert report.json()["request"] == queued["request"]
    assert by_team["alice"]["outcome"] == "equal", by_team["alice"]
    assert (
        by_team["alice"]["details"]["same_runtime"] and by_team["alice"]["details"]["same_inputs"]
    )
    assert by_team["bob"]["outcome"] == "differs", by_team["bob"]
    assert "the output file differs" in by_team["bob"]["details"]["differences"]
    # The record holds each result, with the hashes and no score.
    chained = {e["body"]["submission"]: e["body"] for e in _chained(client, host)}
    assert chained[steady]["outcome"] == "equal" and chained[wobbly]["outcome"] == "differs"
    assert len(chained[steady]["output_sha256"]) == 64
    assert not any("public" in body or "private" in body for body in chained.values())
    # podium verify reads them from the record.
    from urllib.parse import urlsplit

    from app.ledger.verify import check, from_url

    def get(url: str) -> tuple[int, str]:
        parts = urlsplit(url)
        answer = client.get(parts.path + (f"?{parts.query}" if parts.query else ""))
        return answer.status_code, answer.text

    report = check(from_url("http://testserver/c/code", get=get))
    assert report.ok, report.problems
    assert f"winners reproduced: 1 of 2 equal (not: {wobbly} differs)" in report.notes
    # The scores on the board are untouched: a reproduction is a check, not a rerun.
    assert _view(client, host, steady)["status"] == "scored"


def test_only_the_hosts_reproduce_and_read_the_report(jail, client, host, alice, make_user):
    _competition(client, host, "code", "code")
    _submit(client, alice, "code", "main.py", SCRIPT)
    stranger = make_user("stranger", organiser=True)
    for caller in (alice, stranger):
        assert client.post(URL, json={}, headers=caller.headers).status_code in (403, 404)
        assert client.get(URL, headers=caller.headers).status_code in (403, 404)
    assert client.post(URL, json={}).status_code == 401
    assert client.post(URL, json={"top": 0}, headers=host.headers).status_code == 422
    assert client.post(URL, json={"phase": "nope"}, headers=host.headers).status_code == 404
    assert client.get(f"{URL}?request=999999", headers=host.headers).status_code == 404


def test_a_prediction_competition_is_told_to_ask_for_the_code(client, host, alice):
    ready_competition(client, host.headers)
    from tests.helpers import submit

    submit(client, alice.headers, PERFECT)
    answer = client.post(f"{API}/competitions/churn/reproductions", json={}, headers=host.headers)
    assert answer.status_code == 409, answer.text
    assert "attach the code" in answer.json()["detail"]


def test_a_blind_board_is_reproduced_only_once_its_phase_has_ended(
    jail, client, host, alice, session_factory
):
    """Which submissions are reproduced is in the public record: before the end it would
    tell who leads a board nobody may see yet."""
    _competition(client, host, "code", "code")
    blind = client.patch(
        f"{API}/competitions/code/phases/main", json={"board": "blind"}, headers=host.headers
    )
    assert blind.status_code == 200, blind.text
    _submit(client, alice, "code", "main.py", SCRIPT)
    early = client.post(URL, json={}, headers=host.headers)
    assert early.status_code == 409 and "once it has ended" in early.json()["detail"]
    close_now(session_factory)
    assert client.post(URL, json={}, headers=host.headers).status_code == 202
