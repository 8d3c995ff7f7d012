"""Who takes part: each registration mode, the allow and deny lists, invitation links (expiry
and count), rules accepted and changed mid-competition, the hosts' decisions and lists."""

import csv
import io
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from app.models import Event, LinkSecret
from tests.helpers import API, PERFECT, ready_competition, submit

SLUG = "churn"
URL = f"{API}/competitions/{SLUG}"


def _join(client, caller, **body):  # type: ignore[no-untyped-def]
    return client.post(f"{URL}/join", json=body or None, headers=caller.headers)


def _kinds(session_factory) -> list[str]:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        return list(session.scalars(select(Event.kind).order_by(Event.id)))


def test_open_is_todays_behaviour_and_the_default(client, host, alice):
    ready_competition(client, host.headers)
    competition = client.get(URL, headers=alice.headers).json()
    assert competition["registration"] == "open" and competition["rules"] == ""
    assert _join(client, alice).status_code == 201
    assert submit(client, alice.headers, PERFECT).status_code == 202


def test_approval_makes_a_request_the_hosts_decide(client, host, alice, bob, session_factory):
    ready_competition(client, host.headers, registration="approval")
    asked = _join(client, alice, message="I study churn at Uni X")
    assert asked.status_code == 202, asked.text
    assert asked.json()["status"] == "pending"
    # Asking again changes nothing; submitting waits for the decision.
    assert _join(client, alice).json()["status"] == "pending"
    refused = submit(client, alice.headers, PERFECT)
    assert refused.status_code == 403 and refused.json()["code"] == "registration_pending"
    assert _join(client, bob).status_code == 202

    listed = client.get(f"{URL}/participants?status=pending", headers=host.headers)
    assert [p["name"] for p in listed.json()] == ["alice", "bob"]
    assert listed.json()[0]["message"] == "I study churn at Uni X"

    approved = client.post(f"{URL}/participants/alice/approve", headers=host.headers)
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    denied = client.post(
        f"{URL}/participants/bob/deny", json={"message": "students only"}, headers=host.headers
    )
    assert denied.json()["status"] == "denied"

    assert submit(client, alice.headers, PERFECT).status_code == 202
    assert _join(client, alice).status_code in (200, 201)  # the team, as before
    assert submit(client, bob.headers, PERFECT).status_code == 403
    again = _join(client, bob)
    assert again.status_code == 403 and again.json()["code"] == "registration_refused"
    kinds = _kinds(session_factory)
    assert kinds.count("registration.requested") == 2
    assert kinds.count("registration.decided") == 2


def test_hosts_decide_many_at_once_and_unknown_names_are_named(client, host, make_user):
    ready_competition(client, host.headers, registration="approval")
    callers = [make_user(f"p{i}") for i in range(3)]
    for caller in callers:
        assert _join(client, caller).status_code == 202
    many = client.post(
        f"{URL}/participants/approve", json={"names": ["p0", "p1"]}, headers=host.headers
    )
    assert many.status_code == 200 and {p["status"] for p in many.json()} == {"approved"}
    missing = client.post(
        f"{URL}/participants/deny", json={"names": ["p2", "nobody"]}, headers=host.headers
    )
    assert missing.status_code == 404 and missing.json()["missing"] == ["nobody"]
    too_many = client.post(
        f"{URL}/participants/deny", json={"names": ["x"] * 1001}, headers=host.headers
    )
    assert too_many.status_code == 422


def test_invite_takes_the_allow_list_by_address_or_domain(client, host, person):
    ready_competition(
        client, host.headers, registration="invite", allow=["ada@example.org", "@Uni.Example.EDU"]
    )
    ada = person("ada", "ada@example.org")
    student = person("stu", "stu@cs.uni.example.edu")  # a subdomain of an allowed domain
    stranger = person("eve", "eve@elsewhere.org")
    assert _join(client, ada).status_code == 201
    assert _join(client, student).status_code == 201
    refused = _join(client, stranger)
    assert refused.status_code == 403 and refused.json()["code"] == "registration_refused"
    assert submit(client, stranger.headers, PERFECT).json()["code"] == "not_registered"


def test_an_invitation_link_has_a_count_and_an_expiry(client, host, person, session_factory):
    ready_competition(client, host.headers, registration="invite")
    link = client.post(f"{URL}/invitations", json={"uses": 2, "days": 7}, headers=host.headers)
    assert link.status_code == 201, link.text
    secret = link.json()["url"].split("invitation=")[1]
    first, second, third = (person(n, f"{n}@example.org") for n in ("ann", "ben", "cat"))
    assert _join(client, first, invitation=secret).status_code == 201
    assert _join(client, second, invitation=secret).status_code == 201
    used_up = _join(client, third, invitation=secret)
    assert used_up.status_code == 403 and "used up" in used_up.json()["detail"]

    other = client.post(f"{URL}/invitations", json={}, headers=host.headers).json()["url"]
    with session_factory() as session:
        session.execute(
            update(LinkSecret).values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
        session.commit()
    expired = _join(client, third, invitation=other.split("invitation=")[1])
    assert expired.status_code == 403
    assert _join(client, third, invitation="pdl_made-up").status_code == 403


def test_an_invitation_of_another_competition_does_not_open_this_one(client, host, person):
    ready_competition(client, host.headers, registration="invite")
    ready_competition(client, host.headers, "other", registration="invite")
    link = client.post(f"{API}/competitions/other/invitations", json={}, headers=host.headers)
    secret = link.json()["url"].split("invitation=")[1]
    assert _join(client, person("ann", "ann@example.org"), invitation=secret).status_code == 403


def test_the_deny_list_applies_in_every_mode(client, host, person):
    ready_competition(client, host.headers, deny=["@spam.example", "bad@example.org"])
    ready_competition(
        client,
        host.headers,
        "invited",
        registration="invite",
        allow=["@spam.example"],
        deny=["@spam.example"],
    )
    spammer = person("spam", "x@mail.spam.example")
    bad = person("bad", "bad@example.org")
    fine = person("fine", "fine@example.org")
    for caller in (spammer, bad):
        refused = _join(client, caller)
        assert refused.status_code == 403 and refused.json()["code"] == "registration_refused"
        assert submit(client, caller.headers, PERFECT).status_code == 403
    assert (
        client.post(f"{API}/competitions/invited/join", headers=spammer.headers).status_code == 403
    )
    assert _join(client, fine).status_code == 201
    assert submit(client, fine.headers, PERFECT).status_code == 202


def test_lists_are_validated_and_bounded(client, host):
    ready_competition(client, host.headers)
    bad = client.patch(URL, json={"deny": ["not an address"]}, headers=host.headers)
    assert bad.status_code == 422 and "deny" in bad.text
    long = client.patch(
        URL, json={"allow": [f"u{i}@x.org" for i in range(1001)]}, headers=host.headers
    )
    assert long.status_code == 422
    mode = client.patch(URL, json={"registration": "closed"}, headers=host.headers)
    assert mode.status_code == 422
    ok = client.patch(URL, json={"allow": ["Ada@Example.org"]}, headers=host.headers)
    assert ok.json()["registration"] == "open"


def test_rules_are_accepted_to_join_and_again_when_they_change(client, host, alice, bob):
    ready_competition(client, host.headers, rules="# Rules\n\nOne account per person.")
    needs = _join(client, alice)
    assert needs.status_code == 409
    assert needs.json()["code"] == "rules_not_accepted"
    assert needs.json()["rules_url"] == f"/c/{SLUG}/rules"
    assert _join(client, alice, accept_rules=True).status_code == 201
    # Accepting first, then joining, works too.
    accepted = client.post(f"{URL}/rules/accept", headers=bob.headers)
    assert accepted.status_code == 200 and accepted.json()["rules_version"] == 1
    assert submit(client, alice.headers, PERFECT).status_code == 202
    assert submit(client, bob.headers, PERFECT).status_code == 202

    changed = client.patch(
        URL, json={"rules": "# Rules\n\nNo private sharing."}, headers=host.headers
    )
    assert changed.json()["rules_version"] == 2
    # The same text again is no change.
    assert (
        client.patch(
            URL, json={"rules": "# Rules\n\nNo private sharing."}, headers=host.headers
        ).json()["rules_version"]
        == 2
    )
    stale = submit(client, alice.headers, PERFECT)
    assert stale.status_code == 409
    body = stale.json()
    assert body["code"] == "rules_not_accepted" and body["rules_url"] == f"/c/{SLUG}/rules"
    assert body["accepted_version"] == 1 and body["rules_version"] == 2
    assert "changed" in body["detail"]
    again = client.post(f"{URL}/rules/accept", headers=alice.headers)
    assert again.json()["rules_version"] == 2
    assert submit(client, alice.headers, PERFECT).status_code == 202
    mine = client.get(f"{URL}/registration", headers=alice.headers).json()
    assert mine["status"] == "approved" and mine["current_rules_version"] == 2


def test_a_competition_without_rules_has_none_to_accept(client, host, alice):
    ready_competition(client, host.headers)
    assert client.post(f"{URL}/rules/accept", headers=alice.headers).status_code == 409


def test_the_kaggle_client_hears_kaggles_403_for_unaccepted_rules(client, host, alice):
    import base64

    ready_competition(client, host.headers, rules="Be nice.")
    basic = base64.b64encode(f"alice:{alice.token}".encode()).decode()
    answer = client.post(
        f"{API}/competitions.CompetitionApiService/StartSubmissionUpload",
        json={
            "competitionName": SLUG,
            "contentLength": 10,
            "lastModifiedEpochSeconds": 0,
            "fileName": "s.csv",
        },
        headers={"Authorization": f"Basic {basic}"},
    )
    assert answer.status_code == 403
    assert answer.json() == {
        "code": 403,
        "message": "You must accept this competition's rules before you'll be able to submit.",
    }


def test_participants_list_and_csv_are_for_hosts_with_neutralised_cells(client, host, person):
    ready_competition(client, host.headers, registration="approval")
    formula = person("formula", "f@example.org")
    assert _join(client, formula, message='=HYPERLINK("http://evil")').status_code == 202
    listed = client.get(f"{URL}/participants", headers=host.headers)
    assert listed.json()[0]["email"] == "f@example.org"
    assert listed.headers["x-total-count"] == "1"
    sheet = client.get(f"{URL}/participants.csv", headers=host.headers)
    assert sheet.status_code == 200 and sheet.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(sheet.text)))
    assert rows[0]["name"] == "formula" and rows[0]["status"] == "pending"
    assert rows[0]["message"].startswith("'=")


def test_every_hosts_route_refuses_participants_and_strangers(client, host, alice, bob, make_user):
    ready_competition(client, host.headers, registration="approval")
    assert _join(client, alice).status_code == 202
    other_host = make_user("other", organiser=True)
    for caller in (alice, bob, other_host):
        for method, url, body in (
            ("get", f"{URL}/participants", None),
            ("get", f"{URL}/participants.csv", None),
            ("post", f"{URL}/participants/alice/approve", None),
            ("post", f"{URL}/participants/alice/deny", None),
            ("post", f"{URL}/participants/approve", {"names": ["alice"]}),
            ("post", f"{URL}/participants/deny", {"names": ["alice"]}),
            ("post", f"{URL}/invitations", {}),
            ("post", f"{URL}/announcements", {"subject": "s", "body": "b"}),
        ):
            answer = client.request(method, url, json=body, headers=caller.headers)
            assert answer.status_code == 403, (caller.name, method, url)
        assert client.get(f"{URL}/participants").status_code == 401
    # A participant's own routes are their own: bob has no registration to read.
    assert client.get(f"{URL}/registration", headers=bob.headers).status_code == 404
    assert client.get(f"{URL}/registration", headers=alice.headers).json()["status"] == "pending"
    # Hosts do not take part.
    assert _join(client, host).status_code == 403
    still = client.get(f"{URL}/participants", headers=host.headers).json()
    assert [(p["name"], p["status"]) for p in still] == [("alice", "pending")]


def test_rules_cleared_need_no_acceptance(client, host, alice):
    ready_competition(client, host.headers, rules="Be nice.")
    assert submit(client, alice.headers, PERFECT).status_code == 409
    client.patch(URL, json={"rules": ""}, headers=host.headers)
    assert submit(client, alice.headers, PERFECT).status_code == 202


def test_a_team_invitation_is_no_way_around_approval(client, host, alice, bob):
    ready_competition(client, host.headers, registration="approval")
    assert _join(client, alice).status_code == 202
    client.post(f"{URL}/participants/alice/approve", headers=host.headers)
    assert _join(client, alice).status_code == 201  # her team
    invite = {"user": "bob"}
    refused = client.post(f"{URL}/team/invitations", json=invite, headers=alice.headers)
    assert refused.status_code == 409 and "join first" in refused.json()["detail"]
    assert _join(client, bob).status_code == 202
    client.post(f"{URL}/participants/bob/approve", headers=host.headers)
    sent = client.post(f"{URL}/team/invitations", json=invite, headers=alice.headers)
    assert sent.status_code == 201, sent.text


def test_a_request_left_pending_is_let_in_once_the_competition_opens(client, host, alice):
    ready_competition(client, host.headers, registration="approval", rules="Be nice.")
    assert _join(client, alice, accept_rules=True).status_code == 202
    client.patch(URL, json={"registration": "open"}, headers=host.headers)
    assert submit(client, alice.headers, PERFECT).status_code == 202
    assert _join(client, alice).status_code in (200, 201)
    mine = client.get(f"{URL}/registration", headers=alice.headers).json()
    assert mine["status"] == "approved"
