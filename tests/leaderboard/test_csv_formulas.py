"""Board CSVs are safe to open in a spreadsheet: a team name that starts like a formula is written
with a leading ``'`` (OWASP's rule), while numbers, negative scores included, stay numbers."""

import csv
import io
import zipfile

import pytest

from tests.helpers import API, create_competition, csv_bytes, submit, upload_key
from tests.kaggle.test_api import basic, call

# Targets 0 and 2 on each split; predicting 1.5 for all gives R^2 = 1 - 2.5 / 2 = -0.25 on both.
KEY = csv_bytes(
    ["id", "target", "Usage"],
    ["a", 0, "Public"],
    ["b", 2, "Public"],
    ["c", 0, "Private"],
    ["d", 2, "Private"],
)
NEGATIVE = csv_bytes(["id", "target"], *[[i, 1.5] for i in "abcd"])
NAMES = ['=HYPERLINK("http://x")', "@SUM(1)", "+cmd", "-2+3"]


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("@SUM(1)", "'@SUM(1)"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("plain", "plain"),
        ("", ""),
        (-0.25, -0.25),
        (3, 3),
        ("-0.25", "-0.25"),  # a number written as text is still a number
        ("+1e-5", "+1e-5"),
        ("-inf", "'-inf"),
    ],
)
def test_safe_cell_neutralises_text_that_starts_like_a_formula(cell, written):
    from app.leaderboard.spreadsheet import safe_cell, safe_row

    assert safe_cell(cell) == written
    assert safe_row([cell, None]) == [written, None]


def _board(client, make_user):  # type: ignore[no-untyped-def]
    host = make_user("host", organiser=True)
    create_competition(client, host.headers, metric={"name": "r2"})
    assert upload_key(client, host.headers, content=KEY).status_code == 201
    for name in NAMES:
        assert submit(client, make_user(name).headers, NEGATIVE).status_code == 202
    return host


def _rows(body: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body)))


def test_leaderboard_csv_neutralises_team_names_and_keeps_scores_numeric(client, make_user):
    host = _board(client, make_user)
    viewer = make_user("viewer")
    url = f"{API}/competitions/churn/leaderboard.csv"
    for who, board in ((viewer, "public"), (host, "public"), (host, "private")):
        response = client.get(url, params={"board": board}, headers=who.headers)
        assert response.status_code == 200, response.text
        rows = _rows(response.text)
        assert sorted(r["team"] for r in rows) == sorted("'" + n for n in NAMES), rows
        assert {float(r["score"]) for r in rows} == {-0.25}  # numbers, never prefixed


def test_kaggle_leaderboard_zip_neutralises_team_names(client, make_user):
    _board(client, make_user)
    viewer = make_user("viewer")
    response = call(
        client, "DownloadLeaderboard", {"competitionName": "churn"}, basic("viewer", viewer.token)
    )
    while response.status_code in (302, 303, 307):
        response = client.get(response.headers["location"])
    assert response.status_code == 200, response.text
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        (name,) = archive.namelist()
        rows = _rows(archive.read(name).decode())
    assert sorted(r["TeamName"] for r in rows) == sorted("'" + n for n in NAMES), rows
    assert {float(r["Score"]) for r in rows} == {-0.25}
    assert not any(r["Score"].startswith("'") for r in rows)
