"""The account pages as a person uses them: sign up, verify with a button, reset a forgotten
password, change one's own, download one's data; the admin page; each with the wrong user."""

import json
import re

from sqlalchemy import select

from app.models import OutboundMail, User
from tests.web.conftest import PASSWORD, WebClient

LINK = re.compile(r"https?://[^/\s]+(/[a-z/-]+)\?token=(pdl_[A-Za-z0-9_-]+)")


def _last_link(session_factory, address: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        body = session.scalars(
            select(OutboundMail.body)
            .where(OutboundMail.to_addr == address)
            .order_by(OutboundMail.id.desc())
        ).first()
    found = LINK.search(body or "")
    assert found, body
    return found.group(1), found.group(2)


def test_a_newcomer_signs_up_verifies_and_signs_in_on_the_pages(browser, session_factory):
    web: WebClient = browser()
    signin = web.get("/signin").text
    assert 'href="/password-reset"' in signin and 'href="/signup"' in signin
    done = web.post(
        "/signup",
        page="/signup",
        data={"name": "ada", "email": "ada@example.org", "password": PASSWORD},
    )
    assert done.status_code == 202 and "Check your mail" in done.text
    path, token = _last_link(session_factory, "ada@example.org")
    assert path == "/verify-email"
    # Opening the link verifies nothing by itself (a mail scanner may open it).
    page = web.get(f"/verify-email?token={token}")
    assert "Verify my address" in page.text
    with session_factory() as session:
        assert session.scalar(select(User.email).where(User.name == "ada")) is None
    assert web.sign_in("ada").status_code == 303
    verified = web.post("/verify-email", page=f"/verify-email?token={token}", data={"token": token})
    assert verified.status_code == 303 and verified.headers["location"] == "/account"
    assert "ada@example.org" in web.get("/account").text
    assert "verify-first" not in web.get("/account").text


def test_a_forgotten_password_is_reset_from_a_mailed_link(browser, person, session_factory):
    person("grace")
    from tests.accounts.conftest import verified

    verified(session_factory, "grace", "grace@example.org")
    signed_in = browser("grace")
    web = browser()
    for address in ("grace@example.org", "nobody@example.org"):
        sent = web.post("/password-reset", page="/password-reset", data={"email": address})
        assert sent.status_code == 202 and "If an account has this address" in sent.text
    path, token = _last_link(session_factory, "grace@example.org")
    assert path == "/password-reset/confirm"
    done = web.post(
        "/password-reset/confirm",
        page=f"{path}?token={token}",
        data={"token": token, "password": "a brand new passphrase"},
    )
    assert done.status_code == 303 and done.headers["location"] == "/signin"
    # Every browser of grace's is signed out; the new password gets in, the old does not.
    assert signed_in.get("/account", follow_redirects=False).status_code == 303
    assert web.sign_in("grace").status_code == 401
    assert web.sign_in("grace", "a brand new passphrase").status_code == 303
    reused = web.post(
        "/password-reset/confirm",
        page="/signin",
        data={"token": token, "password": "yet another passphrase"},
    )
    assert reused.status_code == 422 and "not valid any more" in reused.text


def test_the_account_page_changes_the_password_asking_the_current_one(browser, person):
    person("alice")
    web = browser("alice")
    wrong = web.post(
        "/account/password",
        page="/account",
        data={"current_password": "not my password", "new_password": "a brand new passphrase"},
    )
    assert wrong.status_code == 401 and "not your current password" in wrong.text
    right = web.post(
        "/account/password",
        page="/account",
        data={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
    )
    assert right.status_code == 303
    assert browser().sign_in("alice", "a brand new passphrase").status_code == 303


def test_my_data_downloads_as_json(browser, person):
    person("alice")
    response = browser("alice").get("/account/data.json")
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    assert json.loads(response.text)["profile"]["name"] == "alice"
    assert browser().get("/account/data.json", follow_redirects=False).status_code == 303


def test_leaving_from_the_page_signs_out_and_ends_the_name(browser, person, session_factory):
    person("alice")
    web = browser("alice")
    kept = web.post(
        "/account/delete", page="/account", data={"password": PASSWORD, "confirm": "no"}
    )
    assert kept.status_code == 422
    gone = web.post(
        "/account/delete",
        page="/account",
        data={"password": PASSWORD, "confirm": "delete my account"},
    )
    assert gone.status_code == 303
    assert browser().sign_in("alice").status_code == 401
    with session_factory() as session:
        assert session.scalar(select(User).where(User.name == "alice")) is None


def test_the_admin_page_is_for_admins_and_disables_a_user_at_once(
    browser, person, make_user, with_password
):
    person("alice")
    person("bob", organiser=True)
    make_user("root_admin", admin=True)
    with_password("root_admin")
    for name in ("alice", "bob"):
        assert browser(name).get("/admin").status_code == 403
    assert browser().get("/admin", follow_redirects=False).status_code == 303
    alice = browser("alice")
    admin = browser("root_admin")
    page = admin.get("/admin?q=ali").text
    assert "alice" in page and "bob" not in page.split('id="users"')[1]
    alice_id = re.search(r"/admin/users/(\d+)/disable", page).group(1)  # type: ignore[union-attr]
    done = admin.post(f"/admin/users/{alice_id}/disable", page="/admin")
    assert done.status_code == 303
    assert alice.get("/account", follow_redirects=False).status_code == 303
    assert browser().sign_in("alice").status_code == 401
    # A participant's form to the admin's route is refused.
    other = browser("bob").post(f"/admin/users/{alice_id}/enable", page="/account")
    assert other.status_code == 403


def test_an_admin_makes_an_invitation_link_on_the_page(browser, make_user, with_password):
    make_user("root_admin", admin=True)
    with_password("root_admin")
    admin = browser("root_admin")
    made = admin.post("/admin/invitations", page="/admin", data={"uses": "5", "days": "7"})
    assert made.status_code == 200 and "/signup?invitation=pdl_" in made.text
    assert "5 left" in admin.get("/admin").text


def test_the_sign_up_form_needs_its_csrf_token(client):
    response = client.post(
        "/signup", data={"name": "ada", "email": "ada@example.org", "password": PASSWORD}
    )
    assert response.status_code == 403
