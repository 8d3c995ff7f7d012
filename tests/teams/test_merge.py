from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from sqlalchemy import select, update

from app.models import Submission, Team
from app.teams.merge import merge_allowance
from tests.helpers import API, PERFECT, PUBLIC_HALF, ready_competition, submit
from tests.teams.factories import accept, invitation_id, join, merge, set_rules, team


@pytest.fixture
def carol(make_user):
    return make_user("carol")


def _submit(client, caller, content=PUBLIC_HALF) -> int:
    response = submit(client, caller.headers, content)
    assert response.status_code == 202, response.text
    return response.json()["id"]


def _submissions(client, caller) -> list[dict]:
    response = client.get(f"{API}/competitions/churn/submissions", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def _two_teams(client, host, alice, bob, alices: int, bobs: int, **rules) -> int:
    """alice's and bob's one-person teams with that many submissions each; bob's invitation."""
    ready_competition(client, host.headers, daily_submission_limit=2, **rules)
    join(client, alice)
    join(client, bob)
    for _ in range(alices):
        _submit(client, alice)
    for _ in range(bobs):
        _submit(client, bob)
    return invitation_id(client, alice, "bob")


# Kaggle's rule: together, no more submissions than one team could have made by now.


def test_teams_within_one_teams_quota_can_merge(client, host, alice, bob):
    invitation = _two_teams(client, host, alice, bob, 1, 1)
    response = accept(client, bob, invitation)
    assert response.status_code == 200
    assert response.json()["members"] == ["alice", "bob"]


def test_teams_over_one_teams_quota_cannot_merge(client, host, alice, bob):
    invitation = _two_teams(client, host, alice, bob, 2, 1)
    response = accept(client, bob, invitation)
    assert response.status_code == 409
    body = response.json()
    assert body["combined_submissions"] == 3 and body["allowed_submissions"] == 2
    assert "3" in body["detail"] and "2" in body["detail"]
    assert team(client, alice)["members"] == ["alice"]
    assert team(client, bob)["members"] == ["bob"]


def test_refunded_submissions_do_not_count_toward_the_merge_rule(
    client, host, alice, bob, session_factory
):
    invitation = _two_teams(client, host, alice, bob, 2, 1)
    with session_factory() as session:
        bobs = session.scalar(select(Team.id).where(Team.name == "bob"))
        session.execute(update(Submission).where(Submission.team_id == bobs).values(refunded=True))
        session.commit()
    assert accept(client, bob, invitation).status_code == 200


def test_the_allowance_grows_with_each_day_since_start(client, host, alice, bob, session_factory):
    invitation = _two_teams(client, host, alice, bob, 2, 1)
    set_rules(session_factory, start=datetime.now(UTC) - timedelta(days=1))
    assert accept(client, bob, invitation).status_code == 200


def test_the_lifetime_limit_caps_the_allowance(client, host, alice, bob, session_factory):
    invitation = _two_teams(client, host, alice, bob, 2, 1)
    set_rules(
        session_factory, start=datetime.now(UTC) - timedelta(days=1), total_submission_limit=2
    )
    response = accept(client, bob, invitation)
    assert response.status_code == 409 and response.json()["allowed_submissions"] == 2


def _competition(start: datetime, daily: int = 5, total: int | None = None) -> SimpleNamespace:
    return SimpleNamespace(start=start, daily_submission_limit=daily, total_submission_limit=total)


def test_merge_allowance_counts_today_and_every_day_since_starts_utc_date():
    now = datetime(2026, 11, 29, 0, 30, tzinfo=UTC)
    assert merge_allowance(_competition(now), now) == 5
    # Started late yesterday (UTC): yesterday and today both count.
    assert merge_allowance(_competition(datetime(2026, 11, 28, 23, 59, tzinfo=UTC)), now) == 10
    assert merge_allowance(_competition(now - timedelta(days=9), daily=2), now) == 20
    assert merge_allowance(_competition(now - timedelta(days=9), total=7), now) == 7
    assert merge_allowance(_competition(now + timedelta(days=2)), now) == 0


# The merged team


def test_merged_team_keeps_both_histories(client, host, alice, bob):
    invitation = _two_teams(client, host, alice, bob, 1, 1)
    alices, bobs = (s["id"] for s in _submissions(client, alice) + _submissions(client, bob))
    assert accept(client, bob, invitation).status_code == 200
    for caller in (alice, bob):
        assert {s["id"] for s in _submissions(client, caller)} == {alices, bobs}
    board = client.get(f"{API}/competitions/churn/leaderboard", headers=alice.headers).json()
    assert [(row["team"], row["entries"]) for row in board["rows"]] == [("alice", 2)]
    host_view = client.get(f"{API}/submissions/{bobs}", headers=host.headers).json()
    assert host_view["team"] == "alice" and host_view["user"] == "bob"


def _select(client, caller, submission: int) -> None:
    response = client.post(f"{API}/submissions/{submission}/select", headers=caller.headers)
    assert response.status_code == 200, response.text


def _selected(client, caller) -> dict[int, bool]:
    return {s["id"]: s["selected"] for s in _submissions(client, caller)}


def _merge_audit(client, host) -> list[dict]:
    log = client.get(f"{API}/competitions/churn/audit", headers=host.headers).json()
    return [e for e in log if e["action"] == "team_merge"]


def test_both_teams_selections_are_kept_when_together_they_fit(client, host, alice, bob):
    # Contract changed by issue 9: the absorbed team's selections used to be cleared silently.
    invitation = _two_teams(client, host, alice, bob, 1, 1)
    alices = _submissions(client, alice)[0]["id"]
    bobs = _submissions(client, bob)[0]["id"]
    _select(client, alice, alices)
    _select(client, bob, bobs)
    response = accept(client, bob, invitation)
    assert response.status_code == 200
    assert _selected(client, alice) == {alices: True, bobs: True}
    notices = response.json()["notices"]
    assert [n["kind"] for n in notices] == ["selections_kept"]
    assert f"#{alices}" in notices[0]["message"] and f"#{bobs}" in notices[0]["message"]
    (entry,) = _merge_audit(client, host)
    assert entry["actor"] == "bob" and entry["after"]["selected"] == [alices, bobs]
    assert entry["before"]["selected"] == {"alice": [alices], "bob": [bobs]}


def test_selections_over_the_limit_are_cleared_and_the_team_is_told(
    client, host, alice, bob, session_factory
):
    invitation = _two_teams(client, host, alice, bob, 2, 1, final_selection_limit=2)
    alices = [s["id"] for s in _submissions(client, alice)]
    bobs = _submissions(client, bob)[0]["id"]
    for submission in alices:
        _select(client, alice, submission)
    _select(client, bob, bobs)
    # Started yesterday: room for the three submissions together.
    set_rules(session_factory, start=datetime.now(UTC) - timedelta(days=1))
    response = accept(client, bob, invitation)
    assert response.status_code == 200, response.text
    assert not any(_selected(client, alice).values())
    for body in (response.json(), team(client, alice), team(client, bob)):
        (notice,) = body["notices"]
        assert notice["kind"] == "selections_cleared"
        assert "3" in notice["message"] and "limit of 2" in notice["message"]
    (entry,) = _merge_audit(client, host)
    assert entry["after"] == {"team": "alice", "selected": [], "selections": "cleared"}
    assert sorted(entry["before"]["selected"]["alice"]) == sorted(alices)


def test_a_merge_without_selections_leaves_no_notice_but_an_audit_entry(client, host, alice, bob):
    invitation = _two_teams(client, host, alice, bob, 1, 1)
    response = accept(client, bob, invitation)
    assert response.json()["notices"] == []
    (entry,) = _merge_audit(client, host)
    assert entry["before"]["teams"] == ["alice", "bob"]


def test_the_absorbed_team_is_removed_and_its_invitations_cancelled(
    client, host, alice, bob, carol, session_factory
):
    ready_competition(client, host.headers)
    join(client, alice)
    join(client, bob)
    to_carol = invitation_id(client, bob, "carol")
    merge(client, alice, bob)
    with session_factory() as session:
        assert list(session.scalars(select(Team.name))) == ["alice"]
    mine = client.get(f"{API}/competitions/churn/invitations", headers=carol.headers).json()
    assert [(i["id"], i["status"]) for i in mine] == [(to_carol, "cancelled")]
    assert accept(client, carol, to_carol).status_code == 409
    assert team(client, alice)["members"] == ["alice", "bob"]


def test_a_joined_member_submits_for_the_team_they_are_on(client, host, alice, bob):
    ready_competition(client, host.headers)
    join(client, alice)
    merge(client, alice, bob)
    submission = _submit(client, bob, PERFECT)
    host_view = client.get(f"{API}/submissions/{submission}", headers=host.headers).json()
    assert host_view["team"] == "alice" and host_view["user"] == "bob"
    assert [s["id"] for s in _submissions(client, alice)] == [submission]


def test_a_participant_cannot_submit_for_a_team_they_are_not_on(client, host, alice, bob):
    ready_competition(client, host.headers)
    join(client, alice)
    join(client, bob)
    submission = _submit(client, bob)
    host_view = client.get(f"{API}/submissions/{submission}", headers=host.headers).json()
    assert host_view["team"] == "bob"
    assert _submissions(client, alice) == []
    assert client.get(f"{API}/submissions/{submission}", headers=alice.headers).status_code == 404


def test_submitting_without_joining_makes_a_team_the_submitter_leads(
    client, host, alice, bob, session_factory
):
    ready_competition(client, host.headers)
    _submit(client, alice)
    # Teams made before leaders were recorded are led by their first member.
    with session_factory() as session:
        session.execute(update(Team).values(leader_id=None))
        session.commit()
    assert team(client, alice)["leader"] == "alice"
    assert merge(client, alice, bob)["members"] == ["alice", "bob"]
    assert team(client, bob)["leader"] == "alice"
