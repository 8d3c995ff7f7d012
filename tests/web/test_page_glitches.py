"""The small things on the pages that issue 42 found: the chart's axes, the 404 page's frame, a
start pre-filled with microseconds, the Dry run box, drop-downs and refusals' cells; and
`make run PORT=8080`."""

import os
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.web.charts import score_over_time
from tests.helpers import API, create_competition

ROOT = Path(__file__).resolve().parents[2]
CSS = (ROOT / "app/web/static/podium.css").read_text()


def test_a_short_span_has_distinct_time_labels_and_the_y_title_clears_its_ticks():
    t0 = datetime(2026, 12, 4, 22, 8, 5, tzinfo=UTC)
    series = {"a": [(t0, 0.123456), (t0 + timedelta(seconds=50), 0.1234567)]}
    chart = str(score_over_time(series, maximize=True, metric="average_precision"))
    bottom = re.findall(r'y="286" text-anchor="\w+">([^<]+)</text>', chart)
    assert len(bottom) == 5 and len(set(bottom)) == 5, bottom  # 22:08:05 ... not 22:08 x5
    # The y axis's title is written above the plot, never rotated over the tick labels.
    assert "rotate(-90)" not in chart
    assert re.search(r'text-anchor="end" class="axis-title">Best public average_precision', chart)
    # The plot starts right of its widest tick label.
    ticks = re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="end">([^<]+)</text>', chart)
    left = float(re.search(r'<line x1="([\d.]+)" x2="\1" y1=', chart).group(1))  # type: ignore[union-attr]
    widest = max(len(label) for _, label in ticks)
    assert left - 6 >= 7 * widest


def test_a_404_shows_a_signed_in_user_as_signed_in(person, browser):
    person("ada")
    web = browser("ada")
    page = web.get("/no/such/page")
    assert page.status_code == 404
    assert ">Sign in<" not in page.text and "ada" in page.text and "Sign out" in page.text
    anonymous = browser().get("/no/such/page")
    assert anonymous.status_code == 404 and ">Sign in<" in anonymous.text


def test_a_start_made_now_is_whole_seconds(client, host):
    made = create_competition(client, host.headers, "now-ish")
    assert "." not in made["start"] and "." not in made["phases"][0]["start"]


def test_the_dry_run_box_sits_with_its_label_and_drop_downs_and_refusals_have_room(person, browser):
    person("ada", organiser=True)
    page = browser("ada").get("/host/import").text
    assert re.search(r'<label class="check"><input type="checkbox" name="dry_run"', page)
    assert ".row label > select { width: auto; min-width: 100%" in CSS
    assert ".table td.status, .table td.error-cell { min-width: 18rem; }" in CSS
    assert "overflow-wrap: anywhere" in CSS.split(".error-text")[1].split("}")[0]


def test_make_run_takes_a_port_and_the_readme_says_so():
    # As a person runs it: not as a sub-make of `make test` (whose MAKEFLAGS would carry over,
    # and which prints "make[1]: Leaving directory" last).
    alone = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    shown = subprocess.run(
        ["make", "--no-print-directory", "-n", "run", "PORT=8080"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=alone,
    )
    assert (
        shown.stdout.strip()
        .splitlines()[-1]
        .endswith("podium serve --demo --host 127.0.0.1 --port 8080")
    )
    assert "make run PORT=8080" in (ROOT / "README.md").read_text()


def test_the_api_start_of_a_phase_has_no_microseconds_on_the_wizard(client, person, browser):
    ada = person("ada", organiser=True)
    create_competition(client, ada.headers, "draft-now", status="draft", phases=[{"name": "main"}])
    page = browser("ada").get("/c/draft-now/host/new/phases").text
    start = re.search(r'name="ph-0-start"[^>]*value="([^"]*)"', page)
    assert start is not None and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", start.group(1))
    assert client.get(f"{API}/competitions/draft-now", headers=ada.headers).status_code == 200
