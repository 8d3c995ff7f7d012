"""Which board a reader gets without naming a phase: one the reader may read, an open public
phase's first (issue 42: a public dev phase and a blind final phase open together)."""

from datetime import UTC, datetime, timedelta

from tests.helpers import API, csv_bytes

NOW = datetime.now(UTC)
KEY = csv_bytes(["id", "y", "Usage"], ["a", 1.0, "Public"], ["b", 2.0, "Private"])
PHASES = [
    {
        "name": "dev",
        "start": (NOW - timedelta(days=3)).isoformat(),
        "end": (NOW + timedelta(days=9)).isoformat(),
    },
    {
        "name": "final",
        "start": (NOW - timedelta(days=1)).isoformat(),
        "end": (NOW + timedelta(days=9)).isoformat(),
        "board": "blind",
    },
]


def _class(client, host) -> None:  # type: ignore[no-untyped-def]
    body = {"slug": "term", "title": "Term", "metric": {"name": "rmse"}, "phases": PHASES}
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 201
    for phase in ("dev", "final"):
        put = client.put(
            f"{API}/competitions/term/phases/{phase}/answer-key",
            files={"file": ("k.csv", KEY)},
            headers=host.headers,
        )
        assert put.status_code == 201, put.text


def test_a_participant_gets_the_open_public_board_not_the_blind_one(client, host, alice):
    _class(client, host)
    for headers in (alice.headers, {}):
        board = client.get(f"{API}/competitions/term/leaderboard", headers=headers)
        assert board.status_code == 200, board.text
        assert board.json()["phase"] == "dev"
        csv = client.get(f"{API}/competitions/term/leaderboard.csv", headers=headers)
        assert csv.status_code == 200
    # Named, the blind board still says why it is closed; the host gets the current phase.
    blind = client.get(f"{API}/competitions/term/leaderboard?phase=final", headers=alice.headers)
    assert blind.status_code == 403 and blind.json()["code"] == "board_blind"
    hosted = client.get(f"{API}/competitions/term/leaderboard", headers=host.headers).json()
    assert hosted["phase"] == "final"


def test_submissions_are_listed_by_phase(client, host, alice):
    _class(client, host)
    for phase in ("dev", "final", "dev"):
        sent = client.post(
            f"{API}/competitions/term/submissions",
            files={"file": ("p.csv", b"id,y\na,1\nb,2\n")},
            data={"phase": phase},
            headers=alice.headers,
        )
        assert sent.status_code == 202, sent.text
    url = f"{API}/competitions/term/submissions"
    assert len(client.get(url, headers=alice.headers).json()) == 3
    dev = client.get(url, params={"phase": "dev"}, headers=alice.headers).json()
    assert [s["phase"] for s in dev] == ["dev", "dev"]
    final = client.get(url, params={"phase": "final"}, headers=alice.headers).json()
    assert [s["phase"] for s in final] == ["final"]
    unknown = client.get(url, params={"phase": "nope"}, headers=alice.headers)
    assert unknown.status_code == 404 and "dev, final" in unknown.json()["detail"]


def test_an_unnamed_upload_while_two_are_open_names_the_cli_option(client, host, alice):
    _class(client, host)
    refused = client.post(
        f"{API}/competitions/term/submissions",
        files={"file": ("p.csv", b"id,y\na,1\nb,2\n")},
        headers=alice.headers,
    )
    assert refused.status_code == 422
    assert "--phase NAME" in refused.json()["detail"]


def test_a_closed_phase_named_while_another_is_open_says_which_is_open(client, host, alice):
    phases = [PHASES[0], {**PHASES[1], "start": (NOW + timedelta(days=2)).isoformat()}]
    body = {"slug": "term", "title": "Term", "metric": {"name": "rmse"}, "phases": phases}
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 201
    refused = client.post(
        f"{API}/competitions/term/submissions",
        files={"file": ("p.csv", b"id,y\na,1\nb,2\n")},
        data={"phase": "final"},
        headers=alice.headers,
    )
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert "no phase is open" not in detail
    assert "phase 'final'" in detail and "opens at" in detail and "open now: 'dev'" in detail
