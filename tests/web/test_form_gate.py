"""A web form is refused on its headers alone when it lacks this browser's CSRF cookie or, where
it needs one, a live session; every other form body is bounded (issue 23). How much of a refused
body the server reads is measured against a real server in tests/http/test_body_limits.py."""

from fastapi.routing import APIRoute

from app.main import create_app
from app.web.form_gate import NOT_FORMS, SIGNED_OUT_FORMS
from app.web.session import check_csrf, signed_in_user
from tests.asgi_client import TestClient
from tests.helpers import ready_competition

FORM_POSTS = [
    "/c/churn/submissions",
    "/c/churn/join",
    "/c/churn/host/keys",
    "/c/churn/host/files",
    "/account/tokens",
    "/signin",
    "/signout",
]


def _web_posts(routes, prefix=""):  # type: ignore[no-untyped-def]
    for route in routes:
        nested = getattr(route, "original_router", None)  # an included router
        if nested is not None:
            yield from _web_posts(nested.routes, prefix + route.include_context.prefix)
        elif isinstance(route, APIRoute) and "POST" in route.methods:
            if not (prefix + route.path).startswith(NOT_FORMS):
                yield prefix + route.path, route


def _calls(dependant):  # type: ignore[no-untyped-def]
    yield dependant.call
    for child in dependant.dependencies:
        yield from _calls(child)


def test_the_gate_knows_what_every_web_form_needs(settings, session_factory):
    """The gate's rule (every web POST is a CSRF-checked form; all but signing in and out need a
    signed-in user) is what the routes themselves declare."""
    app = create_app(settings, session_factory=session_factory)
    forms = list(_web_posts(app.router.routes))
    assert len(forms) > 15
    for path, route in forms:
        calls = set(_calls(route.dependant))
        assert check_csrf in calls, path
        assert (signed_in_user in calls) == (path not in SIGNED_OUT_FORMS), path


def test_a_form_without_the_csrf_cookie_is_403_whatever_its_body(client, host):
    ready_competition(client, host.headers)
    for path in FORM_POSTS:
        # A fresh browser each time: the 403 page hands out a CSRF cookie, as every page does.
        response = TestClient(client.app).post(path, files={"file": ("a.csv", b"id,target\n")})
        assert response.status_code == 403, (path, response.text)
        assert "CSRF" in response.text
        as_json = TestClient(client.app).post(
            path, headers={"Accept": "application/json"}, data={"x": "1"}
        )
        assert as_json.status_code == 403 and as_json.json()["code"] == "csrf_rejected", path


def test_a_form_that_needs_a_session_goes_to_sign_in_before_its_body(client, host, browser):
    ready_competition(client, host.headers)
    visitor = browser()
    token = visitor.token_on("/signin")  # a CSRF cookie and its token, but nobody signed in
    for path in ("/c/churn/submissions", "/c/churn/join", "/account/tokens"):
        response = visitor.http.post(
            path,
            data={"csrf_token": token},
            files={"file": ("a.csv", b"id,target\n")},
            follow_redirects=False,
        )
        assert response.status_code == 303, (path, response.text)
        assert response.headers["location"].startswith("/signin?next=")
    visitor.http.cookies.set("podium_session", "not-a-session")
    expired = visitor.http.post(
        "/c/churn/join",
        data={"csrf_token": token},
        headers={"Accept": "application/json"},
        follow_redirects=False,
    )
    assert expired.status_code == 401 and expired.json()["code"] == "unauthorized"


def test_a_wrong_csrf_header_is_refused_before_the_body(client, host, person, browser):
    ready_competition(client, host.headers)
    person("alice")
    alice = browser("alice")
    response = alice.http.post(
        "/c/churn/join", headers={"X-CSRF-Token": "forged"}, follow_redirects=False
    )
    assert response.status_code == 403 and "CSRF" in response.text


def test_signed_in_forms_still_work(client, host, person, browser):
    ready_competition(client, host.headers)
    person("alice")
    alice = browser("alice")
    joined = alice.post("/c/churn/join", page="/c/churn/team")
    assert joined.status_code == 303 and "error" not in joined.headers.get("set-cookie", "")
    token = alice.token_on("/c/churn/submissions")
    by_header = alice.http.post(
        "/c/churn/submissions",
        headers={"X-CSRF-Token": token, "Accept": "application/json"},
        files={"file": ("sub.csv", b"id,target\na,0.9\nb,0.1\nc,0.8\nd,0.2\ne,0.7\nf,0.3\n")},
    )
    assert by_header.status_code == 202, by_header.text


def test_a_form_body_past_the_request_limit_is_413(client, host, person, browser):
    ready_competition(client, host.headers)
    person("alice")
    alice = browser("alice")
    token = alice.token_on("/c/churn/team")
    response = alice.http.post(
        "/c/churn/team/invitations",
        data={"csrf_token": token, "invitee": "x" * (2 * 1024 * 1024)},
        follow_redirects=False,
    )
    assert response.status_code == 413 and "1,048,576-byte limit" in response.text
