"""The service applies its configured intake limits and keeps parsed keys in the on-disk cache."""

import gzip

import pytest

from app.main import create_app
from tests.asgi_client import TestClient
from tests.helpers import API, PERFECT, ready_competition, submit


@pytest.fixture
def small_client(settings, session_factory):
    limited = settings.model_copy(update={"max_rows": 4})
    with TestClient(create_app(limited, session_factory=session_factory)) as client:
        yield client


def test_a_submission_over_the_row_limit_fails_naming_the_limit(small_client, host, alice):
    # The answer key has 6 rows: over the limit of 4, so the host is told at upload.
    small_client.post(
        f"{API}/competitions",
        json={"slug": "churn", "title": "Churn", "metric": {"name": "roc_auc"}},
        headers=host.headers,
    )
    response = small_client.put(
        f"{API}/competitions/churn/answer-key",
        files={
            "file": (
                "key.csv",
                b"id,target\n" + b"".join(b"r%d,%d\n" % (i, i % 2) for i in range(6)),
                "text/csv",
            )
        },
        headers=host.headers,
    )
    assert response.status_code == 422
    assert "4" in response.json()["detail"] and "row" in response.json()["detail"]


def test_an_upload_over_the_size_limit_is_413(settings, session_factory, host, alice):
    limited = settings.model_copy(update={"max_upload_bytes": 2048})
    with TestClient(create_app(limited, session_factory=session_factory)) as client:
        ready_competition(client, host.headers)
        response = submit(client, alice.headers, b"id,target\n" + b"x,0.5\n" * 1000)
    assert response.status_code == 413
    assert "2,048" in response.json()["detail"]


def test_gzipped_submissions_are_accepted_by_content(client, host, alice, settings):
    ready_competition(client, host.headers)
    accepted = submit(client, alice.headers, gzip.compress(PERFECT))
    assert accepted.status_code == 202
    view = client.get(f"{API}/submissions/{accepted.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["public_score"] == 1.0
    assert any((settings.data_dir / "key-cache").iterdir())
