"""Notifications: events become notices and mails by each user's preferences (the issue's
defaults), after the commit, once whatever the number of readers; every mail's unsubscribe link
works without signing in."""

import re
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.dispatch.worker import process_once
from app.models import Notification, OutboundMail
from tests.helpers import API, PERFECT, ready_competition, submit

SLUG = "churn"
# Opened days ago: the time sweep has no news of it (tests/events has the moments).
LONG_OPEN = (datetime.now(UTC) - timedelta(days=3)).isoformat()
URL = f"{API}/competitions/{SLUG}"


def _mails(session_factory, to: str) -> list[OutboundMail]:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        return list(
            session.scalars(
                select(OutboundMail).where(OutboundMail.to_addr == to).order_by(OutboundMail.id)
            )
        )


def test_defaults_and_changing_them(client, alice):
    mine = client.get(f"{API}/me/notifications", headers=alice.headers).json()
    assert mine["mail"] is True
    assert mine["choices"] == {
        "submission": False,
        "team_invitation": True,
        "phase_opened": True,
        "phase_closing": True,
        "board_revealed": True,
        "registration": True,
        "announcements": True,
        "registration_requests": True,
        "scorer_failures": True,
    }
    changed = client.put(
        f"{API}/me/notifications",
        json={"choices": {"submission": True, "announcements": False}},
        headers=alice.headers,
    ).json()
    assert changed["choices"]["submission"] is True and changed["choices"]["announcements"] is False
    assert changed["choices"]["phase_opened"] is True  # untouched
    unknown = client.put(
        f"{API}/me/notifications", json={"choices": {"everything": True}}, headers=alice.headers
    )
    assert unknown.status_code == 422
    assert client.get(f"{API}/me/notifications").status_code == 401


def test_a_request_and_its_decision_reach_host_and_participant_once(
    client, person, session_factory, settings
):
    host = person("hostess", "hostess@example.org", organiser=True)
    ada = person("ada", "ada@example.org")
    ready_competition(client, host.headers, registration="approval", start=LONG_OPEN)
    assert client.post(f"{URL}/join", headers=ada.headers).status_code == 202
    assert _mails(session_factory, "hostess@example.org") == []  # nothing inside the request
    process_once(session_factory, settings)
    process_once(session_factory, settings)  # a second reader pass finds nothing new
    (request,) = _mails(session_factory, "hostess@example.org")
    assert "ada asks to take part" in request.subject

    assert client.post(f"{URL}/participants/ada/approve", headers=host.headers).status_code == 200
    process_once(session_factory, settings)
    (approved,) = _mails(session_factory, "ada@example.org")
    assert "approved" in approved.subject
    assert "/unsubscribe?token=" in approved.body
    recent = client.get(f"{API}/me/notifications/recent", headers=ada.headers).json()
    assert [n["kind"] for n in recent] == ["registration.decided"]


def test_a_scored_submission_is_heard_of_only_when_chosen(
    client, person, session_factory, settings
):
    host = person("hostess", "hostess@example.org", organiser=True)
    ada = person("ada", "ada@example.org")
    ready_competition(client, host.headers, start=LONG_OPEN)
    assert submit(client, ada.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)
    assert _mails(session_factory, "ada@example.org") == []  # off by default
    client.put(
        f"{API}/me/notifications", json={"choices": {"submission": True}}, headers=ada.headers
    )
    assert submit(client, ada.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)
    (mail,) = _mails(session_factory, "ada@example.org")
    assert "was scored" in mail.subject
    assert "1.0" not in mail.body  # no score in a mail: the page shows each reader theirs


def test_announcements_are_news_mailed_to_those_who_want_them_and_limited(
    client, person, session_factory, settings
):
    host = person("hostess", "hostess@example.org", organiser=True)
    ada, ben, cat = (person(n, f"{n}@example.org") for n in ("ada", "ben", "cat"))
    ready_competition(client, host.headers, start=LONG_OPEN)
    for caller in (ada, ben, cat):
        assert client.post(f"{URL}/join", headers=caller.headers).status_code == 201
    assert submit(client, ada.headers, PERFECT).status_code == 202
    client.put(f"{API}/me/notifications", json={"mail": False}, headers=cat.headers)

    posted = client.post(
        f"{URL}/announcements",
        json={"subject": "New data", "body": "train.csv was fixed.", "to": {"submitted": False}},
        headers=host.headers,
    )
    assert posted.status_code == 201, posted.text
    process_once(session_factory, settings)
    assert _mails(session_factory, "ada@example.org") == []  # she submitted
    assert [m.subject for m in _mails(session_factory, "ben@example.org")] == ["Churn: New data"]
    assert _mails(session_factory, "cat@example.org") == []  # no mail at all, by choice
    with session_factory() as session:
        notices = session.scalars(select(Notification.user_id)).all()
    assert len(notices) == 2  # ben's and cat's (on the page, whatever the mail)
    news = client.get(f"{URL}/announcements", headers=ada.headers).json()
    assert news[0]["subject"] == "New data"

    every = {"subject": "x", "body": "y", "to": "all"}
    for _ in range(settings.announcements_per_day - 1):
        assert (
            client.post(f"{URL}/announcements", json=every, headers=host.headers).status_code == 201
        )
    flood = client.post(f"{URL}/announcements", json=every, headers=host.headers)
    assert flood.status_code == 429 and flood.json()["code"] == "announcements_limited"
    bad = client.post(
        f"{URL}/announcements", json={"subject": "", "body": "y"}, headers=host.headers
    )
    assert bad.status_code == 422
    nophase = client.post(
        f"{URL}/announcements",
        json={"subject": "s", "body": "b", "to": {"phase": "nope"}},
        headers=host.headers,
    )
    assert nophase.status_code in (422, 429)


def test_unsubscribe_works_without_signing_in(client, person, session_factory, settings):
    host = person("hostess", "hostess@example.org", organiser=True)
    ada = person("ada", "ada@example.org")
    ready_competition(client, host.headers, start=LONG_OPEN)
    assert client.post(f"{URL}/join", headers=ada.headers).status_code == 201
    client.post(f"{URL}/announcements", json={"subject": "one", "body": "b"}, headers=host.headers)
    process_once(session_factory, settings)
    (mail,) = _mails(session_factory, "ada@example.org")
    links = re.findall(r"/unsubscribe\?token=(\S+)", mail.body)
    kind_link = links[0]
    anonymous = client  # no Authorization header, no session cookie
    page = anonymous.get(f"/unsubscribe?token={kind_link}")
    assert page.status_code == 200 and "announcements from the hosts" in page.text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    done = anonymous.post("/unsubscribe", data={"token": kind_link, "csrf_token": csrf})
    assert done.status_code == 200 and "will not receive" in done.text, done.text[-3000:]
    settings_now = client.get(f"{API}/me/notifications", headers=ada.headers).json()
    assert settings_now["choices"]["announcements"] is False and settings_now["mail"] is True

    client.post(f"{URL}/announcements", json={"subject": "two", "body": "b"}, headers=host.headers)
    process_once(session_factory, settings)
    assert len(_mails(session_factory, "ada@example.org")) == 1
    # A forged or cut token is refused, naming no user.
    forged = kind_link.rsplit(".", 1)[0] + ".AAAA"
    assert anonymous.get(f"/unsubscribe?token={forged}").status_code == 422
    assert (
        anonymous.post("/unsubscribe", data={"token": forged, "csrf_token": csrf}).status_code
        == 422
    )
