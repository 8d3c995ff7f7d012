"""Joining a server through the API: sign up, verify, reset; the same answers for known and
unknown addresses; links that work once, for one purpose, in time."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from app.models import LinkSecret, User, WebSession
from tests.accounts.conftest import link_token, verified
from tests.helpers import API, create_competition

PASSWORD = "correct horse battery"


def _signup(client, name="ada", email="ada@example.org", password=PASSWORD, **extra):  # type: ignore[no-untyped-def]
    return client.post(
        f"{API}/auth/signup", json={"name": name, "email": email, "password": password, **extra}
    )


def _token_of(client, name, password=PASSWORD):  # type: ignore[no-untyped-def]
    # A new account signs in with its password; the API takes tokens: make one on the page.
    from app.auth.service import issue_token, user_named

    app = client.app
    with app.state.session_factory() as session:
        user = user_named(session, name)
        token = issue_token(session, user=user, secret_key=app.state.settings.secret_key)
        session.commit()
    return {"Authorization": f"Bearer {token}"}


def test_a_newcomer_signs_up_verifies_and_may_then_take_part(client, mails, host):
    create_competition(client, host.headers, slug="open-comp")
    response = _signup(client)
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "verification_sent"
    headers = _token_of(client, "ada")
    me = client.get(f"{API}/me/account", headers=headers).json()
    assert me["email"] is None and me["pending_email"] == "ada@example.org"
    assert me["may_take_part"] is False
    # Browsing works; joining waits for the link.
    assert client.get(f"{API}/competitions/open-comp", headers=headers).status_code == 200
    refused = client.post(f"{API}/competitions/open-comp/join", headers=headers)
    assert refused.status_code == 403 and refused.json()["code"] == "email_unverified"

    (mail,) = mails("ada@example.org")
    assert "Verify" in mail.subject
    verified = client.post(f"{API}/auth/verify-email", json={"token": link_token(mail.body)})
    assert verified.status_code == 200, verified.text
    assert verified.json()["email"] == "ada@example.org"
    assert client.get(f"{API}/me/account", headers=headers).json()["may_take_part"] is True
    assert client.post(f"{API}/competitions/open-comp/join", headers=headers).status_code in (
        200,
        201,
    )


def test_a_verification_link_works_once(client, mails):
    _signup(client)
    token = link_token(mails("ada@example.org")[0].body)
    assert client.post(f"{API}/auth/verify-email", json={"token": token}).status_code == 200
    again = client.post(f"{API}/auth/verify-email", json={"token": token})
    assert again.status_code == 422 and again.json()["code"] == "link_invalid"


def test_an_expired_link_is_refused(client, mails, session_factory):
    _signup(client)
    token = link_token(mails("ada@example.org")[0].body)
    with session_factory() as session:
        session.execute(
            update(LinkSecret).values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
        session.commit()
    assert client.post(f"{API}/auth/verify-email", json={"token": token}).status_code == 422


def test_a_link_for_one_purpose_opens_nothing_else(client, mails, make_user, session_factory):
    _signup(client)
    verify = link_token(mails("ada@example.org")[0].body)
    refused = client.post(
        f"{API}/auth/password-reset/confirm",
        json={"token": verify, "password": "a brand new passphrase"},
    )
    assert refused.status_code == 422 and refused.json()["code"] == "link_invalid"
    for forged in ("pdl_" + "A" * 43, "", "x" * 5000):
        assert client.post(f"{API}/auth/verify-email", json={"token": forged}).status_code == 422


def test_signup_answers_the_same_whether_or_not_the_address_is_taken(
    client, mails, make_user, session_factory
):
    make_user("grace")
    verified(session_factory, "grace", "grace@example.org")
    taken = _signup(client, name="mallory", email="grace@example.org")
    free = _signup(client, name="newbie", email="newbie@example.org")
    assert (taken.status_code, taken.json()) == (free.status_code, free.json())
    # The owner of the address hears of it; the address never moves to the other account.
    (mail,) = mails("grace@example.org")
    assert "already belongs to the account 'grace'" in mail.body
    moved = client.post(f"{API}/auth/verify-email", json={"token": link_token(mail.body)})
    assert moved.status_code == 409
    with session_factory() as session:
        assert session.scalar(select(User.email).where(User.name == "mallory")) is None


def test_a_taken_user_name_may_say_so(client):
    assert _signup(client).status_code == 202
    taken = _signup(client, email="other@example.org")
    assert taken.status_code == 409 and "taken" in taken.json()["detail"]


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("password", "short", "at least 10"),
        ("password", "password123", "most common"),
        ("email", "not-an-address", "email"),
        ("email", "a@b\r\nBcc: x@example.org", "email"),
        ("name", "no spaces allowed", "name"),
    ],
)
def test_bad_sign_ups_are_422s_naming_the_problem(client, field, value, words):
    body = {"name": "ada", "email": "ada@example.org", "password": PASSWORD, field: value}
    response = client.post(f"{API}/auth/signup", json=body)
    assert response.status_code == 422, response.text
    assert words in response.text


def test_reset_answers_the_same_for_known_and_unknown_addresses(
    client, mails, make_user, session_factory
):
    make_user("grace")
    verified(session_factory, "grace", "grace@example.org")
    known = client.post(f"{API}/auth/password-reset", json={"email": "Grace@Example.org"})
    unknown = client.post(f"{API}/auth/password-reset", json={"email": "nobody@example.org"})
    assert (known.status_code, known.json()) == (unknown.status_code, unknown.json())
    assert mails("nobody@example.org") == []
    (mail,) = mails("grace@example.org")
    assert "/password-reset/confirm?token=" in mail.body


def test_a_reset_sets_the_password_once_and_ends_every_session(client, mails, session_factory):
    _signup(client)
    client.post(
        f"{API}/auth/verify-email", json={"token": link_token(mails("ada@example.org")[0].body)}
    )
    from app.auth.service import start_web_session, user_named

    with session_factory() as session:
        start_web_session(session, user=user_named(session, "ada"), secret_key="test-secret-key")
        session.commit()
    client.post(f"{API}/auth/password-reset", json={"email": "ada@example.org"})
    token = link_token(mails("ada@example.org")[-1].body)
    weak = client.post(
        f"{API}/auth/password-reset/confirm", json={"token": token, "password": "qwerty"}
    )
    assert weak.status_code == 422  # refused before the link is used up
    done = client.post(
        f"{API}/auth/password-reset/confirm",
        json={"token": token, "password": "a brand new passphrase"},
    )
    assert done.status_code == 200, done.text
    with session_factory() as session:
        assert session.scalar(select(WebSession.id)) is None
        from app.auth.service import user_for_password

        assert (
            user_for_password(session, name="ada", password="a brand new passphrase").name == "ada"
        )
    again = client.post(
        f"{API}/auth/password-reset/confirm",
        json={"token": token, "password": "another new passphrase"},
    )
    assert again.status_code == 422


def test_a_second_reset_link_voids_the_first(client, mails, make_user, session_factory):
    _signup(client)
    client.post(
        f"{API}/auth/verify-email", json={"token": link_token(mails("ada@example.org")[0].body)}
    )
    client.post(f"{API}/auth/password-reset", json={"email": "ada@example.org"})
    client.post(f"{API}/auth/password-reset", json={"email": "ada@example.org"})
    first, second = (link_token(m.body) for m in mails("ada@example.org")[-2:])
    body = {"password": "a brand new passphrase"}
    assert (
        client.post(f"{API}/auth/password-reset/confirm", json={**body, "token": first}).status_code
        == 422
    )
    assert (
        client.post(
            f"{API}/auth/password-reset/confirm", json={**body, "token": second}
        ).status_code
        == 200
    )


def test_links_are_stored_hashed(client, mails, session_factory):
    _signup(client)
    token = link_token(mails("ada@example.org")[0].body)
    with session_factory() as session:
        rows = session.scalars(select(LinkSecret)).all()
    assert rows and all(token not in (r.secret_hash, r.prefix) for r in rows)


def test_an_unverified_account_cannot_join_a_team_or_submit(client, host, alice):
    from tests.helpers import ready_competition
    from tests.teams.factories import invitation_id, join

    ready_competition(client, host.headers, slug="churn")
    join(client, alice)
    _signup(client)
    ada = _token_of(client, "ada")
    invitation = invitation_id(client, alice, "ada")
    refused = client.post(f"{API}/invitations/{invitation}/accept", headers=ada)
    assert refused.status_code == 403 and refused.json()["code"] == "email_unverified"
    upload = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("s.csv", b"id,target\na,1\n", "text/csv")},
        headers=ada,
    )
    assert upload.status_code == 403 and upload.json()["code"] == "email_unverified"
