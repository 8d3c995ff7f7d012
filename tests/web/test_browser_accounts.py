"""Joining a server in a real browser (Debian's chromium, Playwright) against a real uvicorn
server that mails through a real SMTP server (aiosmtpd) and signs in through a real OpenID
provider (npm's oidc-provider under node), both started by the test: a newcomer signs up, reads
the verification mail, verifies, signs out, resets the password from a second mail, signs in and
submits; another signs in through the provider; an admin disables a user whose next request
then fails."""

import email
import email.policy
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from app.models import Role
from tests.accounts.oidc_provider import login_name, oidc_provider
from tests.conftest import skip_or_fail
from tests.helpers import KEY, PERFECT
from tests.live_server import HTTP, free_port, seeded_with_people, uvicorn_server
from tests.mail.smtp import Inbox
from tests.web.test_browser import chromium, shot  # noqa: F401 - fixtures, shared

CHROMIUM = "/usr/bin/chromium"
PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new passphrase"

if not Path(CHROMIUM).exists():
    skip_or_fail(f"browser tests need {CHROMIUM} (apt-get install chromium; .ci/run installs it)")
try:
    import playwright.sync_api as sync_api
except ImportError:
    skip_or_fail("browser tests need Playwright (pip install -e '.[test]')")

pytestmark = [pytest.mark.browser, pytest.mark.slow]
LINK = re.compile(r"https?://\S+\?token=pdl_[A-Za-z0-9_-]+")


def link_in(message: email.message.EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    found = LINK.search(body.get_content())
    assert found, body.get_content()
    return found.group(0)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:  # type: ignore[type-arg]
    root = tmp_path_factory.mktemp("accounts-browser")
    secret = "browser-accounts-secret-key-0123456789abcdef"
    people = (("host", Role.organiser), ("root_admin", Role.admin), ("bob", Role.participant))
    url, tokens = seeded_with_people(root, secret, people, PASSWORD)
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    client = {
        "client_id": "podium",
        "client_secret": "podium-client-secret-0123456789",
        "redirect_uris": [f"{base}/signin/oidc/uni/callback"],
    }
    try:
        with oidc_provider(root, [client]) as provider:
            sso = [{"name": "uni", "title": "University", "issuer": provider.issuer,
                    "client_id": client["client_id"], "client_secret": client["client_secret"]}]  # fmt: skip
            env = {
                "PODIUM_DATABASE_URL": url,
                "PODIUM_DATA_DIR": str(root / "data"),
                "PODIUM_SECRET_KEY": secret,
                "PODIUM_SMTP_URL": f"smtp://127.0.0.1:{smtp.port}",
                "PODIUM_SMTP_FROM": "Podium <podium@example.org>",
                "PODIUM_OIDC_PROVIDERS": json.dumps(sso),
                "PODIUM_PUBLIC_URL": base,
            }
            with uvicorn_server(root, port, env):
                yield {"url": base, "tokens": tokens, "inbox": inbox, "provider": provider}
    finally:
        smtp.stop()


@pytest.fixture
def page(chromium):  # type: ignore[no-untyped-def]  # noqa: F811
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(20_000)
    yield context.new_page()
    context.close()


def _api(world, method: str, path: str, user: str, **kw):  # type: ignore[no-untyped-def]
    headers = {"Authorization": f"Bearer {world['tokens'][user]}"}
    return HTTP.request(method, f"{world['url']}/api/v1{path}", headers=headers, **kw)


def _sign_in(page, url: str, name: str, password: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{url}/signin")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.click("form[action='/signin'] button[type=submit] >> nth=0")


def test_a_newcomer_signs_up_verifies_resets_and_submits(world, page):
    url, inbox = world["url"], world["inbox"]
    body = {"slug": "newcomers", "title": "Newcomers", "metric": {"name": "roc_auc"}}
    assert _api(world, "POST", "/competitions", "host", json=body).status_code == 201
    key = {"file": ("key.csv", KEY, "text/csv")}
    assert (
        _api(world, "PUT", "/competitions/newcomers/answer-key", "host", files=key).status_code
        == 201
    )

    page.goto(url)
    page.click("text=Sign up")
    page.fill("input[name=name]", "ada")
    page.fill("input[name=email]", "ada@example.org")
    page.fill("input[name=password]", PASSWORD)
    shot(page, "signup")
    page.click("form[action='/signup'] button[type=submit]")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("Check your mail")

    # Signed in before verifying: browsing works, taking part waits for the link.
    _sign_in(page, url, "ada", PASSWORD)
    page.goto(f"{url}/account")
    sync_api.expect(page.locator("#verify-first")).to_be_visible()

    page.goto(link_in(inbox.wait_for("ada@example.org", 1)))
    page.click("text=Verify my address")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("is verified")
    assert page.locator("#verify-first").count() == 0

    page.click("text=Sign out")
    page.goto(f"{url}/signin")
    page.click("text=Forgot your password?")
    page.fill("input[name=email]", "ada@example.org")
    page.click("form[action='/password-reset'] button[type=submit]")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("If an account has this address")
    page.goto(link_in(inbox.wait_for("ada@example.org", 2)))
    page.fill("input[name=password]", NEW_PASSWORD)
    page.click("form[action='/password-reset/confirm'] button[type=submit]")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("Your password is set")

    _sign_in(page, url, "ada", NEW_PASSWORD)
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("Signed in as ada")
    page.goto(f"{url}/c/newcomers/submissions")
    page.set_input_files(
        "#upload input[type=file]", {"name": "m.csv", "mimeType": "text/csv", "buffer": PERFECT}
    )
    page.click("#upload button[type=submit]")
    row = page.locator("#submissions tbody tr").first
    sync_api.expect(row.locator(".status")).to_contain_text("scored")
    shot(page, "newcomer-submitted")


def test_a_person_signs_in_through_the_universitys_provider(world, page):
    url = world["url"]
    page.goto(f"{url}/signin")
    page.click("text=Sign in with University")
    login = login_name(
        "u-4711", email="grace@uni.example.org", email_verified=True, username="grace"
    )
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "anything")
    page.click("button[type=submit]")
    # The provider asks for consent once.
    if page.locator("input[name=login]").count() == 0 and not page.url.startswith(url):
        page.click("button[type=submit]")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("Signed in as grace")
    page.goto(f"{url}/account")
    sync_api.expect(page.locator("body")).to_contain_text("grace@uni.example.org")
    sync_api.expect(page.locator("body")).to_contain_text("uni")
    shot(page, "signed-in-through-provider")


def test_an_admin_disables_a_user_whose_next_request_fails(world, chromium):  # noqa: F811
    url = world["url"]
    contexts = [chromium.new_context() for _ in range(2)]
    bob, admin = (c.new_page() for c in contexts)
    try:
        _sign_in(bob, url, "bob", PASSWORD)
        sync_api.expect(bob.locator(".flash.ok")).to_contain_text("Signed in as bob")
        assert _api(world, "GET", "/me", "bob").status_code == 200

        _sign_in(admin, url, "root_admin", PASSWORD)
        admin.click("text=Admin")
        admin.fill("input[name=q]", "bob")
        admin.click("form[action='/admin'] button[type=submit]")
        admin.locator("#users tr:has-text('bob') button:has-text('Disable')").click()
        sync_api.expect(admin.locator(".flash.ok")).to_contain_text("bob is disabled")
        shot(admin, "admin-disabled-bob")

        bob.goto(f"{url}/account")
        assert "/signin" in bob.url
        assert _api(world, "GET", "/me", "bob").status_code == 401
    finally:
        for context in contexts:
            context.close()
