"""One error body everywhere: business errors, FastAPI's validation, Starlette's 404/405, 500s,
and every route declaring its error answers in the OpenAPI schema."""

import pytest

from app.main import create_app
from tests.asgi_client import TestClient
from tests.helpers import API

ERROR_REF = "#/components/schemas/ErrorBody"


def _assert_error_body(body: dict, code: str) -> None:
    assert isinstance(body["detail"], str) and body["detail"], body
    assert "\n" not in body["detail"]
    assert body["code"] == code, body


def test_every_route_declares_its_errors_with_the_error_body(client):
    schema = client.get("/openapi.json").json()
    operations = [
        (method, path, op)
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]
    assert len(operations) > 20
    for method, path, op in operations:
        errors = {code: r for code, r in op["responses"].items() if int(code) >= 400}
        assert "500" in errors, (method, path)
        if path.startswith("/api/"):
            assert {"401", "422"} <= set(errors), (method, path, sorted(errors))
        for code, response in errors.items():
            ref = response["content"]["application/json"]["schema"]["$ref"]
            assert ref == ERROR_REF, (method, path, code, ref)
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    body = schema["components"]["schemas"]["ErrorBody"]
    assert {"detail", "code"} <= set(body["required"])
    assert "errors" in body["properties"]


def test_a_validation_error_has_a_one_line_detail_and_the_list_of_errors(client, host):
    response = client.post(
        f"{API}/competitions",
        json={"slug": "Bad Slug!", "title": "", "metric": {"name": "roc_auc"}},
        headers=host.headers,
    )
    assert response.status_code == 422
    body = response.json()
    _assert_error_body(body, "validation_error")
    assert "slug" in body["detail"] and "title" in body["detail"]
    locs = [tuple(e["loc"]) for e in body["errors"]]
    assert ("body", "slug") in locs and ("body", "title") in locs
    assert all(set(e) == {"loc", "msg"} for e in body["errors"])


def test_a_bad_path_parameter_is_the_same_shape(client, alice):
    response = client.get(f"{API}/submissions/not-a-number", headers=alice.headers)
    assert response.status_code == 422
    body = response.json()
    _assert_error_body(body, "validation_error")
    assert body["errors"][0]["loc"] == ["path", "submission_id"]


def test_an_unknown_route_is_a_404_in_the_error_body(client, alice):
    response = client.get(f"{API}/no-such-thing", headers=alice.headers)
    assert response.status_code == 404
    body = response.json()
    _assert_error_body(body, "not_found")
    assert "/api/v1/no-such-thing" in body["detail"]
    assert "errors" not in body


def test_a_method_a_route_does_not_take_is_a_405_in_the_error_body(client, host):
    response = client.delete(f"{API}/competitions", headers=host.headers)
    assert response.status_code == 405
    body = response.json()
    _assert_error_body(body, "method_not_allowed")
    assert "DELETE" in body["detail"]
    assert response.headers["allow"]


def test_a_business_error_keeps_its_code_and_extra_fields(client, alice):
    response = client.get(f"{API}/competitions/nope", headers=alice.headers)
    assert response.status_code == 404
    _assert_error_body(response.json(), "not_found")
    unauthorised = client.get(f"{API}/competitions")
    assert unauthorised.status_code == 401
    _assert_error_body(unauthorised.json(), "unauthorized")


def test_an_unexpected_failure_is_a_generic_500_without_a_traceback(settings, session_factory):
    app = create_app(settings, session_factory=session_factory)

    def broken() -> None:
        raise RuntimeError("secret internals at /srv/podium")

    # Under the API: a browser page that fails gets the web app's HTML error page instead.
    app.add_api_route("/api/v1/broken", broken)
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/api/v1/broken")
    assert response.status_code == 500
    body = response.json()
    assert body == {"detail": "internal server error", "code": "internal_error"}
    assert "secret" not in response.text and "Traceback" not in response.text


# (The boards are public: tests/leaderboard/test_public_access.py says who may read them.)
@pytest.mark.parametrize("path", ["/api/v1/competitions/x/submissions", "/api/v1/me"])
def test_a_missing_token_is_401_in_the_error_body(client, path):
    response = client.get(path)
    assert response.status_code == 401
    _assert_error_body(response.json(), "unauthorized")


def test_a_405_lists_every_method_the_path_takes_in_allow_and_detail(client, host):
    # GET and PATCH /competitions/{slug} are two routes; a 405 names both, not the first only.
    response = client.put(f"{API}/competitions/any-slug", headers=host.headers, json={})
    assert response.status_code == 405
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert {"GET", "PATCH"} <= allowed and "PUT" not in allowed
    body = response.json()
    _assert_error_body(body, "method_not_allowed")
    assert "PUT" in body["detail"] and "GET" in body["detail"] and "PATCH" in body["detail"]
    # A path with one method still names exactly that one.
    listed = client.delete(f"{API}/competitions", headers=host.headers)
    assert {m.strip() for m in listed.headers["allow"].split(",")} >= {"GET", "POST"}
    assert "PATCH" not in listed.headers["allow"]
