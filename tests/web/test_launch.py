"""The New competition form, the Launch tab and drafts in the browser: organisers save a draft
that only its hosts see, fill it and publish it; everyone else is refused."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers import API, create_competition, upload_key

FUTURE = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()


def _flash(page: str) -> str:
    return page.split('class="flash ')[1].split("</p>")[0]


def test_only_organisers_get_the_form_and_others_are_told_who_may_host(person, browser):
    person("alice")
    page = browser("alice").get("/host/new")
    assert page.status_code == 403
    assert "Only organisers and site admins may create competitions" in page.text
    posted = browser("alice").post("/host/new", data={"title": "Mine"})
    assert posted.status_code == 403
    anonymous = browser().get("/host/new", follow_redirects=False)
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/signin")


def test_the_form_saves_a_draft_with_a_slug_made_from_the_title(client, person, browser):
    ada = person("ada", organiser=True)
    web = browser("ada")
    assert "New competition" in web.get("/").text
    response = web.post(
        "/host/new",
        page="/host/new",
        data={"title": "Churn, 2027 edition!", "description": "Predict *churn*."},
    )
    assert response.status_code == 303, response.text
    # Saved at once; the next step is the leaderboard's columns.
    assert response.headers["location"] == "/c/churn-2027-edition/host/new/columns"
    body = client.get(f"{API}/competitions/churn-2027-edition", headers=ada.headers).json()
    assert body["status"] == "draft"
    assert body["description"] == "Predict *churn*."
    columns = web.get(response.headers["location"]).text
    assert "Draft churn-2027-edition saved" in columns
    assert "answer_key" in web.get("/c/churn-2027-edition/host/launch").text


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        (
            {"title": "Good title", "slug": "Bad Slug"},
            "slug",
            "a slug is 2 to 63 lowercase letters",
        ),
        ({"title": "", "slug": "no-title"}, "title", "a value is required"),
    ],
)
def test_a_refused_form_keeps_what_was_typed_and_names_the_field(
    person, browser, data, field, message
):
    person("ada", organiser=True)
    web = browser("ada")
    response = web.post("/host/new", page="/host/new", data={"description": "kept *text*", **data})
    assert response.status_code == 422
    error = response.text.split(f'id="{field}-error"')[1].split("</span>")[0]
    assert message in error
    assert "kept *text*" in response.text
    for value in data.values():
        assert f'value="{value}"' in response.text or value in response.text


def test_a_taken_slug_is_shown_beside_the_slug(client, person, browser):
    ada = person("ada", organiser=True)
    create_competition(client, ada.headers, "taken")
    response = browser("ada").post(
        "/host/new", page="/host/new", data={"title": "Taken", "metric": "roc_auc"}
    )
    assert response.status_code == 422
    assert "already exists" in response.text.split('id="slug-error"')[1].split("</span>")[0]


def test_the_description_preview_renders_markdown_without_saving(client, person, browser):
    ada = person("ada", organiser=True)
    response = browser("ada").post(
        "/host/new",
        page="/host/new",
        data={"title": "Prev", "description": "# Hello\n<script>x</script>", "preview": "1"},
    )
    assert response.status_code == 200
    assert "<h1>Hello</h1>" in response.text and "<script>x</script>" not in response.text
    assert client.get(f"{API}/competitions/prev", headers=ada.headers).status_code == 404


def test_publish_from_the_launch_tab_after_the_checklist_passes(client, person, browser):
    ada = person("ada", organiser=True)
    person("alice")
    web = browser("ada")
    web.post(
        "/host/new",
        page="/host/new",
        data={"title": "Launch me", "description": "Task", "metric": "roc_auc"},
    )
    page = "/c/launch-me/host/launch"
    refused = web.post("/c/launch-me/host/publish", page=page)
    assert refused.status_code == 303
    flash = _flash(web.get(page).text)
    assert "error" in flash and "answer_key" in flash and "sample_scores" in flash
    assert browser("alice").get("/c/launch-me").status_code == 404
    assert upload_key(client, ada.headers, "launch-me").status_code == 201
    patched = client.patch(
        f"{API}/competitions/launch-me", json={"deadline": FUTURE}, headers=ada.headers
    )
    assert patched.status_code == 200
    assert web.post("/c/launch-me/host/publish", page=page).status_code == 303
    assert "is published" in _flash(web.get(page).text)
    assert browser("alice").get("/c/launch-me").status_code == 200
    assert "launch-me" in browser().get("/").text


def test_a_draft_is_a_404_page_for_a_participant_and_another_host(client, person, browser):
    ada = person("ada", organiser=True)
    olga = person("olga", organiser=True)
    person("alice")
    create_competition(client, ada.headers, "secret", status="draft")
    create_competition(client, olga.headers, "olgas")
    for who in ("alice", "olga"):
        web = browser(who)
        assert "secret" not in web.get("/").text
        for path in (
            "/c/secret",
            "/c/secret/data",
            "/c/secret/leaderboard",
            "/c/secret/host",
            "/c/secret/host/launch",
            "/c/secret/team",
        ):
            assert web.get(path).status_code == 404, (who, path)
        assert web.post("/c/secret/join", page="/").status_code in (303, 404)
        assert web.post("/c/secret/host/publish", page="/").status_code in (303, 404)
    listed = client.get(f"{API}/competitions/secret", headers=ada.headers)
    assert listed.json()["status"] == "draft"
    assert "A draft: only its hosts can see it" in browser("ada").get("/c/secret").text


def test_archive_and_delete_on_the_launch_tab_are_the_owners(client, person, browser):
    ada = person("ada", organiser=True)
    person("carl", organiser=True)
    person("alice")
    create_competition(client, ada.headers, "old")
    create_competition(client, ada.headers, "tmp")
    added = client.post(f"{API}/competitions/old/hosts", json={"user": "carl"}, headers=ada.headers)
    assert added.status_code == 201
    carl = browser("carl")
    assert "Archive" not in carl.get("/c/old/host/launch").text
    carl.post("/c/old/host/archive", page="/c/old/host/launch")
    assert (
        client.get(f"{API}/competitions/old", headers=ada.headers).json()["status"] == "published"
    )
    web = browser("ada")
    assert web.post("/c/old/host/archive", page="/c/old/host/launch").status_code == 303
    assert client.get(f"{API}/competitions/old", headers=ada.headers).json()["status"] == "archived"
    alice = browser("alice")
    joined = alice.post("/c/old/join", page="/c/old/team")
    assert joined.status_code == 303
    assert "archived" in _flash(alice.get("/c/old/team").text)
    home = browser().get("/").text
    assert home.index('id="archived"') < home.index("/c/old")
    deleted = web.post("/c/tmp/host/delete", page="/c/tmp/host/launch")
    assert deleted.status_code == 303 and deleted.headers["location"] == "/"
    assert client.get(f"{API}/competitions/tmp", headers=ada.headers).status_code == 404


def test_the_settings_form_reads_a_bare_deadline_as_the_end_of_its_day(client, person, browser):
    ada = person("ada", organiser=True)
    create_competition(client, ada.headers, "days")
    web = browser("ada")
    assert (
        web.post("/c/days/host", page="/c/days/host", data={"deadline": "2031-01-02"}).status_code
        == 303
    )
    assert "deadline (2031-01-02T23:59:59+00:00)" in _flash(web.get("/c/days/host").text)
    body = client.get(f"{API}/competitions/days", headers=ada.headers).json()
    assert body["deadline"] == "2031-01-02T23:59:59Z"
