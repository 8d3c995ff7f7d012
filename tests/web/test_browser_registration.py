"""Who takes part, in a real browser (Playwright, as tests/web/test_browser.py) against a real
uvicorn server with a real SMTP server (aiosmtpd) and a real webhook receiver, both on loopback:
a participant asks to join an approval competition and accepts its rules; the host approves
on the Participants tab; the participant finds the approval mail, submits; the host's receiver
gets a submission.scored delivery whose signature the standardwebhooks library verifies."""

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from standardwebhooks.webhooks import Webhook

from app.models import Role
from tests.helpers import KEY, PERFECT
from tests.live_server import HTTP, seeded_with_people, uvicorn_server
from tests.mail.smtp import Inbox
from tests.web.test_browser import CHROMIUM, PASSWORD, _file, _free_port, chromium, shot, sync_api  # noqa: F401
from tests.webhooks.receiver import Receiver


@dataclass
class World:
    url: str
    tokens: dict[str, str]
    inbox: Inbox
    receiver: Receiver

    def api(self, method: str, path: str, user: str, **kw: Any):  # type: ignore[no-untyped-def]
        headers = {"Authorization": f"Bearer {self.tokens[user]}"}
        return HTTP.request(method, f"{self.url}/api/v1{path}", headers=headers, **kw)


def _eventually(found: Callable[[], Any], what: str, seconds: float = 60.0) -> Any:
    """Wait for the event itself (a mail, a delivery), not for a fixed time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} never came")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("registration-browser")
    secret = "browser-registration-secret-0123456789abcdef"
    people = (("host", Role.organiser), ("alice", Role.participant))
    url, tokens = seeded_with_people(root, secret, people, PASSWORD)
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    smtp.start()
    receiver = Receiver()
    port = _free_port()
    env = {
        "PODIUM_DATABASE_URL": url,
        "PODIUM_DATA_DIR": str(root / "data"),
        "PODIUM_SECRET_KEY": secret,
        "PODIUM_SMTP_URL": f"smtp://127.0.0.1:{smtp.port}",
        "PODIUM_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "PODIUM_WEBHOOK_ALLOW_PRIVATE": "true",  # the receiver is on loopback
    }
    try:
        with uvicorn_server(root, port, env) as base:
            yield World(base, tokens, inbox, receiver)
    finally:
        receiver.close()
        smtp.stop()


def _page(world: World, browser: Any, name: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(f"{world.url}/signin")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("form[action='/signin'] button[type=submit] >> nth=0")
    page.wait_for_selector(f"text=Signed in as {name}")
    return page


@pytest.mark.slow
def test_join_with_rules_approval_mail_submission_and_signed_webhook(world, chromium):  # noqa: F811
    body = {
        "slug": "club",
        "title": "Club",
        "metric": {"name": "roc_auc"},
        "registration": "approval",
        "rules": "# Rules\n\nOne account per person.",
    }
    assert world.api("POST", "/competitions", "host", json=body).status_code == 201
    files = {"file": ("key.csv", KEY, "text/csv")}
    assert world.api("PUT", "/competitions/club/answer-key", "host", files=files).status_code == 201
    hook = world.api(
        "POST",
        "/competitions/club/webhooks",
        "host",
        json={"url": world.receiver.url, "events": ["submission.scored"]},
    )
    assert hook.status_code == 201, hook.text
    signing_secret = hook.json()["secret"]

    # The participant asks to join, accepting the rules.
    alice = _page(world, chromium, "alice")
    alice.goto(f"{world.url}/c/club/team")
    alice.fill("#join textarea[name=message]", "I would like to take part")
    alice.check("#join input[name=accept_rules]")
    alice.click("#join button[type=submit]")
    alice.wait_for_selector("text=Your request to join was sent to the hosts")
    shot(alice, "join-approval-pending")

    # The host approves on the Participants tab.
    host = _page(world, chromium, "host")
    host.goto(f"{world.url}/c/club/host/participants")
    host.check("tr[data-name=alice] input[name=name]")
    shot(host, "participants-tab")
    host.click("button[value=approve]")
    host.wait_for_selector("text=1 participant(s) approved")

    # The approval mail arrives at the real SMTP server.
    def approval() -> Any:
        return [
            m for m in world.inbox.messages
            if m["To"] == "alice@example.org" and "approved" in str(m["Subject"])
        ]  # fmt: skip

    (mail,) = _eventually(approval, "the approval mail")
    text = mail.get_content()
    assert "/unsubscribe?token=" in text and world.url in text

    # She submits on her page; it is scored.
    alice.goto(f"{world.url}/c/club/submissions")
    alice.set_input_files("#upload input[type=file]", _file("model.csv", PERFECT))
    alice.click("#upload button[type=submit]")
    row = alice.locator("#submissions tbody tr").first
    sync_api.expect(row.locator(".status")).to_contain_text("scored")

    # The host's receiver gets the signed delivery; the library verifies it.
    got = _eventually(lambda: world.receiver.received, "the webhook delivery")[0]
    payload = Webhook(signing_secret).verify(got.body, got.headers)
    assert payload["type"] == "submission.scored"
    assert payload["data"]["competition"] == "club" and payload["data"]["team"] == "alice"
    assert json.loads(got.body)["data"]["status"] == "scored"
