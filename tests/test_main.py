"""The app factory: apps built in one process share the work FastAPI does on their routes."""

from app.main import _IncludedRouter, create_app
from tests.asgi_client import TestClient


def _inclusions(app) -> list[object]:  # type: ignore[no-untyped-def]
    return [route for route in app.router.routes if type(route) is _IncludedRouter]


def test_two_apps_share_their_router_inclusions_and_both_answer(settings, session_factory):
    # FastAPI works out an inclusion's routes on its first request and keeps them on it: a test
    # run builds an app per test, and each would pay for that again (most of a route test's CPU).
    first = create_app(settings, session_factory=session_factory)
    second = create_app(settings, session_factory=session_factory)
    assert _IncludedRouter is not None, "FastAPI no longer has _IncludedRouter: see app.main"
    assert len(_inclusions(first)) >= 7  # ops, the API, the web pages' routers
    assert all(a is b for a, b in zip(_inclusions(first), _inclusions(second), strict=True))
    # Worked out with the app, not on a server's first request.
    assert all(route._effective_candidates_version is not None for route in _inclusions(first))
    for app in (first, second):
        with TestClient(app) as client:
            assert client.get("/api/v1/competitions").status_code == 401
            assert client.get("/").status_code == 200
            assert client.get("/api/v1/nowhere").status_code == 404


def test_dependency_overrides_hold_on_shared_routes_for_their_app_alone(
    settings, session_factory, alice
):
    from app.deps import get_current_user
    from app.errors import Forbidden

    def refuse() -> None:
        raise Forbidden("overridden for this app")

    overridden = create_app(settings, session_factory=session_factory)
    plain = create_app(settings, session_factory=session_factory)
    assert _inclusions(overridden)[0] is _inclusions(plain)[0]  # the same shared inclusion
    overridden.dependency_overrides[get_current_user] = refuse
    with TestClient(overridden) as client:
        refused = client.get("/api/v1/me", headers=alice.headers)
        assert refused.status_code == 403 and refused.json()["detail"] == "overridden for this app"
    with TestClient(plain) as client:  # the other app, on the same routes, keeps its own
        assert client.get("/api/v1/me", headers=alice.headers).json()["name"] == "alice"
