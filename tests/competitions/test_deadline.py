"""Moving the deadline earlier: a selected submission that becomes late loses its selection,
and its team is told (a notice on its team view) and the audit log keeps an entry."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from app.models import Submission
from tests.helpers import API, PERFECT, PUBLIC_HALF, ready_competition, submit
from tests.teams.factories import set_rules, team


def _submit_and_select(client, caller, content) -> int:  # type: ignore[no-untyped-def]
    response = submit(client, caller.headers, content)
    assert response.status_code == 202, response.text
    submission = response.json()["id"]
    selected = client.post(f"{API}/submissions/{submission}/select", headers=caller.headers)
    assert selected.status_code == 200, selected.text
    return submission


def test_a_selection_made_late_by_an_earlier_deadline_is_cleared_and_told(
    client, host, alice, session_factory
):
    now = datetime.now(UTC)
    ready_competition(client, host.headers, deadline=(now + timedelta(days=5)).isoformat())
    set_rules(session_factory, start=now - timedelta(days=3))
    early = _submit_and_select(client, alice, PUBLIC_HALF)
    recent = _submit_and_select(client, alice, PERFECT)
    with session_factory() as session:
        session.execute(
            update(Submission)
            .where(Submission.id == early)
            .values(created_at=now - timedelta(days=2))
        )
        session.commit()

    new_deadline = now - timedelta(days=1)
    response = client.patch(
        f"{API}/competitions/churn",
        json={"deadline": new_deadline.isoformat()},
        headers=host.headers,
    )
    assert response.status_code == 200, response.text

    views = {
        s["id"]: s
        for s in client.get(f"{API}/competitions/churn/submissions", headers=alice.headers).json()
    }
    assert views[recent]["late"] is True and views[recent]["selected"] is False
    assert views[early]["late"] is False and views[early]["selected"] is True
    (notice,) = team(client, alice)["notices"]
    assert notice["kind"] == "selection_late"
    assert f"#{recent}" in notice["message"] and f"#{early}" not in notice["message"]
    log = client.get(f"{API}/competitions/churn/audit", headers=host.headers).json()
    cleared = [e for e in log if e["action"] == "selection_cleared"]
    assert [(e["target"], e["before"], e["after"]["selected"]) for e in cleared] == [
        ("alice", {"selected": [recent]}, [])
    ]


def test_moving_the_deadline_without_making_a_selection_late_tells_no_one(
    client, host, alice, session_factory
):
    now = datetime.now(UTC)
    ready_competition(client, host.headers, deadline=(now + timedelta(days=5)).isoformat())
    _submit_and_select(client, alice, PERFECT)
    response = client.patch(
        f"{API}/competitions/churn",
        json={"deadline": (now + timedelta(days=2)).isoformat()},
        headers=host.headers,
    )
    assert response.status_code == 200
    assert team(client, alice)["notices"] == []
