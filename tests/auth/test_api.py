"""Bearer tokens: who they name, how they are kept, and when they stop working."""

from datetime import UTC, datetime

from sqlalchemy import select, update

from app.auth.tokens import hash_token
from app.models import ApiToken
from tests.helpers import API


def test_me_names_the_caller_and_their_role(client, host, alice):
    me = client.get(f"{API}/me", headers=alice.headers).json()
    assert (me["name"], me["role"]) == ("alice", "participant") and isinstance(me["id"], int)
    assert client.get(f"{API}/me", headers=host.headers).json()["role"] == "organiser"


def test_tokens_are_kept_as_keyed_hashes_only(alice, session_factory, settings):
    with session_factory() as session:
        rows = session.scalars(select(ApiToken)).all()
    assert all(alice.token not in (row.token_hash, row.prefix) for row in rows)
    assert hash_token(alice.token, secret_key=settings.secret_key) in {r.token_hash for r in rows}
    # Keyed: the same token under another secret is a different hash, useless offline.
    assert hash_token(alice.token, secret_key="another") not in {r.token_hash for r in rows}


def test_a_revoked_token_is_401(client, alice, session_factory):
    with session_factory() as session:
        session.execute(update(ApiToken).values(revoked_at=datetime.now(UTC)))
        session.commit()
    response = client.get(f"{API}/me", headers=alice.headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


def test_a_non_bearer_scheme_is_401(client, alice):
    response = client.get(f"{API}/me", headers={"Authorization": f"Basic {alice.token}"})
    assert response.status_code == 401


# The caller's own tokens: listed by id and prefix, revoked one by one, never another user's.


def _tokens(client, caller) -> list[dict]:  # type: ignore[no-untyped-def]
    response = client.get(f"{API}/auth/tokens", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_user_lists_their_own_tokens_by_prefix_never_the_secret(client, alice, bob):
    (token,) = _tokens(client, alice)
    assert alice.token.startswith(token["prefix"]) and token["revoked_at"] is None
    assert alice.token not in str(_tokens(client, alice))
    assert _tokens(client, bob)[0]["id"] != token["id"]


def test_a_user_revokes_one_of_their_tokens(client, alice, session_factory, settings):
    from app.auth.service import issue_token, user_named

    with session_factory() as session:
        second = issue_token(
            session, user=user_named(session, "alice"), secret_key=settings.secret_key
        )
        session.commit()
    spare = {"Authorization": f"Bearer {second}"}
    listed = _tokens(client, alice)
    assert len(listed) == 2
    first_id = next(t["id"] for t in listed if alice.token.startswith(t["prefix"]))
    response = client.delete(f"{API}/auth/tokens/{first_id}", headers=spare)
    assert response.status_code == 200 and response.json()["revoked_at"] is not None
    assert client.get(f"{API}/me", headers=alice.headers).status_code == 401
    assert client.get(f"{API}/me", headers=spare).json()["name"] == "alice"


def test_a_user_can_neither_list_nor_revoke_another_users_tokens(client, alice, bob):
    (alices,) = _tokens(client, alice)
    assert alices["id"] not in {t["id"] for t in _tokens(client, bob)}
    response = client.delete(f"{API}/auth/tokens/{alices['id']}", headers=bob.headers)
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert client.get(f"{API}/me", headers=alice.headers).status_code == 200
    assert _tokens(client, alice)[0]["revoked_at"] is None


def test_revoking_an_unknown_token_is_404(client, alice):
    assert client.delete(f"{API}/auth/tokens/999999", headers=alice.headers).status_code == 404
