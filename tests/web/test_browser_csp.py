"""The pages and the API explorer in a real browser under their Content-Security-Policy: nothing
of this server's is blocked, no inline code either (the browser reports each violation in a
``securitypolicyviolation`` event), and Swagger UI and ReDoc still render the API. What is blocked
is another site's: ReDoc's "powered by" logo from its CDN, which an offline server never loads."""

from datetime import UTC, datetime, timedelta

from tests.web.test_browser import (  # noqa: F401 - fixtures, shared with the other browser tests
    PASSWORD,
    chromium,
    server,
    sync_api,
)

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`);
});
"""


def _violations(page, *, elsewhere: tuple[str, ...] = ()) -> list[str]:  # type: ignore[no-untyped-def]
    """What was blocked, but for resources of the given other sites."""
    return [v for v in page.evaluate("window.__csp") if not v.split()[-1].startswith(elsewhere)]


def test_pages_and_the_api_explorer_work_under_their_policies(server, chromium):  # noqa: F811
    server.competition("csp", deadline=(datetime.now(UTC) + timedelta(days=3)).isoformat())
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(20_000)
    context.add_init_script(RECORD_VIOLATIONS)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/signin")
        page.fill("input[name=name]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("form[action='/signin'] button[type=submit] >> nth=0")
        page.wait_for_selector("text=Signed in as alice")
        assert _violations(page) == []
        for path in ("/", "/c/csp", "/c/csp/submissions", "/c/csp/leaderboard", "/c/csp/data"):
            response = page.goto(f"{server.url}{path}")
            assert response is not None and response.status == 200, path
            assert "script-src 'self'" in response.headers["content-security-policy"]
            page.wait_for_load_state("load")
            assert _violations(page) == [], path

        page.goto(f"{server.url}/docs")
        # The explorers render the whole API in the page: on a loaded 2-core machine that takes
        # longer than expect()'s own 5 s default, so they get the context's time.
        sync_api.expect(page.locator(".swagger-ui .info .title")).to_contain_text(
            "Podium", timeout=20_000
        )
        assert page.locator(".opblock").count() > 10  # the operations were rendered
        assert _violations(page) == []

        page.goto(f"{server.url}/redoc")
        sync_api.expect(page.locator("h1").first).to_contain_text("Podium", timeout=20_000)
        sync_api.expect(
            page.locator("[role=search] input, input[placeholder]").first
        ).to_be_visible(timeout=20_000)
        assert _violations(page, elsewhere=("https://cdn.redoc.ly/",)) == []
    finally:
        context.close()
