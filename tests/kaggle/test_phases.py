"""The kaggle client's routes on a competition with phases: they serve the ranking column of the
current phase, and a blind phase gives nothing of any score through them before it ends."""

import io
import re
import zipfile
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from app.models import Phase
from tests.helpers import API, csv_bytes
from tests.kaggle.test_api import call

NOW = datetime.now(UTC)
PAST = (NOW - timedelta(days=10)).isoformat()
NEXT_WEEK = (NOW + timedelta(days=7)).isoformat()
LATER = (NOW + timedelta(days=14)).isoformat()

KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 4.0, "Private"],
)
# Public errors 0.37 and 0: MAE 0.185, RMSE 0.2616...; digits found nowhere else.
ALICE = csv_bytes(["id", "y"], ["a", 1.37], ["b", 2], ["c", 3.2], ["d", 4])
SECRETS = ("0.2616", "0.185", "0.1414", "0.18", "0.19")


def _set_phase(session_factory, name: str, **fields: Any) -> None:
    with session_factory() as session:
        session.execute(update(Phase).where(Phase.name == name).values(**fields))
        session.commit()


def _submit(client, caller, content=ALICE) -> int:
    response = client.post(
        f"{API}/competitions/reg/submissions",
        files={"file": ("sub.csv", content, "text/csv")},
        headers=caller.headers,
    )
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _two_phases(client, host, session_factory, alice) -> tuple[int, int]:
    """A public dev phase (its own columns: MAE ranks) that has ended with one of alice's
    submissions, and a blind final phase (RMSE ranks) open now with another."""
    body = {
        "slug": "reg",
        "title": "Regression",
        "columns": [{"key": "rmse", "metric": {"name": "rmse"}}],
        "phases": [
            {
                "name": "dev",
                "start": PAST,
                "end": NEXT_WEEK,
                "daily_submission_limit": 9,
                "columns": [{"key": "mae", "metric": {"name": "mae"}}],
            },
            {"name": "final", "start": NEXT_WEEK, "end": LATER, "board": "blind"},
        ],
    }
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 201
    for phase in ("dev", "final"):
        response = client.put(
            f"{API}/competitions/reg/phases/{phase}/answer-key",
            files={"file": ("key.csv", KEY, "text/csv")},
            headers=host.headers,
        )
        assert response.status_code == 201, response.text
    dev = _submit(client, alice)
    switch = datetime.now(UTC) - timedelta(minutes=1)
    _set_phase(session_factory, "dev", end=switch)
    _set_phase(session_factory, "final", start=switch, daily_submission_limit=3)
    return dev, _submit(client, alice)


def _no_score(text: str) -> None:
    for secret in SECRETS:
        # A score, not the digits of a time (an ISO time's seconds read "10.18...").
        assert not re.search(r"(?<![\d.])" + re.escape(secret), text), secret


def test_a_blind_current_phase_gives_nothing_of_a_score_through_the_kaggle_routes(
    client, host, alice, bob, session_factory
):
    dev, final = _two_phases(client, host, session_factory, alice)
    for caller in (alice, bob):
        for method in ("GetLeaderboard", "DownloadLeaderboard"):
            refused = call(client, method, {"competitionName": "reg"}, caller.headers)
            assert refused.status_code == 403, refused.text
            assert "blind" in refused.json()["message"]
            _no_score(refused.text)
        listed = call(client, "ListCompetitions", {}, caller.headers)
        assert listed.status_code == 200, listed.text
        competition = listed.json()["competitions"][0]
        # The current phase's rules: its ranking column and its quota; no rank on a blind board.
        assert competition["evaluationMetric"] == "rmse"
        assert competition["maxDailySubmissions"] == 3
        assert competition.get("userRank") in (None, 0)
    mine = call(client, "ListSubmissions", {"competitionName": "reg"}, alice.headers).json()
    by_ref = {s["ref"]: s for s in mine["submissions"]}
    assert by_ref[final]["status"] == "COMPLETE"
    assert (
        by_ref[final].get("publicScore", "") == "" and by_ref[final].get("privateScore", "") == ""
    )
    # The ended public dev phase's submission shows its (MAE) score.
    assert by_ref[dev]["publicScore"] == "0.185"
    one = call(client, "GetSubmission", {"ref": final}, alice.headers).json()
    assert one.get("publicScore", "") == ""
    # Another team sees none of alice's submissions.
    theirs = call(client, "ListSubmissions", {"competitionName": "reg"}, bob.headers).json()
    assert theirs.get("submissions", []) == []
    assert call(client, "GetSubmission", {"ref": final}, bob.headers).status_code == 404
    # Hosts read the blind board.
    hosted = call(client, "GetLeaderboard", {"competitionName": "reg"}, host.headers).json()
    assert hosted["submissions"][0]["teamName"] == "alice"
    assert hosted["submissions"][0]["score"].startswith("0.2616")


def test_once_the_blind_phase_ends_the_routes_serve_its_ranking_column(
    client, host, alice, bob, session_factory
):
    _dev, _final = _two_phases(client, host, session_factory, alice)
    _set_phase(session_factory, "final", end=datetime.now(UTC) - timedelta(seconds=1))
    board = call(client, "GetLeaderboard", {"competitionName": "reg"}, bob.headers)
    assert board.status_code == 200, board.text
    row = board.json()["submissions"][0]
    assert row["teamName"] == "alice" and row["score"] == "0.26163"  # RMSE, 5 decimals
    download = call(client, "DownloadLeaderboard", {"competitionName": "reg"}, bob.headers)
    with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
        text = archive.read(archive.namelist()[0]).decode()
    assert "alice" in text and "0.26163" in text
    listed = call(client, "ListCompetitions", {}, alice.headers).json()["competitions"][0]
    assert listed["userRank"] == 1
