"""Small builders for the team tests: joining, inviting, answering and changing rules in place."""

from typing import Any

from httpx import Response
from sqlalchemy.orm import Session, sessionmaker

from tests.asgi_client import TestClient
from tests.helpers import API, set_competition


def join(client: TestClient, caller: Any, slug: str = "churn") -> dict[str, Any]:
    response = client.post(f"{API}/competitions/{slug}/join", headers=caller.headers)
    assert response.status_code in (200, 201), response.text
    return response.json()


def team(client: TestClient, caller: Any, slug: str = "churn") -> dict[str, Any]:
    response = client.get(f"{API}/competitions/{slug}/team", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def invite(client: TestClient, leader: Any, name: str, slug: str = "churn") -> Response:
    return client.post(
        f"{API}/competitions/{slug}/team/invitations", json={"user": name}, headers=leader.headers
    )


def invitation_id(client: TestClient, leader: Any, name: str, slug: str = "churn") -> int:
    response = invite(client, leader, name, slug)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def accept(client: TestClient, caller: Any, invitation: int) -> Response:
    return client.post(f"{API}/invitations/{invitation}/accept", headers=caller.headers)


def decline(client: TestClient, caller: Any, invitation: int) -> Response:
    return client.post(f"{API}/invitations/{invitation}/decline", headers=caller.headers)


def merge(client: TestClient, leader: Any, invitee: Any, slug: str = "churn") -> dict[str, Any]:
    """``invitee`` (and their team) joins ``leader``'s team."""
    response = accept(client, invitee, invitation_id(client, leader, invitee.name, slug))
    assert response.status_code == 200, response.text
    return response.json()


def set_rules(session_factory: sessionmaker[Session], slug: str = "churn", **fields: Any) -> None:
    """Change competition fields directly, whatever the create/update API accepts."""
    set_competition(session_factory, slug, **fields)
