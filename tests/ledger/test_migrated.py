"""Submissions carried into a phase when it opens (app.competitions.migration) enter its boards:
the record holds each copy as received, so the new phase's board verifies."""

from urllib.parse import urlsplit

from app.ledger.verify import check, from_url
from tests.competitions.test_migration import _competition, _open_final, _scored
from tests.competitions.test_phases import _preds
from tests.helpers import API


def test_a_migrated_phases_board_follows_from_the_chain(client, host, alice, bob, session_factory):
    _competition(client, host, take="last")
    _scored(client, alice, _preds(1, 2, 3, 4))
    _scored(client, bob, _preds(2, 2, 3, 4))
    _open_final(session_factory)
    done = client.post(f"{API}/competitions/reg/phases/final/migrate", headers=host.headers)
    assert done.status_code == 200 and done.json()["migrated"] == 2, done.text
    lines = client.get(f"{API}/competitions/reg/ledger").text.splitlines()
    assert sum('"migrated_from"' in line for line in lines) == 2

    def get(url: str) -> tuple[int, str]:
        parts = urlsplit(url)
        answer = client.get(parts.path + (f"?{parts.query}" if parts.query else ""))
        return answer.status_code, answer.text

    material = from_url("http://testserver/c/reg", get=get)
    assert len(material.boards[("final", "public")]) == 2
    report = check(material)
    assert report.ok, report.problems
