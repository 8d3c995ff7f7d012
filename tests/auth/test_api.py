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
