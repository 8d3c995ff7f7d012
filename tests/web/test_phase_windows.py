"""The Settings tab's phase rows: a phase's window and daily quota changed without JSON, an
empty end leaving the phase open until a host ends it (the fixes an import's warnings name)."""

from tests.bundles.builders import codalab_files, make_zip
from tests.helpers import API


def _import(client, caller):  # type: ignore[no-untyped-def]
    response = client.post(
        f"{API}/competitions/import",
        files={"file": ("pi.zip", make_zip(codalab_files()), "application/zip")},
        data={"slug": "pi"},
        headers=caller.headers,
    )
    assert response.status_code == 201, response.text


def _flash(page: str) -> str:
    """The page's message: at the top, or (a phase form's refusal) beside its field."""
    for marker, end in (('class="field-error"', "</span>"), ('class="flash ', "</p>")):
        if marker in page:
            return page.split(marker)[1].split(end)[0]
    raise AssertionError("no message on the page")


def test_a_phase_end_is_cleared_and_moved_from_the_settings_tab(client, person, browser):
    ada = person("ada", organiser=True)
    _import(client, ada)
    web = browser("ada")
    page = web.get("/c/pi/host")
    assert 'action="/c/pi/host/phases/final"' in page.text
    cleared = web.post("/c/pi/host/phases/final", page="/c/pi/host", data={"end": ""})
    assert cleared.status_code == 303
    assert "to open-ended" in _flash(web.get("/c/pi/host").text)
    phase = client.get(f"{API}/competitions/pi/phases", headers=ada.headers).json()[1]
    assert phase["end"] is None
    moved = web.post(
        "/c/pi/host/phases/final",
        page="/c/pi/host",
        data={
            "start": "2030-01-01T00:00",
            "end": "2031-01-01T00:00",
            "daily_submission_limit": "7",
        },
    )
    assert moved.status_code == 303
    phase = client.get(f"{API}/competitions/pi/phases", headers=ada.headers).json()[1]
    assert phase["start"].startswith("2030-01-01") and phase["end"].startswith("2031-01-01")
    assert phase["daily_submission_limit"] == 7
    backwards = web.post(
        "/c/pi/host/phases/final", page="/c/pi/host", data={"end": "2029-01-01T00:00"}
    )
    assert backwards.status_code == 303
    assert "end must come after start" in _flash(web.get("/c/pi/host").text)


def test_only_hosts_change_a_phase_from_the_page(client, person, browser):
    ada = person("ada", organiser=True)
    person("olga", organiser=True)
    _import(client, ada)
    assert client.post(f"{API}/competitions/pi/publish", headers=ada.headers).status_code == 200
    olga = browser("olga")
    refused = olga.post("/c/pi/host/phases/final", page="/", data={"end": ""})
    assert refused.status_code == 403
    phase = client.get(f"{API}/competitions/pi/phases", headers=ada.headers).json()[1]
    assert phase["end"] is not None
