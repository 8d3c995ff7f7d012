"""Uploads refused at intake leave the per-minute rate with Redis too (issue 42): the shared
window gives a refused upload back while the team's refused ones stay within their ceiling."""

from app.main import create_app
from tests.asgi_client import TestClient
from tests.helpers import PERFECT, ready_competition, submit


def test_refused_uploads_are_given_back_to_the_shared_window(
    settings, session_factory, redis_url, host, alice
):
    shared = settings.model_copy(
        update={"redis_url": redis_url, "uploads_per_minute": 2, "refused_uploads_per_minute": 3}
    )
    with TestClient(create_app(shared, session_factory=session_factory)) as client:
        ready_competition(client, host.headers)
        answers = [submit(client, alice.headers, b"no,header\n").status_code for _ in range(3)]
        assert answers == [422, 422, 422]
        # Three refused within the ceiling of 3: both accepted uploads still fit.
        assert [submit(client, alice.headers, PERFECT).status_code for _ in range(2)] == [202, 202]
        assert submit(client, alice.headers, PERFECT).status_code == 429
