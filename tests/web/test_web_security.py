"""What the pages must never do: run a user's text as HTML, accept a form without this
browser's CSRF token, or show a host page to anyone but the competition's hosts."""

import re

import pytest
from fastapi.routing import APIRoute

from app.web import account, host, pages, participant
from tests.helpers import PERFECT, ready_competition, submit, upload_key

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _web_routes(_app, method: str) -> list[str]:
    """Every page route of the web app (its routers carry full paths, no prefix)."""
    return sorted(
        route.path
        for module in (account, host, pages, participant)
        for route in module.router.routes
        if isinstance(route, APIRoute) and method in route.methods
    )


def _fill(path: str, submission_id: int) -> str:
    return re.sub(
        r"\{[a-z_]+\}", lambda m: "churn" if m.group() == "{slug}" else str(submission_id), path
    )


def test_every_form_refuses_a_missing_or_wrong_csrf_token(client, person, browser):
    host = person("host", organiser=True)
    ready_competition(client, host.headers)
    # Hosts do not compete in their own competition (issue 8): a participant submits.
    submission_id = submit(client, person("bea").headers, PERFECT).json()["id"]
    posts = _web_routes(client.app, "POST")
    assert len(posts) >= 15  # every form the pages have, sign-in and sign-out included
    web = browser("host")
    for path in posts:
        url = _fill(path, submission_id)
        for data in ({}, {"csrf_token": "0" * 64}):
            response = web.http.post(url, data=data, follow_redirects=False)
            assert response.status_code == 403, (url, data, response.status_code)
            assert "CSRF" in response.text, url
    # The API is untouched by it: bearer tokens are not sent by browsers on their own.
    assert submit(client, person("cy").headers, PERFECT).status_code == 202


def test_a_token_from_another_browser_or_before_sign_in_does_not_work(client, person, browser):
    person("ada")
    anonymous = browser()
    stale = anonymous.token_on("/signin")
    assert anonymous.sign_in("ada").status_code == 303
    response = anonymous.http.post(
        "/account/tokens", data={"csrf_token": stale}, follow_redirects=False
    )
    assert response.status_code == 403
    other = browser("ada")
    theirs = other.token_on("/account/tokens")
    response = anonymous.http.post(
        "/account/tokens", data={"csrf_token": theirs}, follow_redirects=False
    )
    assert response.status_code == 403


def test_every_page_escapes_user_text(client, person, browser, make_user):
    host = person("host", organiser=True)
    ready_competition(
        client,
        host.headers,
        title=f"Title {SCRIPT}",
        description=f"# Heading\n\n{SCRIPT}\n\n<img src=x onerror=alert(2)> [x](javascript:alert(3))",
    )
    evil = make_user(SCRIPT)  # a team is named after its first member
    submit(client, evil.headers, PERFECT, description=SCRIPT)
    person("ada")
    client.post("/api/v1/competitions/churn/join", headers=evil.headers)
    invitation = client.post(
        "/api/v1/competitions/churn/team/invitations", json={"user": "ada"}, headers=evil.headers
    )
    assert invitation.status_code == 201
    hosting = browser("host")
    ada = browser("ada")
    sid = client.get("/api/v1/competitions/churn/submissions", headers=evil.headers).json()[0]["id"]
    pages = [
        (hosting, "/"),
        (hosting, "/c/churn"),
        (hosting, "/c/churn/leaderboard"),
        (hosting, "/c/churn/host"),
        (hosting, "/c/churn/host/submissions"),
        (hosting, f"/c/churn/host/submissions/{sid}"),
        (hosting, "/c/churn/host/teams"),
        (hosting, "/c/churn/host/hosts"),
        (hosting, "/c/churn/host/audit"),
        (ada, "/c/churn/team"),
        (ada, "/c/churn/leaderboard"),
    ]
    for web, path in pages:
        text = web.get(path).text
        assert SCRIPT not in text, path
        assert re.search(r"<[^>]*\bonerror\s*=", text) is None, path  # no live attribute
        assert 'href="javascript:' not in text, path
        assert ESCAPED in text or "alert(1)" not in text, path
    assert ESCAPED in hosting.get("/c/churn/leaderboard").text  # shown, as text
    assert "<h1>Heading</h1>" in hosting.get("/c/churn").text  # Markdown is rendered


@pytest.mark.parametrize("who", ["participant", "other organiser", "anonymous"])
def test_no_one_but_the_host_reaches_a_host_page(client, person, browser, who):
    host = person("host", organiser=True)
    ready_competition(client, host.headers)
    submission_id = submit(client, person("bea").headers, PERFECT).json()["id"]
    name = {"participant": "ada", "other organiser": "olga", "anonymous": None}[who]
    if name:
        person(name, organiser=who == "other organiser")
    web = browser(name)
    gets = [p for p in _web_routes(client.app, "GET") if "/host" in p]
    posts = [p for p in _web_routes(client.app, "POST") if "/host" in p]
    assert len(gets) >= 8 and len(posts) >= 7
    token = web.token_on("/signin")
    for path in gets + posts:
        url = _fill(path, submission_id)
        if path in gets:
            response = web.http.get(url, follow_redirects=False)
        else:
            response = web.http.post(url, data={"csrf_token": token}, follow_redirects=False)
        if name is None:
            assert response.status_code == 303 and response.headers["location"].startswith(
                "/signin"
            ), url
        else:
            assert response.status_code == 403, (url, response.status_code)
            assert "hosts only" in response.text
    # Nothing changed: the host's key is still version 1 and nothing was hidden.
    versions = client.get("/api/v1/competitions/churn/answer-key/versions", headers=host.headers)
    assert [v["version"] for v in versions.json()] == [1]
    assert upload_key(client, host.headers).status_code == 201
    assert "Host" in browser("host").get("/c/churn").text
    assert 'href="/c/churn/host"' not in (browser(name) if name else browser()).get("/c/churn").text


def test_unknown_pages_are_html_404s_and_the_api_stays_json(client, browser):
    web = browser()
    page = web.get("/c/no-such-competition", headers={"Accept": "text/html"})
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "no competition" in page.text and "<!doctype html>" in page.text
    nowhere = web.get("/no/such/page")
    assert nowhere.status_code == 404 and "text/html" in nowhere.headers["content-type"]
    api = client.get("/api/v1/competitions/nothing", headers={"Authorization": "Bearer x"})
    assert api.headers["content-type"].startswith("application/json")


def test_docs_and_redoc_load_their_assets_from_this_server(client):
    for path, asset in (("/docs", "swagger-ui-bundle.js"), ("/redoc", "redoc.standalone.js")):
        page = client.get(path).text
        assert "cdn." not in page and "fonts.googleapis" not in page
        src = re.search(rf'src="([^"]*{asset})"', page).group(1)
        assert src.startswith("/")
        script = client.get(src)
        assert script.status_code == 200 and len(script.content) > 100_000
    assert client.get("/openapi.json").status_code == 200


def test_a_crash_on_a_page_is_an_html_500_and_on_the_api_a_json_one(client, host, monkeypatch):
    from tests.asgi_client import TestClient

    def broken(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("app.web.pages.list_competitions", broken)
    monkeypatch.setattr("app.competitions.router.service.competitions_page", broken)
    quiet = TestClient(client.app, raise_server_exceptions=False)
    page = quiet.get("/")
    assert page.status_code == 500 and "text/html" in page.headers["content-type"]
    assert "Something went wrong" in page.text and "disk on fire" not in page.text
    api = quiet.get("/api/v1/competitions", headers=host.headers)
    assert api.status_code == 500 and api.json()["detail"] == "internal server error"
