"""A benchmark on the pages: the Settings page's checkboxes turn it (and its board of every
submission) on and off, and the Leaderboard tab shows each row's key version and submission."""

import html

from tests.helpers import (
    API,
    KEY_ROWS,
    PERFECT,
    PUBLIC_HALF,
    create_competition,
    csv_bytes,
    submit,
    upload_key,
)

# A ticked checkbox sends its hidden "no" and then its "yes"; an unticked one the "no" alone.
TICKED, UNTICKED = ["no", "yes"], "no"
V2 = csv_bytes(["id", "target", "Usage"], *[[i, 1 - t, u] for i, t, u in KEY_ROWS])


def _bench(client, person, **fields):  # type: ignore[no-untyped-def]
    ada = person("ada", organiser=True)
    create_competition(client, ada.headers, "bench", **fields)
    assert upload_key(client, ada.headers, "bench").status_code == 201
    return ada


def test_the_settings_page_ticks_a_benchmark_on_and_off(client, person, browser):
    ada = _bench(client, person)
    web = browser("ada")
    page = web.get("/c/bench/host").text
    assert 'type="checkbox" name="benchmark" value="yes">' in page
    sent = web.post(
        "/c/bench/host",
        page="/c/bench/host",
        data={"benchmark": TICKED, "board_every_submission": TICKED},
    )
    assert sent.status_code == 303
    shown = client.get(f"{API}/competitions/bench", headers=ada.headers).json()
    assert shown["benchmark"] is True and shown["board_every_submission"] is True
    assert 'name="benchmark" value="yes" checked' in web.get("/c/bench/host").text

    # Off with its board of every submission still on: refused, the rule said on the page.
    refused = web.post("/c/bench/host", page="/c/bench/host", data={"benchmark": UNTICKED})
    message = html.unescape(web.get(refused.headers["location"]).text)
    assert "a board of every submission is a benchmark's" in message
    web.post(
        "/c/bench/host",
        page="/c/bench/host",
        data={"benchmark": UNTICKED, "board_every_submission": UNTICKED},
    )
    shown = client.get(f"{API}/competitions/bench", headers=ada.headers).json()
    assert shown["benchmark"] is False and shown["board_every_submission"] is False


def test_a_participant_cannot_post_the_settings_form(client, person, browser):
    ada = _bench(client, person)
    person("bea")
    web = browser("bea")
    sent = web.post("/c/bench/host", page="/account", data={"benchmark": TICKED})
    assert sent.status_code == 403 and "for this competition&#39;s hosts only" in sent.text
    shown = client.get(f"{API}/competitions/bench", headers=ada.headers).json()
    assert shown["benchmark"] is False


def test_the_leaderboard_tab_shows_each_rows_key_version_and_submission(
    client, person, browser, alice, bob
):
    _bench(client, person, benchmark=True, board_every_submission=True)
    first = submit(client, alice.headers, PERFECT, "bench").json()["id"]
    second = submit(client, bob.headers, PUBLIC_HALF, "bench").json()["id"]
    page = browser().get("/c/bench/leaderboard").text
    assert "Key version" in page and "Submission" in page
    assert f"#{first}" in page and f"#{second}" in page
    assert page.count(">v1</td>") == 2


def test_the_rescore_tab_publishes_a_benchmarks_version_and_rescores_at_once(
    client, person, browser, alice
):
    ada = _bench(client, person, benchmark=True)
    submit(client, alice.headers, PERFECT, "bench")
    assert upload_key(client, ada.headers, "bench", V2).json()["version"] == 2
    web = browser("ada")
    assert (
        "A benchmark: publishing a version does not wait" in web.get("/c/bench/host/rescore").text
    )
    sent = web.post(
        "/c/bench/host/rescore/publish", page="/c/bench/host/rescore", data={"phase": ""}
    )
    assert sent.status_code == 303
    assert "every scored submission is being rescored" in web.get(sent.headers["location"]).text
    board = client.get(f"{API}/competitions/bench/leaderboard", headers=ada.headers).json()
    assert [r["key_version"] for r in board["rows"]] == [2]
    # Nothing newer waits: the tab offers to queue what is not yet rescored (here nothing).
    page = web.get("/c/bench/host/rescore").text
    assert "Rescore what is not yet scored against version 2" in page
