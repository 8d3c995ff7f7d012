"""Which limit each file route's body is read under (the limits themselves are measured against
a real server in test_body_limits.py): a phase's answer key is an upload like the legacy key,
and a bundle has its own limit."""

from app.config import Settings
from app.http.body_gate import FRAMING_BYTES, body_limit
from app.http.upload_guard import BUNDLE_ROUTE, UPLOAD_ROUTES

SETTINGS = Settings(env="test", max_upload_bytes=10_000_000, bundle_max_bytes=3_000_000)


def test_a_phase_answer_key_is_read_as_an_upload() -> None:
    path = "/api/v1/competitions/churn/phases/final/answer-key"
    assert body_limit(path, SETTINGS) == (10_000_000 + FRAMING_BYTES, True)
    assert UPLOAD_ROUTES.match(path)


def test_a_bundle_is_read_under_the_bundle_limit_on_the_api_and_the_page() -> None:
    for path in ("/api/v1/competitions/import", "/host/import"):
        assert body_limit(path, SETTINGS) == (3_000_000 + FRAMING_BYTES, True)
    assert BUNDLE_ROUTE.match("/api/v1/competitions/import")


def test_other_bodies_keep_the_request_limit() -> None:
    assert body_limit("/api/v1/competitions", SETTINGS) == (SETTINGS.max_request_bytes, False)
