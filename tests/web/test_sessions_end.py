"""Credentials end when they are revoked: a browser signed in with a token is signed out when that
token is revoked, rotated away or deleted; a password change or revoking the user ends every
browser of theirs; and a browser that signed in long ago must give the password again to mint a
token."""

import re
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update

from app.auth.service import rotate_token, user_named
from app.models import ApiToken, WebSession
from tests.asgi_client import TestClient
from tests.web.conftest import PASSWORD

TOKENS = "/account/tokens"
NEW_TOKEN = re.compile(r'id="new-token">(pdm_[^<]+)<')


def _signed_in(web) -> bool:  # type: ignore[no-untyped-def]
    return web.get(TOKENS, follow_redirects=False).status_code == 200


def _token_browser(browser, token: str):  # type: ignore[no-untyped-def]
    web = browser()
    assert web.post("/signin", page="/signin", data={"token": token}).status_code == 303
    assert _signed_in(web)
    return web


def _token_count(session_factory, name: str) -> int:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        user = user_named(session, name)
        return session.scalar(select(func.count(ApiToken.id)).where(ApiToken.user_id == user.id))


def test_deleting_the_token_a_browser_signed_in_with_signs_it_out(
    client, person, browser, session_factory
):
    ada = person("ada")
    by_token = _token_browser(browser, ada.token)
    by_password = browser("ada")
    token_id = client.get("/api/v1/auth/tokens", headers=ada.headers).json()[0]["id"]
    assert client.delete(f"/api/v1/auth/tokens/{token_id}", headers=ada.headers).status_code == 200

    assert not _signed_in(by_token)
    assert _signed_in(by_password)  # opened with the password, not with that token
    # The stale cookie cannot mint a fresh token either.
    before = _token_count(session_factory, "ada")
    stale = TestClient(client.app, cookies=by_token.http.cookies)
    refused = stale.post(TOKENS, data={"csrf_token": "x"}, follow_redirects=False)
    assert refused.status_code in (303, 403)
    assert _token_count(session_factory, "ada") == before


def test_revoking_a_token_on_the_page_signs_out_the_browsers_it_opened(client, person, browser):
    ada = person("ada")
    by_token = _token_browser(browser, ada.token)
    by_password = browser("ada")
    token_id = re.findall(r"/account/tokens/(\d+)/revoke", by_password.get(TOKENS).text)[0]
    assert by_password.post(f"{TOKENS}/{token_id}/revoke", page=TOKENS).status_code == 303
    assert not _signed_in(by_token)
    assert _signed_in(by_password)


def test_rotating_the_tokens_signs_out_the_browsers_they_opened(
    client, person, browser, session_factory, settings
):
    ada = person("ada")
    by_token = _token_browser(browser, ada.token)
    by_password = browser("ada")
    with session_factory() as session:
        rotate_token(
            session, user=user_named(session, "ada"), secret_key=settings.secret_key, revoke=True
        )
        session.commit()
    assert not _signed_in(by_token)
    assert _signed_in(by_password)


def test_a_token_marked_revoked_by_any_path_no_longer_holds_a_session(
    client, person, browser, session_factory
):
    # Even a revocation written straight to the table (an operator's SQL) ends the session.
    ada = person("ada")
    by_token = _token_browser(browser, ada.token)
    with session_factory() as session:
        session.execute(update(ApiToken).values(revoked_at=datetime.now(UTC)))
        session.commit()
    assert not _signed_in(by_token)


def test_a_password_change_signs_out_every_browser_of_the_user(
    client, person, browser, session_factory
):
    ada = person("ada")
    bob = person("bob")
    browsers = [_token_browser(browser, ada.token), browser("ada")]
    bobs = browser("bob")
    from app.auth.service import change_password

    with session_factory() as session:
        change_password(session, user=user_named(session, "ada"), password="a new passphrase")
        session.commit()
    assert not any(_signed_in(web) for web in browsers)
    assert _signed_in(bobs)
    assert client.get("/api/v1/me", headers=ada.headers).status_code == 200  # tokens stay
    assert client.get("/api/v1/me", headers=bob.headers).status_code == 200


def test_revoking_the_user_signs_out_every_browser_of_theirs(
    client, person, browser, session_factory
):
    ada = person("ada")
    browsers = [_token_browser(browser, ada.token), browser("ada")]
    from app.auth.service import revoke_user

    with session_factory() as session:
        assert revoke_user(session, user=user_named(session, "ada")) == 1
        session.commit()
    assert not any(_signed_in(web) for web in browsers)
    assert client.get("/api/v1/me", headers=ada.headers).status_code == 401


def _age_sessions(session_factory, minutes: int) -> None:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        past = datetime.now(UTC) - timedelta(minutes=minutes)
        session.execute(update(WebSession).values(created_at=past, last_seen_at=past))
        session.commit()


def test_minting_a_token_from_an_old_sign_in_asks_for_the_password(
    client, person, browser, session_factory
):
    person("ada")
    web = browser("ada")
    fresh = web.post(TOKENS, page=TOKENS)  # signed in a moment ago: no question asked
    assert fresh.status_code == 200 and NEW_TOKEN.search(fresh.text)
    _age_sessions(session_factory, 11)
    before = _token_count(session_factory, "ada")

    asked = web.post(TOKENS, page=TOKENS)
    assert asked.status_code == 403 and not NEW_TOKEN.search(asked.text)
    assert "enter your password" in asked.text and 'name="password"' in asked.text
    wrong = web.post(TOKENS, page=TOKENS, data={"password": "not the password"})
    assert wrong.status_code == 403 and not NEW_TOKEN.search(wrong.text)
    assert _token_count(session_factory, "ada") == before

    made = web.post(TOKENS, page=TOKENS, data={"password": PASSWORD})
    assert made.status_code == 200
    new = NEW_TOKEN.search(made.text).group(1)  # type: ignore[union-attr]
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {new}"}).status_code == 200


def test_a_token_only_user_must_sign_in_again_to_mint_after_ten_minutes(
    client, make_user, browser, session_factory
):
    grace = make_user("grace")  # no password to ask for
    web = _token_browser(browser, grace.token)
    _age_sessions(session_factory, 11)
    asked = web.post(TOKENS, page=TOKENS, data={"password": "anything at all"})
    assert asked.status_code == 403 and not NEW_TOKEN.search(asked.text)
    assert "sign in again" in asked.text
    again = _token_browser(browser, grace.token)
    made = again.post(TOKENS, page=TOKENS)
    assert made.status_code == 200 and NEW_TOKEN.search(made.text)
