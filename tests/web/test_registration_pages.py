"""Who takes part, on the pages: the rules tab and its acceptance, asking to join an approval
competition from the Team tab, the hosts' Participants tab (decide many, CSV, announce), the
news on the overview, notification settings; each host page refused to others."""

from tests.helpers import API, ready_competition

SLUG = "churn"


def test_ask_to_join_with_rules_and_be_approved_on_the_participants_tab(client, person, browser):
    host = person("hostess", organiser=True)
    person("ada")
    ready_competition(client, host.headers, registration="approval", rules="Be **fair**.")
    ada = browser("ada")
    rules = ada.get(f"/c/{SLUG}/rules")
    assert rules.status_code == 200 and "<strong>fair</strong>" in rules.text
    team = ada.get(f"/c/{SLUG}/team").text
    assert 'name="accept_rules"' in team and "Ask to join" in team
    # Without the box ticked, the refusal names the rules page.
    refused = ada.post(f"/c/{SLUG}/join", page=f"/c/{SLUG}/team")
    assert refused.status_code == 303
    assert f"/c/{SLUG}/rules" in ada.get(refused.headers["location"]).text
    asked = ada.post(
        f"/c/{SLUG}/join",
        page=f"/c/{SLUG}/team",
        data={"accept_rules": "on", "message": "hello"},
    )
    assert asked.status_code == 303
    assert "waits for the hosts" in ada.get(asked.headers["location"]).text

    web = browser("hostess")
    tab = web.get(f"/c/{SLUG}/host/participants")
    assert tab.status_code == 200 and 'data-name="ada"' in tab.text and "hello" in tab.text
    decided = web.post(
        f"/c/{SLUG}/host/participants/decide",
        page=f"/c/{SLUG}/host/participants",
        data={"name": ["ada"], "decision": "approve"},
    )
    assert decided.status_code == 303
    assert "1 participant(s) approved" in web.get(decided.headers["location"]).text
    sheet = web.get(f"/c/{SLUG}/host/participants.csv")
    assert sheet.status_code == 200 and "ada,,approved" in sheet.text
    assert "rules-accepted" in ada.get(f"/c/{SLUG}/rules").text

    posted = web.post(
        f"/c/{SLUG}/host/announcements",
        page=f"/c/{SLUG}/host/participants",
        data={"subject": "Welcome", "body": "<b>Good luck</b>"},
    )
    assert posted.status_code == 303
    overview = ada.get(f"/c/{SLUG}").text
    assert "Welcome" in overview and "&lt;b&gt;Good luck&lt;/b&gt;" in overview


def test_host_pages_refuse_participants(client, person, browser):
    host = person("hostess", organiser=True)
    person("ada")
    ready_competition(client, host.headers, registration="approval")
    ada = browser("ada")
    assert ada.get(f"/c/{SLUG}/host/participants").status_code == 403
    assert ada.get(f"/c/{SLUG}/host/participants.csv").status_code == 403
    token = ada.token_on(f"/c/{SLUG}/team")
    for path, data in (
        (f"/c/{SLUG}/host/participants/decide", {"name": "ada", "decision": "approve"}),
        (f"/c/{SLUG}/host/announcements", {"subject": "s", "body": "b"}),
    ):
        answer = ada.http.post(path, data={"csrf_token": token, **data}, follow_redirects=False)
        assert answer.status_code == 403, path
    # ada could not approve herself.
    mine = client.get(f"{API}/competitions/{SLUG}/registration", headers=host.headers)
    assert mine.status_code in (403, 404)


def test_an_invitation_link_lands_on_the_team_tab_and_joins(client, person, browser):
    host = person("hostess", organiser=True)
    person("ada")
    ready_competition(client, host.headers, registration="invite")
    link = client.post(
        f"{API}/competitions/{SLUG}/invitations", json={}, headers=host.headers
    ).json()["url"]
    path = link.split("testserver", 1)[1]
    ada = browser("ada")
    landing = ada.get(path, follow_redirects=False)
    assert landing.status_code == 303 and landing.headers["location"].startswith(
        f"/c/{SLUG}/team?invitation="
    )
    page = landing.headers["location"]
    assert 'name="invitation"' in ada.get(page).text
    joined = ada.post(
        f"/c/{SLUG}/join", page=page, data={"invitation": path.split("invitation=")[1]}
    )
    assert "You compete as team ada" in ada.get(joined.headers["location"]).text


def test_notification_settings_by_form(client, person, browser):
    person("ada")
    ada = browser("ada")
    page = ada.get("/account/notifications")
    assert page.status_code == 200 and "Nothing yet" in page.text
    saved = ada.post(
        "/account/notifications",
        page="/account/notifications",
        data={"submission": "on", "mail": "on"},
    )
    assert saved.status_code == 303
    again = ada.get("/account/notifications").text
    assert 'name="submission" checked' in again and 'name="phase_opened" checked' not in again
    assert browser().get("/account/notifications", follow_redirects=False).status_code == 303


def test_the_host_sets_who_takes_part_on_the_settings_page(client, person, browser):
    host = person("hostess", organiser=True)
    ready_competition(client, host.headers)
    web = browser("hostess")
    saved = web.post(
        f"/c/{SLUG}/host",
        page=f"/c/{SLUG}/host",
        data={
            "registration": "invite",
            "allow": "Ada@Example.org\n@uni.example.edu\n",
            "deny": "",
            "rules": "Play fair.",
        },
    )
    assert saved.status_code == 303
    shown = client.get(f"{API}/competitions/{SLUG}", headers=host.headers).json()
    assert shown["registration"] == "invite" and shown["rules"] == "Play fair."
    assert shown["rules_version"] == 1
    page = web.get(f"/c/{SLUG}/host").text
    assert (
        "ada@example.org\n@uni.example.edu" in page or "@uni.example.edu\nada@example.org" in page
    )
    bad = web.post(f"/c/{SLUG}/host", page=f"/c/{SLUG}/host", data={"deny": "not an address"})
    assert "deny" in web.get(bad.headers["location"]).text


def test_webhooks_on_the_host_pages(client, person, browser):
    host = person("hostess", organiser=True)
    person("ada")
    ready_competition(client, host.headers)
    web = browser("hostess")
    added = web.post(
        f"/c/{SLUG}/host/webhooks",
        page=f"/c/{SLUG}/host/webhooks",
        data={"url": "https://example.org/hook", "events": ["submission.scored", "phase.opened"]},
    )
    assert added.status_code == 200 and "whsec_" in added.text
    page = web.get(f"/c/{SLUG}/host/webhooks").text
    assert "https://example.org/hook" in page and "whsec_" not in page  # shown once
    refused = web.post(
        f"/c/{SLUG}/host/webhooks",
        page=f"/c/{SLUG}/host/webhooks",
        data={"url": "http://127.0.0.1/x", "events": ["phase.opened"]},
    )
    assert refused.status_code == 303
    assert "loopback" in web.get(refused.headers["location"]).text
    ada = browser("ada")
    assert ada.get(f"/c/{SLUG}/host/webhooks").status_code == 403
