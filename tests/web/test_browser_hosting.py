"""Hosting in a real browser (Playwright, as tests/web/test_browser.py): the New competition
page's steps make a two-phase, two-column draft, a key is uploaded for each phase, and the
Launch tab publishes it. Saves screenshots under tests/artifacts/ (new-competition-columns.png
and new-competition-phases.png are the host guide's figures)."""

from tests.helpers import csv_bytes
from tests.web.test_browser import chromium, server, shot, signed_in  # noqa: F401 - fixtures

REG_KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 4.0, "Private"],
)


def test_new_competition_with_two_phases_and_two_columns_to_publish(server, signed_in):  # noqa: F811
    page = signed_in("host")
    page.click("text=New competition")
    page.wait_for_selector("h1:has-text('New competition')")
    page.fill("input[name=title]", "Sales in the browser")
    page.fill("textarea[name=description]", "# The task\nPredict **sales** per store.")
    page.click("button[name=preview]")
    page.wait_for_selector("section[aria-label=Preview] h1:has-text('The task')")
    # What was typed is kept across the preview.
    assert page.input_value("input[name=title]") == "Sales in the browser"
    shot(page, "new-competition")
    page.click("button:has-text('Save the draft and continue')")
    page.wait_for_selector("text=Draft sales-in-the-browser saved")
    assert server.api("GET", "/competitions/sales-in-the-browser", "alice").status_code == 404

    # 2. Columns: the first (a placeholder) becomes RMSE, then a second metric column, MAE.
    page.fill("input[name=col-0-key]", "rmse")
    page.select_option("select[name=col-0-kind]", "rmse")
    page.click("button[value=add_metric]")
    page.wait_for_selector("input[name=col-1-key]")
    assert page.input_value("input[name=col-0-key]") == "rmse"  # kept across the new row
    page.fill("input[name=col-1-key]", "mae")
    page.fill("input[name=col-1-title]", "MAE")
    page.select_option("select[name=col-1-kind]", "mae")
    page.click("fieldset[aria-label='Column 2'] button[value=refresh]")
    page.wait_for_selector("fieldset[aria-label='Column 2'] .metric-doc:has-text('mae')")
    shot(page, "new-competition-columns")
    page.click("button[value=save] >> nth=0")
    page.wait_for_selector("text=Columns saved: rmse, mae")

    # 3. Phases: the one open-ended phase becomes "dev", and a blind "final" follows it.
    page.fill("input[name=ph-0-name]", "dev")
    page.fill("input[name=ph-0-title]", "Development")
    page.fill("input[name=ph-0-start]", "2030-01-01")
    page.fill("input[name=ph-0-end]", "2030-01-31")
    page.click("button[value=add_phase]")
    page.wait_for_selector("input[name=ph-1-name]")
    page.fill("input[name=ph-1-name]", "final")
    page.fill("input[name=ph-1-end]", "2030-02-14")
    page.select_option("select[name=ph-1-board]", "blind")
    page.select_option("select[name=ph-1-counts]", "chosen")
    # The final phase asks each uploader for a method name, shown on its board.
    page.click("button[value='ph-1-field:add']")
    page.wait_for_selector("input[name=ph-1-field-0-key]")
    assert page.input_value("input[name=ph-1-name]") == "final"  # kept across the new row
    page.fill("input[name=ph-1-field-0-key]", "method_name")
    page.check("input[name=ph-1-field-0-on_board]")
    shot(page, "new-competition-phases")
    page.click("button[value=save] >> nth=0")
    page.wait_for_selector("text=dev 2030-01-01T00:00:00Z to 2030-01-31T23:59:59Z")

    # 4. A key for each phase.
    for phase in ("dev", "final"):
        form = f"form[aria-label='Answer key of {phase}']"
        page.set_input_files(
            f"{form} input[type=file]",
            {"name": "key.csv", "mimeType": "text/csv", "buffer": REG_KEY},
        )
        page.click(f"{form} button[type=submit]")
        page.wait_for_selector(f"text=Phase {phase}: answer key version 1 stored")

    # 5. The checklist passes; Publish.
    page.click("text=Next: the checklist and Publish")
    checklist = page.inner_text(".checklist")
    assert "missing" not in checklist and "phases.final.sample_scores.mae" in checklist
    shot(page, "launch-checklist")
    page.click("form[action$='/host/publish'] button[type=submit]")
    page.wait_for_selector("text=is published")
    shown = server.api("GET", "/competitions/sales-in-the-browser", "alice")
    assert shown.status_code == 200 and shown.json()["status"] == "published"
    body = shown.json()
    assert [c["key"] for c in body["leaderboard_columns"]] == ["rmse", "mae"]
    assert [(p["name"], p["board"]) for p in body["phases"]] == [
        ("dev", "public"),
        ("final", "blind"),
    ]
    assert body["phases"][1]["entry_fields"] == [
        {"key": "method_name", "type": "text", "required": False, "on_board": True}
    ]


def test_a_host_extends_a_phase_and_releases_a_file_with_a_phase(server, signed_in):  # noqa: F811
    """Issue 42: the term's ordinary changes on the Host pages, no API call by hand."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    phases = [
        {"name": "dev", "start": (now - timedelta(days=2)).isoformat(), "end": (now + timedelta(days=5)).isoformat()},
        {"name": "final", "start": (now + timedelta(days=5)).isoformat(), "end": (now + timedelta(days=9)).isoformat(), "board": "blind"},
    ]  # fmt: skip
    body = {"slug": "term-pages", "title": "Term", "metric": {"name": "rmse"}, "phases": phases}
    assert server.api("POST", "/competitions", "host", json=body).status_code == 201
    page = signed_in("host")
    page.goto(f"{server.url}/c/term-pages/host")
    form = "form[aria-label='Phase final']"
    page.fill(f"{form} input[name=end]", "2999-01-31T12:00")
    page.fill(f"{form} input[name=daily_submission_limit]", "9")
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector("text=Phase final saved")
    final = server.api("GET", "/competitions/term-pages", "alice").json()["phases"][1]
    assert final["end"].startswith("2999-01-31T12:00:00")
    assert final["daily_submission_limit"] == 9
    shot(page, "host-phase-extended")

    page.goto(f"{server.url}/c/term-pages/host/files")
    page.set_input_files(
        "input[name=file]", {"name": "final_test.csv", "mimeType": "text/csv", "buffer": b"id\na\n"}
    )
    page.select_option("select[name=release_with]", "final")
    page.click("form[action$='/host/files'] button[type=submit]")
    page.wait_for_selector("text=final_test.csv published, public when phase 'final' starts")
    listed = server.api("GET", "/competitions/term-pages/files", "alice").json()
    assert listed == []
    hosted = server.api("GET", "/competitions/term-pages/files", "host").json()
    assert [(f["name"], f["release_with"]) for f in hosted] == [("final_test.csv", "final")]
    # The participant's Data tab says what comes when.
    student = signed_in("alice")
    student.goto(f"{server.url}/c/term-pages/data")
    coming = student.inner_text(".coming-files")
    assert "final_test.csv" in coming and "final" in coming
    shot(student, "data-coming-with-phase")
