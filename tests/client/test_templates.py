"""`podium competitions init`'s templates start today and their public dev phase counts each
team's best (issue 42); in-process, no server."""

from datetime import UTC, date, datetime, timedelta

from app.client.bodyfile import parse
from app.client.host import template
from app.competitions.schemas import CompetitionCreate


def test_a_template_starts_today_and_ends_a_month_later():
    today = datetime.now(UTC).date()
    body = parse(template("rmse"), is_json=False).data
    assert body["start"] == today.isoformat()
    assert body["deadline"] == (today + timedelta(days=30)).isoformat()
    CompetitionCreate.model_validate(body)


def test_a_phased_template_counts_the_dev_phases_best_and_the_blind_finals_chosen():
    today = datetime.now(UTC).date()
    body = parse(template("rmse", 2), is_json=False).data
    dev, final = body["phases"]
    assert (dev["board"], dev["counts"]) == ("public", "best")
    assert (final["board"], final["counts"]) == ("blind", "chosen")
    assert dev["start"] == today.isoformat()
    assert final["start"] == (today + timedelta(days=31)).isoformat()
    assert parse(template("rmse", 1), is_json=False).data["phases"][0]["counts"] == "best"


def test_a_pinned_day_gives_the_same_text_whatever_today_is():
    pinned = date(2030, 1, 1)
    assert "start: 2030-01-01" in template("roc_auc", today=pinned)
    assert "end: 2030-03-03" in template("rmse", 2, pinned)
