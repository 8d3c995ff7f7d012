"""The web app in a real browser: Debian's chromium driven by Playwright against a real uvicorn
server (its own SQLite database, the in-server scoring thread). Each test saves a screenshot
under tests/artifacts/. Skipped where chromium or Playwright is missing; under CI=true that fails."""

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.auth.service import create_user, set_password
from app.db import make_engine, make_session_factory, unit_of_work
from app.models import Role
from tests.conftest import skip_or_fail
from tests.databases import migrated
from tests.helpers import KEY, PERFECT, PUBLIC_HALF, csv_bytes, predictions
from tests.live_server import HTTP, wait_until_healthy

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
PASSWORD = "correct horse battery"

if not Path(CHROMIUM).exists():
    skip_or_fail(f"browser tests need {CHROMIUM} (apt-get install chromium; .ci/run installs it)")
try:
    import playwright.sync_api as sync_api
except ImportError:
    skip_or_fail("browser tests need Playwright (pip install -e '.[test]')")


@dataclass
class Server:
    url: str
    tokens: dict[str, str]

    def api(self, method: str, path: str, user: str, **kw):  # type: ignore[no-untyped-def]
        headers = {"Authorization": f"Bearer {self.tokens[user]}"}
        return HTTP.request(method, f"{self.url}/api/v1{path}", headers=headers, **kw)

    def competition(self, slug: str, key: bytes = KEY, **fields) -> None:  # type: ignore[no-untyped-def]
        body = {
            "slug": slug,
            "title": slug.replace("-", " ").title(),
            "metric": {"name": "roc_auc"},
        }
        body.update(fields)
        assert self.api("POST", "/competitions", "host", json=body).status_code == 201
        files = {"file": ("key.csv", key, "text/csv")}
        response = self.api("PUT", f"/competitions/{slug}/answer-key", "host", files=files)
        assert response.status_code == 201, response.text

    def submit(self, slug: str, user: str, content: bytes) -> int:
        files = {"file": ("sub.csv", content, "text/csv")}
        response = self.api("POST", f"/competitions/{slug}/submissions", user, files=files)
        assert response.status_code == 202, response.text
        return response.json()["id"]

    def wait_scored(self, slug: str, user: str) -> list[dict]:
        for _ in range(200):
            rows = self.api("GET", f"/competitions/{slug}/submissions", user).json()
            if all(r["status"] in ("scored", "failed") for r in rows):
                return rows
            time.sleep(0.05)
        raise AssertionError("submissions were not scored")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("browser-server")
    url = f"sqlite:///{root}/podium.db"
    migrated(url)
    secret = "browser-test-secret-key-0123456789abcdef"
    tokens = {}
    engine = make_engine(url)
    with unit_of_work(make_session_factory(engine)) as session:
        for name, role in (
            ("host", Role.organiser),
            ("alice", Role.participant),
            ("bob", Role.participant),
            ("carol", Role.participant),
        ):
            user, tokens[name] = create_user(session, name=name, role=role, secret_key=secret)
            set_password(user, password=PASSWORD)
    engine.dispose()
    port = _free_port()
    env = {
        **os.environ,
        "PODIUM_DATABASE_URL": url,
        "PODIUM_DATA_DIR": str(root / "data"),
        "PODIUM_SECRET_KEY": secret,
        "PODIUM_SCORING_BACKEND": "thread",
        "PODIUM_ENV": "test",
    }
    log = open(root / "server.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(process, base, root / "server.log")
        yield Server(url=base, tokens=tokens)
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--disable-component-update", "--no-first-run"],
        )  # fmt: skip
        yield browser
        browser.close()


@pytest.fixture
def signed_in(server: Server, chromium):  # type: ignore[no-untyped-def]
    """``signed_in("alice")``: a fresh browser context whose page has signed in by the form."""
    contexts = []

    def make(name: str, *, width: int = 1200):  # type: ignore[no-untyped-def]
        context = chromium.new_context(viewport={"width": width, "height": 900})
        context.set_default_timeout(20_000)
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{server.url}/signin")
        page.fill("input[name=name]", name)
        page.fill("input[name=password]", PASSWORD)
        page.click("form[action='/signin'] button[type=submit] >> nth=0")
        page.wait_for_selector(f"text=Signed in as {name}")
        return page

    yield make
    for context in contexts:
        context.close()


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _file(name: str, content: bytes) -> dict:
    return {"name": name, "mimeType": "text/csv", "buffer": content}


def test_upload_a_valid_file_and_watch_it_become_scored_without_reloading(server, signed_in):
    server.competition("watch", deadline=(datetime.now(UTC) + timedelta(days=3)).isoformat())
    page = signed_in("alice")
    page.goto(f"{server.url}/c/watch/submissions")
    page.evaluate("window.__sameDocument = true")
    page.set_input_files("#upload input[type=file]", _file("model.csv", PERFECT))
    page.fill("#upload input[name=description]", "gradient boosting")
    page.click("#upload button[type=submit]")
    row = page.locator("#submissions tbody tr").first
    sync_api.expect(row.locator(".status")).to_contain_text("scored")
    sync_api.expect(row.locator(".public")).to_have_text("1.00000")
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    assert "gradient boosting" in row.inner_text()
    shot(page, "my-submissions-scored")


def test_a_broken_file_is_refused_with_its_reason_on_the_page(server, signed_in):
    server.competition("broken")
    page = signed_in("alice")
    page.goto(f"{server.url}/c/broken/submissions")
    # A wrong header is caught in the browser: nothing is uploaded.
    wrong = csv_bytes(["id", "prediction"], ["a", 0.5])
    page.set_input_files("#upload input[type=file]", _file("wrong.csv", wrong))
    page.click("#upload button[type=submit]")
    sync_api.expect(page.locator(".check-result")).to_contain_text("missing column(s) target")
    assert server.api("GET", "/competitions/broken/submissions", "alice").json() == []
    # A right header over wrong rows is refused by the server when it is scored.
    missing_rows = predictions(a=0.9, b=0.1)
    page.set_input_files("#upload input[type=file]", _file("short.csv", missing_rows))
    page.click("#upload button[type=submit]")
    row = page.locator("#submissions tbody tr").first
    sync_api.expect(row.locator(".status")).to_contain_text("failed")
    reason = row.locator(".error-text").inner_text()
    assert "missing" in reason and "id" in reason, reason
    shot(page, "my-submissions-failed")


def test_select_a_final_submission(server, signed_in):
    server.competition("select", deadline=(datetime.now(UTC) + timedelta(days=3)).isoformat())
    first = server.submit("select", "alice", PUBLIC_HALF)
    server.submit("select", "alice", PERFECT)
    server.wait_scored("select", "alice")
    page = signed_in("alice")
    page.goto(f"{server.url}/c/select/submissions")
    page.locator(f"#submissions tr[data-id='{first}'] button.toggle").click()
    sync_api.expect(page.locator(".flash.ok")).to_contain_text(f"Submission {first} is selected")
    sync_api.expect(page.locator(f"#submissions tr[data-id='{first}'] button.toggle")).to_have_text(
        "★ Selected"
    )
    rows = server.api("GET", "/competitions/select/submissions", "alice").json()
    assert {r["id"]: r["selected"] for r in rows}[first] is True
    shot(page, "my-submissions-selected")


def test_invite_and_accept_a_teammate(server, signed_in):
    server.competition("teams")
    alice = signed_in("alice")
    alice.goto(f"{server.url}/c/teams/team")
    alice.click("text=Join this competition")
    alice.fill("input[name=invitee]", "bob")
    alice.click("form[action$='/team/invitations'] button")
    sync_api.expect(alice.locator(".flash.ok")).to_contain_text("Invitation sent to bob")
    bob = signed_in("bob")
    bob.goto(f"{server.url}/c/teams/team")
    sync_api.expect(bob.locator(".invitation")).to_contain_text("alice")
    bob.click(".invitation button:has-text('Accept')")
    sync_api.expect(bob.locator(".flash.ok")).to_contain_text("You joined team alice")
    sync_api.expect(bob.locator("ul.members")).to_contain_text("bob")
    sync_api.expect(bob.locator("ul.members")).to_contain_text("alice")
    shot(bob, "team-merged")


LABELS_KEY = csv_bytes(
    ["id", "label", "Usage"],
    *[
        [f"r{i}", ["cat", "dog", "bird"][i % 3], "Public" if i % 2 else "Private"]
        for i in range(30)
    ],
)


def test_host_uploads_a_new_key_previews_and_publishes_a_rescore(server, signed_in):
    server.competition("rescore", metric={"name": "macro_f1"}, key=LABELS_KEY)
    guesses = [[f"r{i}", ["cat", "dog", "bird"][(i * 7 // 5) % 3]] for i in range(30)]
    submission = server.submit("rescore", "alice", csv_bytes(["id", "label"], *guesses))
    server.submit(
        "rescore", "bob", csv_bytes(["id", "label"], *[[f"r{i}", "cat"] for i in range(30)])
    )
    server.wait_scored("rescore", "host")
    page = signed_in("host")
    page.goto(f"{server.url}/c/rescore/host/submissions/{submission}")
    sync_api.expect(page.locator("svg.heatmap")).to_be_visible()
    sync_api.expect(page.locator("text=Hardest class")).to_be_visible()
    shot(page, "host-diagnostics")
    fixed = LABELS_KEY.replace(b"r1,dog", b"r1,cat").replace(b"r4,dog", b"r4,cat")
    page.goto(f"{server.url}/c/rescore/host/keys")
    page.set_input_files("form[action$='/host/keys'] input[type=file]", _file("key-v2.csv", fixed))
    page.click("form[action$='/host/keys'] button")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("Answer key version 2 stored")
    page.goto(f"{server.url}/c/rescore/host/rescore")
    page.click("button:has-text('Rescore against version 2')")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("Rescoring 2 submission(s)")
    for _ in range(100):
        if page.locator("#pending").count() == 0:
            break
        time.sleep(0.1)
        page.reload()
    sync_api.expect(page.locator("text=Every submission is scored against it")).to_be_visible()
    assert page.locator("section.panel table").first.locator("tbody tr").count() == 2
    shot(page, "host-rescore-preview")
    page.click("button:has-text('Publish version 2')")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("Version 2 is now on the boards")
    versions = server.api("GET", "/competitions/rescore/answer-key/versions", "host").json()
    assert versions[-1]["published_at"] is not None


def test_host_adds_a_cohost_who_reaches_the_host_pages_until_removed(server, signed_in):
    server.competition("cohosts")
    page = signed_in("host")
    page.goto(f"{server.url}/c/cohosts/host/hosts")
    page.fill("form[action$='/host/hosts'] input[name=user]", "carol")
    page.click("form[action$='/host/hosts'] button")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("carol is now a co-host")
    sync_api.expect(page.locator("table.hosts tbody")).to_contain_text("carol")
    shot(page, "host-cohosts")
    carol = signed_in("carol")
    carol.goto(f"{server.url}/c/cohosts/host")
    sync_api.expect(carol.locator("nav.subtabs")).to_contain_text("Audit log")
    carol.click("nav.subtabs >> text=Hosts")
    sync_api.expect(carol.locator("text=Only the owner adds and removes co-hosts")).to_be_visible()
    page.click("table.hosts tr:has-text('carol') button:has-text('Remove')")
    sync_api.expect(page.locator(".flash.ok")).to_contain_text("carol is no longer a host")
    hosts = server.api("GET", "/competitions/cohosts/hosts", "host").json()
    assert [h["user"] for h in hosts] == ["host"]
    response = carol.goto(f"{server.url}/c/cohosts/host")
    assert response is not None and response.status == 403
    sync_api.expect(carol.locator("text=hosts only")).to_be_visible()


def test_private_board_after_the_deadline(server, signed_in):
    server.competition("closing", deadline=(datetime.now(UTC) + timedelta(days=1)).isoformat())
    server.submit("closing", "alice", PUBLIC_HALF)  # public 0.5, private 1.0
    server.submit("closing", "bob", predictions(a=0.9, b=0.1, c=0.8, d=0.9, e=0.1, f=0.8))
    server.wait_scored("closing", "host")
    page = signed_in("alice", width=420)  # a phone
    page.goto(f"{server.url}/c/closing/leaderboard")
    sync_api.expect(page.locator("text=opens when the competition closes")).to_be_visible()
    sync_api.expect(page.locator("svg.chart")).to_be_visible()
    shot(page, "leaderboard-public-phone")
    response = server.api(
        "PATCH", "/competitions/closing", "host", json={"deadline": datetime.now(UTC).isoformat()}
    )
    assert response.status_code == 200, response.text
    page.goto(f"{server.url}/c/closing/leaderboard?board=private")
    sync_api.expect(page.locator("h2:has-text('Private leaderboard')")).to_be_visible()
    first = page.locator("table.board tbody tr").first
    sync_api.expect(first).to_contain_text("alice")
    sync_api.expect(first.locator(".move")).to_contain_text("▲ 1")
    assert "mine" in (first.get_attribute("class") or "")
    page.set_viewport_size({"width": 1200, "height": 900})
    shot(page, "leaderboard-private")
    assert re.search(r"higher is better", page.locator("svg.chart").inner_html())


# A regression key for a board of two columns: six rows, four public.
REG_KEY = csv_bytes(
    ["id", "y", "Usage"],
    *[
        [i, y, u]
        for i, y, u in zip(
            "abcdef", (1, 2, 3, 4, 5, 6), ["Public"] * 4 + ["Private"] * 2, strict=True
        )
    ],
)


def _reg(*values: float) -> bytes:
    return csv_bytes(["id", "y"], *[[i, v] for i, v in zip("abcdef", values, strict=True)])


def test_a_board_of_two_columns_with_phase_tabs_sorts_by_a_header(server, signed_in):
    """The docs' figure docs/img/board-phases.png is tests/artifacts/leaderboard-phases.png."""
    now = datetime.now(UTC)
    body = {
        "slug": "phases",
        "title": "House prices",
        "columns": [
            {"key": "rmse", "title": "RMSE", "metric": {"name": "rmse"}},
            {"key": "mae", "title": "MAE", "metric": {"name": "mae"}, "precision": 3},
        ],
        "phases": [
            {"name": "dev", "title": "Development", "start": (now - timedelta(days=5)).isoformat(),
             "end": (now + timedelta(days=9)).isoformat()},
            {"name": "final", "title": "Final", "start": (now + timedelta(days=9)).isoformat(),
             "end": (now + timedelta(days=16)).isoformat(), "board": "blind"},
        ],
    }  # fmt: skip
    assert server.api("POST", "/competitions", "host", json=body).status_code == 201
    for phase in ("dev", "final"):
        files = {"file": ("key.csv", REG_KEY, "text/csv")}
        response = server.api(
            "PUT", f"/competitions/phases/phases/{phase}/answer-key", "host", files=files
        )
        assert response.status_code == 201, response.text
    # Alice: the best RMSE; bob: the best MAE (one big error, three exact rows); carol: behind.
    for user, values in (
        ("alice", (1.3, 2.3, 2.7, 4.3, 5, 6)),
        ("bob", (1, 2, 3, 4.9, 5, 6)),
        ("carol", (1.5, 2.5, 3.4, 4.5, 5, 6)),
    ):
        files = {"file": ("sub.csv", _reg(*values), "text/csv")}
        response = server.api("POST", "/competitions/phases/submissions", user, files=files)
        assert response.status_code == 202, response.text
    server.wait_scored("phases", "host")
    page = signed_in("alice")
    page.goto(f"{server.url}/c/phases/leaderboard")
    tabs = page.locator("nav.phase-tabs")
    sync_api.expect(tabs.locator("a[aria-current=page]")).to_contain_text("Development")
    sync_api.expect(tabs).to_contain_text("upcoming")
    first = page.locator("table.board tbody tr").first
    sync_api.expect(first).to_contain_text("alice")
    page.click("table.board th a:has-text('MAE')")
    sync_api.expect(page.locator("th[aria-sort]")).to_contain_text("MAE")
    sync_api.expect(page.locator("table.board tbody tr").first).to_contain_text("bob")
    assert "sort=mae" in page.url
    shot(page, "leaderboard-phases")
    page.click("nav.phase-tabs a:has-text('Final')")
    sync_api.expect(page.locator(".notice.blind")).to_contain_text("scores appear when")
