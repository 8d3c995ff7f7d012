"""Webhooks: endpoints per competition, deliveries signed per Standard Webhooks (verified by the
reference library), retried after 500s and a timeout, no redirect followed, the endpoint
disabled after repeated failure and its hosts told; no SSRF; nothing of a blind phase's scores."""

import json
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from app.dispatch.worker import process_once
from app.models import Event, OutboundMail
from app.webhooks.delivery import SCHEDULE, deliver_due
from tests.helpers import API, PERFECT, ready_competition, submit

SLUG = "churn"
URL = f"{API}/competitions/{SLUG}"
LONG_OPEN = (datetime.now(UTC) - timedelta(days=3)).isoformat()


def _hook(client, host, url, events=("submission.scored",)):  # type: ignore[no-untyped-def]
    made = client.post(
        f"{URL}/webhooks", json={"url": url, "events": list(events)}, headers=host.headers
    )
    assert made.status_code == 201, made.text
    return made.json()


def test_a_scored_submission_is_delivered_signed(
    client, host, alice, receiver, session_factory, settings
):
    ready_competition(client, host.headers, start=LONG_OPEN)
    made = _hook(client, host, receiver.url)
    assert made["secret"].startswith("whsec_")
    listed = client.get(f"{URL}/webhooks", headers=host.headers).json()
    assert "secret" not in listed[0]  # shown once
    assert submit(client, alice.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)
    (got,) = receiver.received
    payload = Webhook(made["secret"]).verify(got.body, got.headers)
    assert payload["type"] == "submission.scored"
    assert payload["data"]["competition"] == SLUG and payload["data"]["public_score"] == 1.0
    assert "private_score" not in json.dumps(payload)
    assert got.headers["webhook-id"].startswith("msg_")
    deliveries = client.get(f"{URL}/webhooks/{made['id']}/deliveries", headers=host.headers).json()
    assert (
        deliveries[0]["status"] == "delivered" and deliveries[0]["tries"][0]["status_code"] == 200
    )


def test_a_blind_phases_payload_holds_no_score(
    client, host, alice, receiver, session_factory, settings
):
    end = (datetime.now(UTC) + timedelta(days=30)).isoformat()
    ready_competition(
        client,
        host.headers,
        phases=[{"name": "final", "board": "blind", "start": LONG_OPEN, "end": end}],
    )
    made = _hook(client, host, receiver.url)
    assert submit(client, alice.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)
    (got,) = receiver.received
    payload = Webhook(made["secret"]).verify(got.body, got.headers)
    assert payload["data"]["status"] == "scored"
    assert not any("score" in key for key in payload["data"] if key != "status")
    assert b"1.0" not in got.body and b'score"' not in got.body.replace(b"scored", b"")


def test_retries_after_500s_and_a_timeout_then_delivered(
    client, host, alice, receiver, session_factory, settings
):
    ready_competition(client, host.headers, start=LONG_OPEN)
    made = _hook(client, host, receiver.url)
    receiver.script = [500, 503, "stall"]
    receiver.stall_seconds = 2.5  # beyond the sender's 1 s
    assert submit(client, alice.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)  # the first attempt: 500
    at = datetime.now(UTC)
    for step in SCHEDULE[:3]:
        at += timedelta(seconds=step + 1)
        deliver_due(session_factory, settings, now=lambda at=at: at)
    (delivery,) = client.get(f"{URL}/webhooks/{made['id']}/deliveries", headers=host.headers).json()
    assert delivery["status"] == "delivered" and delivery["attempts"] == 4
    tries = delivery["tries"]
    assert [t["status_code"] for t in tries] == [500, 503, None, 200]
    assert "timed out" in tries[2]["error"]
    # Each attempt carried the same webhook-id: a receiver can drop repeats.
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1
    assert len(receiver.received) == 4


def test_no_redirect_is_followed(client, host, alice, receiver, session_factory, settings):
    ready_competition(client, host.headers, start=LONG_OPEN)
    made = _hook(client, host, receiver.url)
    receiver.script = [302]
    assert submit(client, alice.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)
    assert [r.path for r in receiver.received] == ["/hook"]  # not /moved
    (delivery,) = client.get(f"{URL}/webhooks/{made['id']}/deliveries", headers=host.headers).json()
    assert (
        delivery["status"] == "pending" and "redirects are not followed" in delivery["last_error"]
    )


def test_an_endpoint_failing_again_and_again_is_disabled_and_its_hosts_told(
    client, person, alice, receiver, session_factory, settings
):
    settings = settings.model_copy(update={"webhook_disable_after": 3})
    host = person("hostess", "hostess@example.org", organiser=True)
    ready_competition(client, host.headers, start=LONG_OPEN)
    made = _hook(client, host, receiver.url)
    receiver.script = [500] * 10
    assert submit(client, alice.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)
    at = datetime.now(UTC)
    for step in SCHEDULE[:2]:
        at += timedelta(seconds=step + 1)
        deliver_due(session_factory, settings, now=lambda at=at: at)
    (endpoint,) = client.get(f"{URL}/webhooks", headers=host.headers).json()
    assert (
        endpoint["disabled_at"] is not None and "3 attempts failed" in endpoint["disabled_reason"]
    )
    process_once(session_factory, settings)  # the host hears of it
    with session_factory() as session:
        mails = session.scalars(
            select(OutboundMail.subject).where(OutboundMail.to_addr == "hostess@example.org")
        ).all()
        assert any("webhook endpoint was disabled" in m for m in mails)
    # Nothing more goes to a disabled endpoint; enabling it again resumes.
    assert submit(client, alice.headers, PERFECT).status_code == 202
    process_once(session_factory, settings)
    assert len(receiver.received) == 3
    enabled = client.post(f"{URL}/webhooks/{made['id']}/enable", headers=host.headers)
    assert enabled.json()["disabled_at"] is None


def test_private_destinations_are_refused_unless_allowed(
    client, host, alice, session_factory, settings
):
    ready_competition(client, host.headers, start=LONG_OPEN)
    client.app.state.settings = settings.model_copy(update={"webhook_allow_private": False})
    for url in (
        "http://127.0.0.1:8080/hook",
        "http://[::1]/hook",
        "http://10.1.2.3/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::ffff:127.0.0.1]/x",
        "http://localhost/hook",
        "http://0.0.0.0/hook",
    ):
        refused = client.post(
            f"{URL}/webhooks", json={"url": url, "events": ["phase.opened"]}, headers=host.headers
        )
        assert refused.status_code == 422, url
        assert refused.json()["code"] == "webhook_url_refused"
    for url in ("ftp://example.org/x", "http://user:pw@example.org/x", "not a url", "http:///x"):
        assert (
            client.post(
                f"{URL}/webhooks",
                json={"url": url, "events": ["phase.opened"]},
                headers=host.headers,
            ).status_code
            == 422
        )
    unknown = client.post(
        f"{URL}/webhooks",
        json={"url": "https://example.org/h", "events": ["everything"]},
        headers=host.headers,
    )
    assert unknown.status_code == 422

    # A name that resolves to loopback is refused when the delivery is made (the address
    # connected to is the address checked): registered while allowed, sent while not.
    client.app.state.settings = settings
    made = _hook(client, host, "http://localhost:9/hook")
    assert submit(client, alice.headers, PERFECT).status_code == 202
    strict = settings.model_copy(update={"webhook_allow_private": False})
    process_once(session_factory, strict)
    (delivery,) = client.get(f"{URL}/webhooks/{made['id']}/deliveries", headers=host.headers).json()
    assert delivery["last_error"].startswith("refused: localhost resolves to")


def test_every_webhook_route_refuses_other_users(client, host, alice, receiver):
    ready_competition(client, host.headers, start=LONG_OPEN)
    made = _hook(client, host, receiver.url)
    hook = f"{URL}/webhooks/{made['id']}"
    for method, url, body in (
        ("post", f"{URL}/webhooks", {"url": receiver.url, "events": ["phase.opened"]}),
        ("get", f"{URL}/webhooks", None),
        ("get", f"{hook}/deliveries", None),
        ("post", f"{hook}/enable", None),
        ("delete", hook, None),
    ):
        answer = client.request(method, url, json=body, headers=alice.headers)
        assert answer.status_code == 403, (method, url)
    # Another competition's host cannot reach this one's endpoint through theirs.
    ready_competition(client, host.headers, "other", start=LONG_OPEN)
    assert (
        client.get(
            f"{API}/competitions/other/webhooks/{made['id']}/deliveries", headers=host.headers
        ).status_code
        == 404
    )
    assert client.delete(hook, headers=host.headers).status_code == 204


def test_the_stream_holds_one_event_per_outcome(client, host, alice, session_factory):
    ready_competition(client, host.headers, start=LONG_OPEN)
    assert submit(client, alice.headers, PERFECT).status_code == 202
    with session_factory() as session:
        kinds = session.scalars(select(Event.kind).where(Event.kind.like("submission.%"))).all()
    assert kinds == ["submission.scored"]
