from datetime import UTC, datetime, timedelta

from tests.helpers import (
    PERFECT,
    PUBLIC_HALF,
    close_now,
    create_competition,
    csv_bytes,
    ready_competition,
    submit,
    upload_key,
)

FUTURE = (datetime.now(UTC) + timedelta(days=7)).isoformat()


def test_home_page_lists_competitions_without_a_token(client, host):
    create_competition(client, host.headers, "churn")
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'href="/c/churn"' in page.text and "roc_auc" in page.text


def test_competition_page_shows_the_public_board_but_not_the_private_one_before_the_deadline(
    client, host, alice
):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, alice.headers, PUBLIC_HALF)  # public 0.5, private 1.0
    page = client.get("/c/churn/leaderboard").text
    assert "Public leaderboard" in page and "alice" in page and "0.5" in page
    assert "Private leaderboard" not in page and "opens when the competition closes" in page


def test_competition_page_shows_the_private_board_after_the_deadline(
    client, host, alice, session_factory
):
    ready_competition(client, host.headers, deadline=FUTURE)
    submit(client, alice.headers, PERFECT)
    close_now(session_factory)
    assert "Private leaderboard" in client.get("/c/churn/leaderboard?board=private").text


def test_pages_show_rounded_scores(client, host, alice):
    create_competition(client, host.headers, "reg", metric={"name": "rmse"}, score_decimals=2)
    upload_key(
        client, host.headers, "reg", csv_bytes(["id", "y"], ["a", 0.0], ["b", 0.0], ["c", 0.0])
    )
    submit(client, alice.headers, csv_bytes(["id", "y"], ["a", 1], ["b", 1], ["c", 0]), slug="reg")
    page = client.get("/c/reg/leaderboard").text
    assert "0.82" in page and "0.816" not in page


def test_unknown_competition_page_is_404(client):
    assert client.get("/c/nothing-here").status_code == 404
