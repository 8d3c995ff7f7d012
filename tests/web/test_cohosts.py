"""The Hosts page's forms: the owner adds and removes co-hosts through the same service as the
API, a refusal comes back on the page in the service's words, and no one else changes them."""

import pytest

from tests.helpers import PERFECT, ready_competition, submit

API = "/api/v1/competitions/churn/hosts"
PAGE = "/c/churn/host/hosts"
SCRIPT = "<script>alert(1)</script>"


def _hosts(client, headers) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(h["user"], h["role"]) for h in client.get(API, headers=headers).json()]


def _flash(page: str) -> str:
    return page.split('class="flash ')[1].split("</p>")[0]


def test_the_owner_adds_a_cohost_who_then_reaches_the_host_pages(client, person, browser):
    owner = person("host", organiser=True)
    ready_competition(client, owner.headers)
    person("carl")
    host = browser("host")
    response = host.post(PAGE, page=PAGE, data={"user": "carl"})
    assert response.status_code == 303 and response.headers["location"] == PAGE
    page = host.get(PAGE).text
    assert "ok" in _flash(page) and "carl is now a co-host" in page
    assert _hosts(client, owner.headers) == [("host", "owner"), ("carl", "cohost")]
    carl = browser("carl")
    assert carl.get("/c/churn/host").status_code == 200
    assert carl.get("/c/churn/host/submissions").status_code == 200
    audit = host.get("/c/churn/host/audit").text
    assert "host_add" in audit and "user carl" in audit

    response = host.post(f"{PAGE}/remove", page=PAGE, data={"user": "carl"})
    assert response.status_code == 303 and response.headers["location"] == PAGE
    assert "carl is no longer a host" in host.get(PAGE).text
    assert _hosts(client, owner.headers) == [("host", "owner")]
    assert carl.get("/c/churn/host").status_code == 403
    assert "host_remove" in host.get("/c/churn/host/audit").text


@pytest.mark.parametrize(
    ("path", "user", "reason"),
    [
        ("", "nobody", "no user named &#39;nobody&#39;"),
        ("", "", "name the user to add as a co-host"),
        ("", "host", "already a host of &#39;churn&#39;"),
        ("", "bea", "competes in &#39;churn&#39; and cannot become its host"),
        ("/remove", "host", "owns &#39;churn&#39; and cannot be removed"),
        ("/remove", "bea", "&#39;bea&#39; is not a host of &#39;churn&#39;"),
    ],
)
def test_a_refusal_comes_back_on_the_hosts_page(client, person, browser, path, user, reason):
    owner = person("host", organiser=True)
    ready_competition(client, owner.headers)
    submit(client, person("bea").headers, PERFECT)
    host = browser("host")
    response = host.post(PAGE + path, page=PAGE, data={"user": user})
    assert response.status_code == 303 and response.headers["location"] == PAGE
    flash = _flash(host.get(PAGE).text)
    assert flash.startswith("error") and reason in flash, flash
    assert _hosts(client, owner.headers) == [("host", "owner")]
    assert "host_add" not in host.get("/c/churn/host/audit").text


def test_a_cohost_sees_the_hosts_but_only_the_owner_or_an_admin_changes_them(
    client, person, browser, make_user, with_password
):
    owner = person("host", organiser=True)
    ready_competition(client, owner.headers)
    person("carl")
    person("dora")
    assert client.post(API, json={"user": "carl"}, headers=owner.headers).status_code == 201
    carl = browser("carl")
    page = carl.get(PAGE).text
    assert "carl" in page and "Only the owner adds and removes co-hosts" in page
    assert f'action="{PAGE}"' not in page and f'action="{PAGE}/remove"' not in page
    response = carl.post(PAGE, page=PAGE, data={"user": "dora"})
    assert response.status_code == 303
    assert "only the owner of &#39;churn&#39; may change its hosts" in carl.get(PAGE).text
    assert _hosts(client, owner.headers) == [("host", "owner"), ("carl", "cohost")]

    make_user("root", admin=True)
    with_password("root")
    root = browser("root")
    assert root.post(PAGE, page=PAGE, data={"user": "dora"}).status_code == 303
    assert root.post(f"{PAGE}/remove", page=PAGE, data={"user": "carl"}).status_code == 303
    assert _hosts(client, owner.headers) == [("host", "owner"), ("dora", "cohost")]


@pytest.mark.parametrize("who", ["participant", "other organiser"])
def test_no_one_else_sees_or_changes_the_hosts(client, person, browser, who):
    owner = person("host", organiser=True)
    ready_competition(client, owner.headers)
    person("carl")
    name = "ada" if who == "participant" else "olga"
    person(name, organiser=who == "other organiser")
    assert client.post(API, json={"user": "carl"}, headers=owner.headers).status_code == 201
    web = browser(name)
    page = web.get(PAGE)
    assert page.status_code == 403 and "hosts only" in page.text and "carl" not in page.text
    token = web.token_on("/c/churn")  # a valid token of this browser: only the role is wrong
    for path, user in (("", name), ("", "olga"), ("/remove", "carl")):
        response = web.http.post(
            PAGE + path, data={"csrf_token": token, "user": user}, follow_redirects=False
        )
        assert response.status_code == 403, (path, response.status_code)
        assert "text/html" in response.headers["content-type"] and "hosts only" in response.text
    assert _hosts(client, owner.headers) == [("host", "owner"), ("carl", "cohost")]


def test_the_hosts_forms_refuse_a_missing_or_wrong_csrf_token(client, person, browser):
    owner = person("host", organiser=True)
    ready_competition(client, owner.headers)
    person("carl")
    assert client.post(API, json={"user": "carl"}, headers=owner.headers).status_code == 201
    person("dora")
    host = browser("host")
    for path, user in (("", "dora"), ("/remove", "carl")):
        for token in ({}, {"csrf_token": "0" * 64}, {"csrf_token": browser("carl").token_on("/")}):
            response = host.http.post(
                PAGE + path, data={"user": user, **token}, follow_redirects=False
            )
            assert response.status_code == 403 and "CSRF" in response.text, (path, token)
    assert _hosts(client, owner.headers) == [("host", "owner"), ("carl", "cohost")]


def test_the_hosts_page_shows_names_as_text(client, person, browser, make_user):
    owner = person("host", organiser=True)
    ready_competition(client, owner.headers)
    make_user(SCRIPT)
    host = browser("host")
    host.post(PAGE, page=PAGE, data={"user": SCRIPT})
    page = host.get(PAGE).text
    assert SCRIPT not in page and "&lt;script&gt;alert(1)&lt;/script&gt; is now a co-host" in page
    assert 'value="&lt;script&gt;alert(1)&lt;/script&gt;"' in page  # the remove form's field
    assert host.post(f"{PAGE}/remove", page=PAGE, data={"user": SCRIPT}).status_code == 303
    assert _hosts(client, owner.headers) == [("host", "owner")]
