"""The host's pages change every setting the API changes (issue 42): each phase's dates, quotas,
board and counting rule on Settings, the public board's mode and the scoring settings, and each
data file's release on Data files; the API's rules beside the fields, its messages on refusal."""

import html
from datetime import UTC, datetime, timedelta

from tests.helpers import API, create_competition

NOW = datetime.now(UTC)
PHASES = [
    {
        "name": "dev",
        "start": (NOW - timedelta(days=3)).isoformat(),
        "end": (NOW + timedelta(days=5)).isoformat(),
    },
    {
        "name": "final",
        "start": (NOW + timedelta(days=5)).isoformat(),
        "end": (NOW + timedelta(days=9)).isoformat(),
        "board": "blind",
    },
]


def _flash(page: str) -> str:
    """The page's message: at the top, or (a phase form's refusal) beside its field."""
    for marker, end in (('class="field-error"', "</span>"), ('class="flash ', "</p>")):
        if marker in page:
            return html.unescape(page.split(marker)[1].split(end)[0])
    raise AssertionError("no message on the page")


def test_a_refused_phase_change_is_shown_beside_its_field_in_its_form(client, person, browser):
    _term(client, person)
    web = browser("ada")
    refused = web.post(
        "/c/term/host/phases/final", page="/c/term/host", data={"end": "2020-01-01T00:00"}
    )
    assert refused.status_code == 303
    page = web.get(refused.headers["location"]).text
    form = page.split('id="phase-final"')[1].split("</form>")[0]
    end_label = form.split('name="end"')[1].split("</label>")[0]
    assert 'class="field-error"' in end_label and "end must come after start" in html.unescape(
        end_label
    )
    # Nowhere else: not at the top of the page, not in the other phase's form.
    assert page.count('class="field-error"') == 1 and 'class="flash error"' not in page
    assert 'class="field-error"' not in page.split('id="phase-dev"')[1].split("</form>")[0]
    # A refused date that cannot even be read is shown beside its field too.
    unread = web.post("/c/term/host/phases/dev", page="/c/term/host", data={"start": "31/12/2026"})
    form = web.get(unread.headers["location"]).text.split('id="phase-dev"')[1].split("</form>")[0]
    assert 'class="field-error"' in form.split('name="start"')[1].split("</label>")[0]


def _term(client, person):  # type: ignore[no-untyped-def]
    ada = person("ada", organiser=True)
    create_competition(client, ada.headers, "term", metric={"name": "rmse"}, phases=PHASES)
    return ada


def _phase(client, ada, name):  # type: ignore[no-untyped-def]
    shown = client.get(f"{API}/competitions/term", headers=ada.headers).json()
    return next(p for p in shown["phases"] if p["name"] == name)


def test_a_host_extends_a_phase_on_the_settings_page(client, person, browser):
    ada = _term(client, person)
    web = browser("ada")
    page = web.get("/c/term/host").text
    assert 'action="/c/term/host/phases/final"' in page and "(after the start)" in page
    # Several phases: the competition-wide Deadline is not offered, the phases' ends are.
    assert 'name="deadline"' not in page
    sent = web.post(
        "/c/term/host/phases/final",
        page="/c/term/host",
        data={"end": "2999-01-31T12:00", "daily_submission_limit": "9", "counts": "best"},
    )
    assert sent.status_code == 303
    flash = _flash(web.get("/c/term/host").text)
    assert (
        "Phase final saved: counts, daily_submission_limit, end (2999-01-31T12:00:00+00:00)"
        in flash
    )
    final = _phase(client, ada, "final")
    assert final["end"].startswith("2999-01-31T12:00:00")
    assert final["daily_submission_limit"] == 9 and final["counts"] == "best"

    # The API's rules and messages: an end before the start, a date out of range.
    early = web.post(
        "/c/term/host/phases/final", page="/c/term/host", data={"end": "2001-01-01T00:00"}
    )
    assert "Phase final: phase 'final': end must come after start" in _flash(
        web.get(early.headers["location"]).text
    )
    far = web.post(
        "/c/term/host/phases/dev", page="/c/term/host", data={"end": "9999-12-31T23:59:59-12:00"}
    )
    assert far.status_code == 303
    assert "between 1970-01-01 and 2999-12-31" in _flash(web.get(far.headers["location"]).text)
    assert _phase(client, ada, "final")["end"].startswith("2999-01-31")


def test_the_scoring_settings_are_on_the_settings_page(client, person, browser):
    ada = _term(client, person)
    web = browser("ada")
    sent = web.post(
        "/c/term/host",
        page="/c/term/host",
        data={
            "public_board_mode": "ladder",
            "ladder_step": "0.05",
            "score_intervals": "no",
            "scoring_time_limit_seconds": "120",
        },
    )
    assert sent.status_code == 303
    shown = client.get(f"{API}/competitions/term", headers=ada.headers).json()
    assert shown["public_board_mode"] == "ladder" and shown["ladder_step"] == 0.05
    assert shown["score_intervals"] is False
    page = web.get("/c/term/host").text
    assert 'name="scoring_time_limit_seconds" min="1" max="86400" value="120"' in page
    bad = web.post("/c/term/host", page="/c/term/host", data={"ladder_step": "2"})
    assert "ladder step: must be less than 1" in _flash(web.get(bad.headers["location"]).text)


def test_a_file_is_released_with_a_phase_from_the_data_files_page(client, person, browser, alice):
    _term(client, person)
    web = browser("ada")
    page = "/c/term/host/files"
    sent = web.post(
        page,
        page=page,
        data={"release_with": "final"},
        files={"file": ("final_test.csv", b"id\n1\n", "text/csv")},
    )
    assert sent.status_code == 303
    assert "public when phase 'final' starts" in _flash(web.get(page).text)
    assert client.get(f"{API}/competitions/term/files", headers=alice.headers).json() == []
    # The Data tab says what comes when.
    data_tab = web.get("/c/term/data").text
    assert "final_test.csv</strong>: public when phase" in data_tab
    # Public now, from the file's own row.
    made_public = web.post(f"{page}/final_test.csv/release", page=page, data={"release": "public"})
    assert "final_test.csv: public now" in _flash(web.get(made_public.headers["location"]).text)
    listed = client.get(f"{API}/competitions/term/files", headers=alice.headers).json()
    assert [f["name"] for f in listed] == ["final_test.csv"]


def test_only_the_competitions_hosts_may_post_these_forms(client, person, browser):
    _term(client, person)
    person("eve", organiser=True)
    eve = browser("eve")
    for path in ("/c/term/host/phases/final", "/c/term/host/files/x.csv/release"):
        refused = eve.post(path, page="/", data={"end": "2999-01-01T00:00", "release": "hidden"})
        assert refused.status_code == 403


def test_a_code_phases_kind_and_limits_are_on_the_settings_page(client, person, browser):
    ada = person("ada", organiser=True)
    body = {"name": "main", "submission_kind": "code", "code_limits": {"wall_seconds": 120}}
    create_competition(client, ada.headers, "coded", metric={"name": "rmse"}, phases=[body])
    web = browser("ada")
    page = web.get("/c/coded/host").text
    assert 'aria-label="Code limits of main"' in page and 'name="wall_seconds" value="120"' in page
    sent = web.post(
        "/c/coded/host/phases/main", page="/c/coded/host", data={"wall_seconds": "300", "cpus": "1"}
    )
    assert "Phase main saved: code_limits" in _flash(web.get(sent.headers["location"]).text)
    main = client.get(f"{API}/competitions/coded", headers=ada.headers).json()["phases"][0]
    assert main["code_limits"]["wall_seconds"] == 300 and main["code_limits"]["memory_mb"] == 2048
    # Past the server's maximum: the API's own message, naming the limit and its setting.
    over = web.post(
        "/c/coded/host/phases/main", page="/c/coded/host", data={"memory_mb": "99999999"}
    )
    flash = _flash(web.get(over.headers["location"]).text)
    assert "code_limits.memory_mb is 99999999" in flash and "PODIUM_CODE_MAX_MEMORY_MB" in flash
    kind = web.post(
        "/c/coded/host/phases/main", page="/c/coded/host", data={"submission_kind": "predictions"}
    )
    assert "submission_kind" in _flash(web.get(kind.headers["location"]).text)


def test_a_competition_wide_date_on_several_phases_says_where_each_phase_is_changed(client, person):
    ada = _term(client, person)
    refused = client.patch(
        f"{API}/competitions/term", json={"deadline": "2999-01-01"}, headers=ada.headers
    )
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert "(dev, final)" in detail and "Host → Settings → Phases" in detail
    assert "podium competitions phase term NAME" in detail
