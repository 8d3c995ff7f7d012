"""Hosting in a real browser (Playwright, as tests/web/test_browser.py): New competition saves a
draft, the key is uploaded by form, the Launch tab publishes it. Saves screenshots under
tests/artifacts/ (new-competition.png is the host guide's figure)."""

from datetime import UTC, datetime, timedelta

from tests.helpers import KEY
from tests.web.test_browser import chromium, server, shot, signed_in  # noqa: F401 - fixtures

DEADLINE = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()


def test_new_competition_to_publish_in_the_browser(server, signed_in):  # noqa: F811
    page = signed_in("host")
    page.click("text=New competition")
    page.wait_for_selector("h1:has-text('New competition')")
    page.fill("input[name=title]", "Churn in the browser")
    page.fill("textarea[name=description]", "# The task\nPredict **churn** from usage.")
    page.select_option("select[name=metric]", "roc_auc")
    page.fill("input[name=deadline]", DEADLINE)
    page.click("button[name=preview]")
    page.wait_for_selector("section[aria-label=Preview] h1:has-text('The task')")
    # What was typed is kept across the preview.
    assert page.input_value("input[name=title]") == "Churn in the browser"
    assert page.input_value("input[name=deadline]") == DEADLINE
    shot(page, "new-competition")
    page.click("button:has-text('Save the draft')")
    page.wait_for_selector("text=Draft churn-in-the-browser saved")
    assert "missing" in page.inner_text(".checklist")
    assert server.api("GET", "/competitions/churn-in-the-browser", "alice").status_code == 404

    page.click("nav.subtabs >> text=Answer keys")
    page.set_input_files(
        "form[action$='/host/keys'] input[type=file]",
        {"name": "key.csv", "mimeType": "text/csv", "buffer": KEY},
    )
    page.click("form[action$='/host/keys'] button[type=submit]")
    page.wait_for_selector(".flash.ok")
    page.click("nav.subtabs >> text=Launch")
    assert "missing" not in page.inner_text(".checklist")
    shot(page, "launch-checklist")
    page.click("form[action$='/host/publish'] button[type=submit]")
    page.wait_for_selector("text=is published")
    shown = server.api("GET", "/competitions/churn-in-the-browser", "alice")
    assert shown.status_code == 200 and shown.json()["status"] == "published"
