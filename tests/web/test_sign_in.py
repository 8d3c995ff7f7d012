"""Signing in with a password or a token, the session cookie, signing out, API tokens."""

import re

from tests.asgi_client import TestClient
from tests.helpers import ready_competition
from tests.web.conftest import PASSWORD


def test_password_sign_in_opens_the_signed_in_pages(client, person, browser):
    person("ada")
    web = browser()
    assert web.get("/account/tokens", follow_redirects=False).status_code == 303
    response = web.sign_in("ada")
    assert response.status_code == 303
    page = web.get("/account/tokens")
    assert page.status_code == 200 and "ada" in page.text and "Sign out" in page.text


def test_wrong_password_or_unknown_user_is_refused_on_the_page(client, person, browser):
    person("ada")
    web = browser()
    for name, password in (("ada", "not the password"), ("nobody", PASSWORD)):
        response = web.sign_in(name, password)
        assert response.status_code == 401
        assert "wrong user name or password" in response.text
    assert web.get("/account/tokens", follow_redirects=False).status_code == 303


def test_sign_in_with_an_api_token(client, make_user, browser):
    grace = make_user("grace")  # no password at all
    web = browser()
    response = web.post("/signin", page="/signin", data={"token": grace.token})
    assert response.status_code == 303
    assert "grace" in web.get("/account/tokens").text


def test_session_cookie_is_httponly_lax_and_secure_over_https(client, person):
    person("ada")
    for base, secure in (("http://testserver", False), ("https://testserver", True)):
        http = TestClient(client.app, base_url=base)
        token = re.search(r'name="csrf_token" value="([^"]+)"', http.get("/signin").text).group(1)
        response = http.post(
            "/signin",
            data={"csrf_token": token, "name": "ada", "password": PASSWORD},
            follow_redirects=False,
        )
        cookie = next(
            c for c in response.headers.get_list("set-cookie") if c.startswith("podium_session=")
        )
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie
        assert ("Secure" in cookie) is secure


def test_sign_out_ends_the_session_on_the_server(client, person, browser):
    person("ada")
    web = browser("ada")
    stolen = web.http.cookies.get("podium_session")
    assert web.post("/signout", page="/account/tokens").status_code == 303
    again = TestClient(client.app, cookies={"podium_session": stolen})
    assert again.get("/account/tokens", follow_redirects=False).status_code == 303


def test_sign_in_goes_back_to_the_page_asked_for_but_never_off_site(client, person, browser):
    person("ada")
    web = browser()
    ok = web.post(
        "/signin", page="/signin", data={"name": "ada", "password": PASSWORD, "next": "/metrics"}
    )
    assert ok.headers["location"] == "/metrics"
    web = browser()
    evil = web.post(
        "/signin",
        page="/signin",
        data={"name": "ada", "password": PASSWORD, "next": "//evil.example/x"},
    )
    assert evil.headers["location"] == "/"


def test_make_and_revoke_an_api_token_from_the_page(client, person, browser):
    ada = person("ada")
    ready_competition(client, person("host", organiser=True).headers)
    web = browser("ada")
    page = web.post("/account/tokens", page="/account/tokens")
    new = re.search(r'id="new-token">(pdm_[^<]+)<', page.text).group(1)
    api = "/api/v1/me"
    assert client.get(api, headers={"Authorization": f"Bearer {new}"}).status_code == 200
    token_id = re.findall(r"/account/tokens/(\d+)/revoke", page.text)[0]  # newest first
    assert web.post(f"/account/tokens/{token_id}/revoke", page="/account/tokens").status_code == 303
    assert client.get(api, headers={"Authorization": f"Bearer {new}"}).status_code == 401
    assert client.get(api, headers=ada.headers).status_code == 200  # the other token still works


def test_a_user_cannot_revoke_someone_elses_token(client, person, browser):
    person("ada")
    bob = person("bob")
    bob_tokens = browser("bob").get("/account/tokens").text
    bob_token_id = re.findall(r"/account/tokens/(\d+)/revoke", bob_tokens)[0]
    web = browser("ada")
    response = web.post(f"/account/tokens/{bob_token_id}/revoke", page="/account/tokens")
    assert response.status_code == 303  # back to the page, with the refusal shown
    assert "no token" in web.get("/account/tokens").text
    assert client.get("/api/v1/me", headers=bob.headers).status_code == 200


def test_cli_users_create_with_a_password(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from app.auth.passwords import verify_password
    from app.cli import app
    from app.config import get_settings
    from app.db import make_engine, make_session_factory
    from app.models import User

    url = f"sqlite:///{tmp_path}/cli.db"
    monkeypatch.setenv("PODIUM_DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(
            app, ["users", "create", "ada", "--password", "--create"], input="s3cret-pass\n"
        )
        assert result.exit_code == 0, result.output
        with make_session_factory(make_engine(url))() as session:
            user = session.query(User).filter_by(name="ada").one()
            assert user.password_hash and user.password_hash.startswith("$argon2")
            assert verify_password("s3cret-pass", user.password_hash)
    finally:
        get_settings.cache_clear()


def test_cli_sets_a_password_for_an_existing_user_and_refuses_a_short_one(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from app.auth.passwords import verify_password
    from app.cli import app
    from app.config import get_settings
    from app.db import make_engine, make_session_factory
    from app.models import User

    url = f"sqlite:///{tmp_path}/cli.db"
    monkeypatch.setenv("PODIUM_DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        assert runner.invoke(app, ["users", "create", "ada", "--create"]).exit_code == 0
        short = runner.invoke(app, ["users", "password", "ada"], input="short\n")
        assert short.exit_code == 2 and "at least 10 characters" in short.output
        result = runner.invoke(app, ["users", "password", "ada"], input="a-long-password\n")
        assert result.exit_code == 0, result.output
        missing = runner.invoke(app, ["users", "password", "nobody"], input="a-long-password\n")
        assert missing.exit_code == 2 and "no user named 'nobody'" in missing.output
        with make_session_factory(make_engine(url))() as session:
            user = session.query(User).filter_by(name="ada").one()
            assert verify_password("a-long-password", user.password_hash)
    finally:
        get_settings.cache_clear()
