"""Who may make an account (the sign-up modes), the site admin's API with the wrong user, and
disabling: the next request of a disabled user fails, by token and by browser."""

import pytest
from sqlalchemy import select

from app.models import SiteAuditEntry, User, UserState
from tests.accounts.conftest import link_token, verified
from tests.helpers import API

PASSWORD = "correct horse battery"


def _signup(client, name="ada", email="ada@example.org", **extra):  # type: ignore[no-untyped-def]
    return client.post(
        f"{API}/auth/signup",
        json={"name": name, "email": email, "password": PASSWORD, **extra},
    )


def test_closed_sign_up_refuses_everyone(client_with):
    client = client_with(signup="closed")
    response = _signup(client)
    assert response.status_code == 403 and response.json()["code"] == "signup_closed"
    page = client.get("/signup")
    assert "closed" in page.text and 'action="/signup"' not in page.text


def test_domains_sign_up_takes_only_listed_domains(client_with):
    client = client_with(signup="domains", signup_domains="uni.edu, lab.org")
    refused = _signup(client, email="ada@gmail.com")
    assert refused.status_code == 403 and "uni.edu, lab.org" in refused.json()["detail"]
    assert _signup(client, email="ada@cs.uni.edu").status_code == 202
    # A look-alike domain is not a subdomain.
    assert _signup(client, name="eve", email="eve@evil-uni.edu").status_code == 403


def test_invite_sign_up_needs_a_live_invitation_with_uses_left(client_with, make_user):
    admin = make_user("root_admin", admin=True)
    client = client_with(signup="invite")
    assert _signup(client).status_code == 403
    made = client.post(
        f"{API}/admin/invitations", json={"uses": 2, "days": 1}, headers=admin.headers
    )
    assert made.status_code == 201, made.text
    invitation = made.json()["link"].split("invitation=")[1]
    assert _signup(client, invitation=invitation).status_code == 202
    assert (
        _signup(client, name="bea", email="bea@example.org", invitation=invitation).status_code
        == 202
    )
    used_up = _signup(client, name="cy", email="cy@example.org", invitation=invitation)
    assert used_up.status_code == 422 and used_up.json()["code"] == "link_invalid"
    assert client.get(f"{API}/admin/invitations", headers=admin.headers).json() == []


def test_an_invitation_for_one_address_takes_only_that_address(client_with, make_user):
    admin = make_user("root_admin", admin=True)
    client = client_with(signup="invite")
    made = client.post(
        f"{API}/admin/invitations", json={"email": "Ada@Example.org"}, headers=admin.headers
    ).json()
    invitation = made["link"].split("invitation=")[1]
    assert (
        _signup(client, name="eve", email="eve@example.org", invitation=invitation).status_code
        == 403
    )
    assert _signup(client, invitation=invitation).status_code == 202


ADMIN_ROUTES = [
    ("get", "/admin/users", None),
    ("patch", "/admin/users/alice", {"state": "disabled"}),
    ("get", "/admin/invitations", None),
    ("post", "/admin/invitations", {"uses": 1}),
    ("delete", "/admin/invitations/1", None),
    ("get", "/admin/audit", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ROUTES)
def test_admin_routes_refuse_participants_and_organisers(client, alice, host, method, path, body):
    for caller in (alice, host):
        kwargs = {"json": body} if body is not None else {}
        response = client.request(method, f"{API}{path}", headers=caller.headers, **kwargs)
        assert response.status_code == 403, (caller.name, response.text)
        assert response.json()["code"] == "admins_only"
    assert client.request(method, f"{API}{path}").status_code == 401


def test_an_admin_finds_users_by_name_or_address_page_by_page(client, make_user, session_factory):
    admin = make_user("root_admin", admin=True)
    for n in range(5):
        make_user(f"user{n}")
    verified(session_factory, "user3", "three@uni.edu")
    found = client.get(f"{API}/admin/users?q=uni.edu", headers=admin.headers).json()
    assert [u["name"] for u in found] == ["user3"] and found[0]["email"] == "three@uni.edu"
    page = client.get(f"{API}/admin/users?q=user&limit=2", headers=admin.headers)
    assert page.headers["X-Total-Count"] == "5" and len(page.json()) == 2


def test_a_disabled_users_next_request_fails(client, make_user, alice):
    admin = make_user("root_admin", admin=True)
    assert client.get(f"{API}/me", headers=alice.headers).status_code == 200
    changed = client.patch(
        f"{API}/admin/users/alice", json={"state": "disabled"}, headers=admin.headers
    )
    assert changed.status_code == 200 and changed.json()["state"] == "disabled"
    assert client.get(f"{API}/me", headers=alice.headers).status_code == 401
    client.patch(f"{API}/admin/users/alice", json={"state": "active"}, headers=admin.headers)
    assert client.get(f"{API}/me", headers=alice.headers).status_code == 200


def test_an_admin_cannot_disable_or_demote_themselves(client, make_user):
    admin = make_user("root_admin", admin=True)
    for body in ({"state": "disabled"}, {"role": "participant"}):
        response = client.patch(f"{API}/admin/users/root_admin", json=body, headers=admin.headers)
        assert response.status_code == 409


def test_every_admin_action_is_audited(client, make_user, alice, session_factory):
    admin = make_user("root_admin", admin=True)
    client.patch(f"{API}/admin/users/alice", json={"role": "organiser"}, headers=admin.headers)
    client.patch(f"{API}/admin/users/alice", json={"state": "disabled"}, headers=admin.headers)
    client.post(f"{API}/admin/invitations", json={"uses": 3}, headers=admin.headers)
    trail = client.get(f"{API}/admin/audit", headers=admin.headers).json()
    assert [e["action"] for e in trail] == ["invitation.made", "user.disabled", "user.role"]
    assert {e["actor"] for e in trail} == {"root_admin"}


# --- The user's own account --------------------------------------------------------------------


def test_my_data_holds_my_profile_and_no_one_elses(client, alice, bob, session_factory):
    verified(session_factory, "alice", "alice@example.org")
    verified(session_factory, "bob", "bob@example.org")
    data = client.get(f"{API}/me/data", headers=alice.headers).json()
    assert data["profile"]["name"] == "alice" and data["profile"]["email"] == "alice@example.org"
    assert "bob@example.org" not in str(data) and bob.token not in str(data)
    assert client.get(f"{API}/me/data").status_code == 401


def test_leaving_replaces_the_name_and_removes_every_way_in(client, alice, session_factory, mails):
    verified(session_factory, "alice", "alice@example.org")
    refused = client.post(f"{API}/me/delete", json={"confirm": "yes"}, headers=alice.headers)
    assert refused.status_code == 422
    done = client.post(
        f"{API}/me/delete", json={"confirm": "delete my account"}, headers=alice.headers
    )
    assert done.status_code == 200, done.text
    assert client.get(f"{API}/me", headers=alice.headers).status_code == 401
    with session_factory() as session:
        user = session.scalar(select(User).where(User.state == UserState.deleted))
        assert (
            user.name.startswith("deleted-") and user.email is None and user.password_hash is None
        )
        trail = session.scalars(select(SiteAuditEntry.action)).all()
    assert "account.deleted" in trail
    # The address is free again.
    assert (
        client.post(
            f"{API}/auth/signup",
            json={"name": "alice2", "email": "alice@example.org", "password": PASSWORD},
        ).status_code
        == 202
    )


def test_changing_the_address_needs_the_link_and_keeps_the_old_one_until_then(
    client, alice, session_factory, mails
):
    verified(session_factory, "alice", "alice@example.org")
    asked = client.post(f"{API}/me/email", json={"email": "new@example.org"}, headers=alice.headers)
    assert asked.status_code == 202
    me = client.get(f"{API}/me/account", headers=alice.headers).json()
    assert (me["email"], me["pending_email"]) == ("alice@example.org", "new@example.org")
    (mail,) = mails("new@example.org")
    client.post(f"{API}/auth/verify-email", json={"token": link_token(mail.body)})
    assert (
        client.get(f"{API}/me/account", headers=alice.headers).json()["email"] == "new@example.org"
    )
    # The old address is told.
    assert "new@example.org" in mails("alice@example.org")[-1].body


def test_changing_the_password_asks_the_current_one(client, alice, session_factory):
    from app.auth.service import set_password, user_named

    with session_factory() as session:
        set_password(user_named(session, "alice"), password=PASSWORD)
        session.commit()
    wrong = client.post(
        f"{API}/me/password",
        json={"current_password": "not it at all", "new_password": "a brand new passphrase"},
        headers=alice.headers,
    )
    assert wrong.status_code == 401
    right = client.post(
        f"{API}/me/password",
        json={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
        headers=alice.headers,
    )
    assert right.status_code == 200


def test_sign_ups_from_one_address_are_limited(client_with):
    client = client_with(signups_per_address_hour=2)
    assert _signup(client, name="a1", email="a1@example.org").status_code == 202
    assert _signup(client, name="a2", email="a2@example.org").status_code == 202
    third = _signup(client, name="a3", email="a3@example.org")
    assert third.status_code == 429 and "Retry-After" in third.headers


def test_mails_to_one_address_are_limited_without_changing_the_answer(
    client_with, mails, make_user, session_factory
):
    client = client_with(mails_per_recipient_hour=2)
    make_user("grace")
    verified(session_factory, "grace", "grace@example.org")
    answers = {
        client.post(f"{API}/auth/password-reset", json={"email": "grace@example.org"}).status_code
        for _ in range(4)
    }
    assert answers == {202} and len(mails("grace@example.org")) == 2


def test_unverified_sign_ups_are_bounded(client_with):
    client = client_with(signup_max_unverified=2)
    assert _signup(client, name="a1", email="a1@example.org").status_code == 202
    assert _signup(client, name="a2", email="a2@example.org").status_code == 202
    assert _signup(client, name="a3", email="a3@example.org").status_code == 429
