from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.models import Competition, Team, TeamInvitation, TeamMember, User
from tests.helpers import API, create_competition
from tests.teams.factories import (
    accept,
    decline,
    invitation_id,
    invite,
    join,
    merge,
    set_rules,
    team,
)


@pytest.fixture
def carol(make_user):
    return make_user("carol")


@pytest.fixture
def dave(make_user):
    return make_user("dave")


@pytest.fixture
def churn(client, host):
    return create_competition(client, host.headers)


def _teams_in_db(session_factory) -> int:
    with session_factory() as session:
        return session.scalar(select(func.count(Team.id)))


# Joining


def test_join_makes_a_one_person_team_led_by_the_user(client, churn, alice):
    response = client.post(f"{API}/competitions/churn/join", headers=alice.headers)
    assert response.status_code == 201
    body = response.json()
    assert body["name"] == "alice" and body["leader"] == "alice"
    assert body["members"] == ["alice"] and body["pending_invitations"] == []
    assert team(client, alice) == body


def test_joining_again_returns_the_same_team(client, churn, alice, session_factory):
    first = client.post(f"{API}/competitions/churn/join", headers=alice.headers)
    again = client.post(f"{API}/competitions/churn/join", headers=alice.headers)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert _teams_in_db(session_factory) == 1


def test_organisers_cannot_join(client, churn, host):
    response = client.post(f"{API}/competitions/churn/join", headers=host.headers)
    assert response.status_code == 403


def test_joining_an_unknown_competition_is_404(client, alice):
    assert client.post(f"{API}/competitions/nope/join", headers=alice.headers).status_code == 404


def test_my_team_is_404_before_joining(client, churn, alice):
    response = client.get(f"{API}/competitions/churn/team", headers=alice.headers)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_a_taken_team_name_gets_a_suffix(client, churn, alice, session_factory):
    with session_factory() as session:
        competition_id = session.scalar(select(Competition.id).where(Competition.slug == "churn"))
        session.add(Team(competition_id=competition_id, name="alice"))
        session.commit()
    assert join(client, alice)["name"] == "alice-2"


def test_teams_are_per_competition(client, host, alice):
    create_competition(client, host.headers, "churn")
    create_competition(client, host.headers, "fraud")
    assert join(client, alice, "churn")["id"] != join(client, alice, "fraud")["id"]


# Inviting


def test_invitation_shows_on_the_team_and_for_the_invitee(client, churn, alice, bob):
    join(client, alice)
    response = invite(client, alice, "bob")
    assert response.status_code == 201
    body = response.json()
    assert body["team"] == "alice" and body["inviter"] == "alice" and body["invitee"] == "bob"
    assert body["status"] == "pending" and body["competition"] == "churn"
    assert [i["user"] for i in team(client, alice)["pending_invitations"]] == ["bob"]
    mine = client.get(f"{API}/competitions/churn/invitations", headers=bob.headers).json()
    assert [i["id"] for i in mine] == [body["id"]]
    assert client.get(f"{API}/competitions/churn/invitations", headers=alice.headers).json() == []


def test_only_the_leader_can_invite(client, churn, alice, bob, carol):
    join(client, alice)
    merge(client, alice, bob)
    assert invite(client, bob, "carol").status_code == 403
    # Someone who has not joined leads no team either.
    assert invite(client, carol, "alice").status_code == 403


def test_inviting_an_unknown_user_is_404(client, churn, alice):
    join(client, alice)
    response = invite(client, alice, "nobody")
    assert response.status_code == 404 and "nobody" in response.json()["detail"]


def test_inviting_a_teammate_or_yourself_is_409(client, churn, alice, bob):
    join(client, alice)
    merge(client, alice, bob)
    assert invite(client, alice, "bob").status_code == 409
    assert invite(client, alice, "alice").status_code == 409


def test_inviting_an_organiser_is_409(client, churn, alice, host):
    join(client, alice)
    assert invite(client, alice, "host").status_code == 409


def test_inviting_the_same_user_twice_is_409(client, churn, alice, bob):
    join(client, alice)
    invitation_id(client, alice, "bob")
    response = invite(client, alice, "bob")
    assert response.status_code == 409 and "pending" in response.json()["detail"]


def test_inviting_a_member_who_does_not_lead_their_team_is_409(client, churn, alice, carol, dave):
    join(client, alice)
    join(client, carol)
    merge(client, carol, dave)
    response = invite(client, alice, "dave")
    assert response.status_code == 409 and "carol" in response.json()["detail"]


def test_leader_can_withdraw_an_invitation(client, churn, alice, bob):
    join(client, alice)
    invitation = invitation_id(client, alice, "bob")
    url = f"{API}/competitions/churn/team/invitations/{invitation}"
    assert client.delete(url, headers=bob.headers).status_code == 404
    response = client.delete(url, headers=alice.headers)
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert team(client, alice)["pending_invitations"] == []
    assert accept(client, bob, invitation).status_code == 409


# Answering


def test_accepting_puts_the_invitee_on_the_team(client, churn, alice, bob):
    join(client, alice)
    response = accept(client, bob, invitation_id(client, alice, "bob"))
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "alice" and body["leader"] == "alice"
    assert body["members"] == ["alice", "bob"] and body["pending_invitations"] == []
    assert team(client, bob) == team(client, alice) == body


def test_only_the_invitee_can_accept_or_decline(client, churn, alice, bob, carol):
    join(client, alice)
    invitation = invitation_id(client, alice, "bob")
    for caller in (alice, carol):
        assert accept(client, caller, invitation).status_code == 404
        assert decline(client, caller, invitation).status_code == 404
    assert accept(client, bob, 999_999).status_code == 404
    assert team(client, alice)["members"] == ["alice"]
    assert accept(client, bob, invitation).status_code == 200


def test_a_declined_invitation_cannot_be_accepted(client, churn, alice, bob):
    join(client, alice)
    invitation = invitation_id(client, alice, "bob")
    response = decline(client, bob, invitation)
    assert response.status_code == 200 and response.json()["status"] == "declined"
    response = accept(client, bob, invitation)
    assert response.status_code == 409 and "declined" in response.json()["detail"]
    assert team(client, alice)["members"] == ["alice"]


def test_an_accepted_invitation_cannot_be_accepted_again(client, churn, alice, bob):
    join(client, alice)
    invitation = invitation_id(client, alice, "bob")
    assert accept(client, bob, invitation).status_code == 200
    assert accept(client, bob, invitation).status_code == 409
    assert decline(client, bob, invitation).status_code == 409


# Team size


def test_pending_invitations_hold_seats_up_to_the_team_size(
    client, churn, alice, bob, carol, session_factory
):
    set_rules(session_factory, max_team_size=2)
    join(client, alice)
    bobs = invitation_id(client, alice, "bob")
    response = invite(client, alice, "carol")
    assert response.status_code == 409
    assert "2" in response.json()["detail"] and response.json()["max_team_size"] == 2
    client.delete(f"{API}/competitions/churn/team/invitations/{bobs}", headers=alice.headers)
    assert invite(client, alice, "carol").status_code == 201


def test_a_full_team_cannot_invite(client, churn, alice, bob, carol, session_factory):
    set_rules(session_factory, max_team_size=2)
    join(client, alice)
    merge(client, alice, bob)
    assert invite(client, alice, "carol").status_code == 409


def test_team_size_counts_the_invitees_whole_team(
    client, churn, alice, bob, carol, dave, session_factory
):
    set_rules(session_factory, max_team_size=3)
    join(client, alice)
    merge(client, alice, bob)
    join(client, carol)
    merge(client, carol, dave)
    response = invite(client, alice, "carol")
    assert response.status_code == 409 and "3" in response.json()["detail"]


def test_team_size_is_checked_again_when_accepting(
    client, churn, alice, carol, dave, session_factory
):
    set_rules(session_factory, max_team_size=2)
    join(client, alice)
    alices = invitation_id(client, alice, "carol")
    # carol's team grows after alice invited her.
    join(client, carol)
    merge(client, carol, dave)
    response = accept(client, carol, alices)
    assert response.status_code == 409
    assert response.json()["max_team_size"] == 2 and "2" in response.json()["detail"]
    assert team(client, alice)["members"] == ["alice"]
    assert team(client, carol)["members"] == ["carol", "dave"]


# Deadlines


def test_no_merging_after_the_merge_deadline(client, churn, alice, bob, carol, session_factory):
    join(client, alice)
    invitation = invitation_id(client, alice, "bob")
    past = datetime.now(UTC) - timedelta(minutes=1)
    set_rules(session_factory, team_merge_deadline=past)
    response = accept(client, bob, invitation)
    assert response.status_code == 409 and "merge deadline" in response.json()["detail"]
    assert invite(client, alice, "carol").status_code == 409
    assert team(client, alice)["members"] == ["alice"]


def test_merging_before_the_merge_deadline_is_allowed(client, churn, alice, bob, session_factory):
    set_rules(session_factory, team_merge_deadline=datetime.now(UTC) + timedelta(days=1))
    join(client, alice)
    assert merge(client, alice, bob)["members"] == ["alice", "bob"]


def test_no_merging_after_the_deadline(client, churn, alice, bob, session_factory):
    join(client, alice)
    invitation = invitation_id(client, alice, "bob")
    set_rules(session_factory, deadline=datetime.now(UTC) - timedelta(minutes=1))
    assert accept(client, bob, invitation).status_code == 409
    assert team(client, alice)["members"] == ["alice"]


def test_a_banned_team_cannot_merge(client, churn, alice, bob, session_factory):
    join(client, alice)
    join(client, bob)
    invitation = invitation_id(client, alice, "bob")
    with session_factory() as session:
        session.scalar(select(Team).where(Team.name == "bob")).banned_at = datetime.now(UTC)
        session.commit()
    assert accept(client, bob, invitation).status_code == 409
    assert team(client, bob)["members"] == ["bob"]


# One team per user


def test_a_user_is_on_one_team_per_competition(client, churn, alice, bob, carol, session_factory):
    join(client, alice)
    join(client, carol)
    carols = invitation_id(client, carol, "bob")
    merge(client, alice, bob)
    # Invitations addressed to bob were about the team he left.
    response = accept(client, bob, carols)
    assert response.status_code == 409 and "cancelled" in response.json()["detail"]
    assert invite(client, carol, "bob").status_code == 409
    assert join(client, bob)["name"] == "alice"
    with session_factory() as session:
        bob_id = session.scalar(select(User.id).where(User.name == "bob"))
        assert session.scalar(select(func.count()).where(TeamMember.user_id == bob_id)) == 1


def test_the_database_refuses_a_second_membership(client, churn, alice, bob, session_factory):
    join(client, alice)
    join(client, bob)
    with session_factory() as session:
        bob_row = session.scalar(select(TeamMember).join(User).where(User.name == "bob"))
        alices = session.scalar(select(Team).where(Team.name == "alice"))
        session.add(
            TeamMember(
                team_id=alices.id,
                competition_id=alices.competition_id,
                user_id=bob_row.user_id,
            )
        )
        with pytest.raises(IntegrityError):
            session.flush()
        session.rollback()


def test_accepting_while_already_on_the_inviting_team_is_409(
    client, churn, alice, bob, session_factory
):
    join(client, alice)
    first = invitation_id(client, alice, "bob")
    with session_factory() as session:
        # A second pending invitation, as a race between two invites could leave behind.
        original = session.get(TeamInvitation, first)
        second = TeamInvitation(
            competition_id=original.competition_id,
            team_id=original.team_id,
            inviter_id=original.inviter_id,
            invitee_id=original.invitee_id,
        )
        session.add(second)
        session.commit()
        second_id = second.id
    assert accept(client, bob, first).status_code == 200
    response = accept(client, bob, second_id)
    assert response.status_code == 409
    assert team(client, alice)["members"] == ["alice", "bob"]
