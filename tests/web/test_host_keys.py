"""The host's Answer keys tab: each phase listed with the key version its boards use (rows,
split, checksum) and its own upload form, the same forms as the New competition page's Keys
step; a key per phase uploaded there makes the launch checklist pass. Its hosts' alone."""

import html

import pytest

from tests.helpers import API, create_competition, csv_bytes

REG_KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 4.0, "Private"],
)
FIXED_KEY = REG_KEY.replace(b"4.0", b"5.0")
PHASES = [
    {"name": "dev", "start": "2030-01-01", "end": "2030-01-31"},
    {"name": "final", "end": "2030-02-14"},
]
TAB = "/c/{slug}/host/keys"


def _flash(page: str) -> str:
    return html.unescape(page.split('class="flash ')[1].split("</p>")[0])


def _two_phases(client, person, status: str = "draft"):  # type: ignore[no-untyped-def]
    ada = person("ada", organiser=True)
    create_competition(
        client,
        ada.headers,
        "sales",
        status=status,
        description="Predict sales.",
        metric={"name": "rmse"},
        phases=PHASES,
    )
    return ada


def _send(web, slug: str, phase: str | None, content: bytes = REG_KEY):  # type: ignore[no-untyped-def]
    data = {} if phase is None else {"phase": phase}
    return web.post(
        TAB.format(slug=slug),
        page=TAB.format(slug=slug),
        data=data,
        files={"file": ("key.csv", content, "text/csv")},
    )


def test_each_phase_gets_its_key_on_the_tab_and_the_checklist_then_passes(client, person, browser):
    ada = _two_phases(client, person)
    web = browser("ada")
    tab = web.get(TAB.format(slug="sales")).text
    for phase in ("dev", "final"):
        assert f'aria-label="Answer key of {phase}"' in tab
        assert f'name="phase" value="{phase}"' in tab
    assert tab.count("no key yet") == 2
    checklist = client.get(f"{API}/competitions/sales/checklist", headers=ada.headers).json()
    assert not checklist["ready"]

    for phase in ("dev", "final"):
        sent = _send(web, "sales", phase)
        assert sent.status_code == 303 and sent.headers["location"] == "/c/sales/host/keys"
        flash = _flash(web.get(sent.headers["location"]).text)
        assert f"Phase {phase}: answer key version 1 stored" in flash and "It is live" in flash
    checklist = client.get(f"{API}/competitions/sales/checklist", headers=ada.headers).json()
    assert checklist["ready"], checklist
    # Each phase is listed with the version on its boards and that version's checksum.
    tab = web.get(TAB.format(slug="sales")).text
    assert "no key yet" not in tab
    # Below, every version of every phase, each named with its phase.
    versions = tab.split("<h2>Versions</h2>")[1]
    assert "<th>Phase</th>" in versions
    assert "<td><code>dev</code></td>" in versions and "<td><code>final</code></td>" in versions
    for phase in ("dev", "final"):
        versions = client.get(
            f"{API}/competitions/sales/phases/{phase}/answer-key/versions", headers=ada.headers
        ).json()
        form = tab.split(f'aria-label="Answer key of {phase}"')[1].split("</form>")[0]
        assert "version 1, 4 rows (2 public, 2 private)" in form
        assert versions[0]["sha256"][:12] in form

    # A fixed key for the final phase waits for a rescore; the tab says so beside that phase.
    sent = _send(web, "sales", "final", FIXED_KEY)
    assert "Phase final: answer key version 2 stored" in _flash(web.get("/c/sales/host/keys").text)
    tab = web.get(TAB.format(slug="sales")).text
    final = tab.split('aria-label="Answer key of final"')[1].split("</form>")[0]
    dev = tab.split('aria-label="Answer key of dev"')[1].split("</form>")[0]
    assert "version 2" in final and "waits" in final and "waits" not in dev
    # Its link is that phase's Rescore page, which publishes that phase's version.
    assert 'href="/c/sales/host/rescore?phase=final"' in final
    rescore = web.get("/c/sales/host/rescore?phase=final").text
    assert "version <strong>2</strong> is waiting" in rescore
    assert "version <strong>1</strong> is waiting" not in web.get("/c/sales/host/rescore").text
    published = web.post(
        "/c/sales/host/rescore/publish",
        page="/c/sales/host/rescore?phase=final",
        data={"phase": "final"},
    )
    assert published.headers["location"] == "/c/sales/host/rescore?phase=final"
    assert "Version 2 is now on the boards" in _flash(web.get(published.headers["location"]).text)
    final = web.get(TAB.format(slug="sales")).text.split('aria-label="Answer key of final"')[1]
    assert "version 2, 4 rows" in final.split("</form>")[0]
    assert web.post("/c/sales/host/publish", page="/c/sales/host/launch").status_code == 303
    body = client.get(f"{API}/competitions/sales", headers=ada.headers).json()
    assert body["status"] == "published"


def test_a_refused_key_names_its_phase_and_stores_nothing(client, person, browser):
    ada = _two_phases(client, person)
    web = browser("ada")
    sent = _send(web, "sales", "final", b"id,y\na,1\na,2\n")
    assert sent.status_code == 303
    flash = _flash(web.get(sent.headers["location"]).text)
    assert flash.startswith("error") and "Phase final:" in flash
    # Without a phase, a competition of several phases says which there are.
    _send(web, "sales", None)
    assert "dev, final" in _flash(web.get("/c/sales/host/keys").text)
    _send(web, "sales", "nowhere")
    assert "has no phase 'nowhere'" in _flash(web.get("/c/sales/host/keys").text)
    for phase in ("dev", "final"):
        versions = client.get(
            f"{API}/competitions/sales/phases/{phase}/answer-key/versions", headers=ada.headers
        )
        assert versions.json() == []


def test_a_one_phase_competition_needs_no_phase_named(client, person, browser):
    ada = person("ada", organiser=True)
    create_competition(client, ada.headers, "solo", metric={"name": "rmse"})
    web = browser("ada")
    assert 'name="phase" value="main"' in web.get(TAB.format(slug="solo")).text
    sent = _send(web, "solo", None)
    tab = web.get(sent.headers["location"]).text
    assert "Answer key version 1 stored" in _flash(tab)
    assert "<th>Phase</th>" not in tab and "on the boards" in tab
    assert client.get(f"{API}/competitions/solo", headers=ada.headers).json()["has_answer_key"]


@pytest.mark.parametrize("status", ["draft", "published"])
def test_the_tab_refuses_a_participant_another_competitions_host_and_a_visitor(
    client, person, browser, status
):
    ada = _two_phases(client, person, status)
    olga = person("olga", organiser=True)
    person("alice")
    create_competition(client, olga.headers, "olgas", metric={"name": "rmse"})
    # A draft is not there for them (404); a published competition's host pages are 403.
    expected = 404 if status == "draft" else 403
    for who in ("alice", "olga"):
        web = browser(who)
        assert web.get(TAB.format(slug="sales")).status_code == expected, who
        for path in (
            "/c/sales/host/keys",
            "/c/sales/host/new/data/key",
            "/c/sales/host/rescore",
            "/c/sales/host/rescore/publish",
        ):
            sent = web.post(
                path, page="/", data={"phase": "dev"}, files={"file": ("k.csv", REG_KEY)}
            )
            # A draft's form goes back with the refusal, as every form does (to a page that is
            # not there for them); a published competition's answers the hosts-only page.
            assert sent.status_code == (303 if status == "draft" else 403), (who, path)
    visitor = browser()
    shown = visitor.get(TAB.format(slug="sales"), follow_redirects=False)
    assert shown.status_code == (404 if status == "draft" else 303)
    sent = visitor.http.post(
        "/c/sales/host/keys",
        data={"phase": "dev"},
        files={"file": ("k.csv", REG_KEY)},
        follow_redirects=False,
    )
    # Sent to sign in, or refused for want of the form's token: never stored.
    assert sent.status_code in (303, 403)
    assert sent.status_code == 403 or sent.headers["location"].startswith("/signin")
    for phase in ("dev", "final"):
        versions = client.get(
            f"{API}/competitions/sales/phases/{phase}/answer-key/versions", headers=ada.headers
        )
        assert versions.json() == [], phase
