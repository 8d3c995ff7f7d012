"""Every number a participant sees is rounded to the competition's ``score_decimals``: the
submission view and its intervals, the board's intervals, comparisons, the shake-up report, the
pages and the kaggle client's answers. Hosts see every digit."""

import csv
import io
from collections.abc import Iterator
from typing import Any

from tests.helpers import API, close_now
from tests.honest.board.test_api import _competition, _get, _predictions, _submit
from tests.kaggle.test_api import call

DECIMALS = 1
# Figures that are not in the metric's units: an interval's coverage and replicate count, the
# shake-up's rank statistics and its re-split p-value.
NOT_SCORES = {
    "level",
    "replicates",
    "spearman",
    "kendall",
    "mean_abs_rank_change",
    "mean_abs_rank_change_top",
    "p_value",
    "public_rank",
    "private_rank",
}


def floats(value: Any, name: str = "") -> Iterator[tuple[str, float]]:
    """Every float in a JSON answer, with the name of the field holding it."""
    if isinstance(value, float):
        yield name, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from floats(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from floats(item, name)


def unrounded(answer: Any, *, keep: set[str] = NOT_SCORES) -> list[tuple[str, float]]:
    return [(n, v) for n, v in floats(answer) if n not in keep and round(v, DECIMALS) != v]


def _setup(client, host, alice, bob) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    _competition(client, host, score_decimals=DECIMALS)
    a1 = _submit(client, alice, _predictions(19, 13))
    a2 = _submit(client, alice, _predictions(11, 17))
    b1 = _submit(client, bob, _predictions(14, 18))
    return a1, a2, b1


def test_a_participant_sees_only_rounded_numbers_before_the_deadline(client, host, alice, bob):
    a1, a2, _ = _setup(client, host, alice, bob)
    view = _get(client, alice, f"/submissions/{a1}")
    assert view["public_interval"] is not None
    assert unrounded(view) == []
    assert unrounded(_get(client, alice, "/competitions/lad/submissions")) == []
    board = _get(client, alice, "/competitions/lad/leaderboard")
    assert board["rows"][0]["interval"] is not None and unrounded(board) == []
    # p-value included: with every digit of the difference and its se the scores show through.
    comparison = _get(client, alice, f"/competitions/lad/compare?a={a1}&b={a2}")
    assert unrounded(comparison, keep={"replicates"}) == []


def test_a_participant_sees_only_rounded_numbers_after_the_deadline(
    client, host, alice, bob, session_factory
):
    a1, _, _ = _setup(client, host, alice, bob)
    close_now(session_factory)
    view = _get(client, alice, f"/submissions/{a1}")
    assert view["private_interval"] is not None and unrounded(view) == []
    assert unrounded(_get(client, alice, "/competitions/lad/leaderboard?board=private")) == []
    assert unrounded(_get(client, alice, "/competitions/lad/shakeup")) == []
    text = client.get(
        f"{API}/competitions/lad/leaderboard.csv?board=private", headers=alice.headers
    )
    assert text.status_code == 200, text.text
    scores = [float(row["score"]) for row in csv.DictReader(io.StringIO(text.text))]
    assert scores and all(round(s, DECIMALS) == s for s in scores)


def test_the_pages_and_the_kaggle_client_show_rounded_intervals_and_scores(
    client, host, alice, bob
):
    a1, _, _ = _setup(client, host, alice, bob)
    board = _get(client, alice, "/competitions/lad/leaderboard")
    page = client.get("/c/lad/leaderboard").text
    for row in board["rows"]:
        low, high = row["interval"]["bca_low"], row["interval"]["bca_high"]
        assert f"{low:.{DECIMALS}f} – {high:.{DECIMALS}f}" in page
    listed = call(client, "ListSubmissions", {"competitionName": "lad"}, alice.headers).json()
    for submission in listed["submissions"]:
        if submission.get("publicScore"):
            value = float(submission["publicScore"])
            assert round(value, DECIMALS) == value


def test_a_host_sees_every_digit(client, host, alice, bob):
    a1, a2, _ = _setup(client, host, alice, bob)
    found = unrounded(_get(client, host, f"/submissions/{a1}")) + unrounded(
        _get(client, host, f"/competitions/lad/compare?a={a1}&b={a2}")
    )
    # The standard errors of a bootstrap over 20 rows are not multiples of 0.1.
    assert any(name == "se" for name, _ in found), found
