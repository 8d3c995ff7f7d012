"""What a host watches: health and readiness, Prometheus metrics, request ids in responses and
logs, and outages answered with 503 and Retry-After instead of 500."""

import errno
import json
import logging
import subprocess
import sys

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from sqlalchemy import event, func, select

from app.auth.service import create_user
from app.db import make_engine, make_session_factory
from app.main import create_app
from app.models import Role, Submission
from app.ops import readiness
from app.ops.logs import JsonFormatter
from tests.asgi_client import TestClient
from tests.databases import migrated
from tests.helpers import API, PERFECT, ready_competition, submit

# Nothing listens on port 1: connecting is refused at once.
DEAD_DATABASE = "postgresql+psycopg://postgres@127.0.0.1:1/podium?connect_timeout=2"


@pytest.fixture
def dead_database_client(settings):
    app = create_app(settings, session_factory=make_session_factory(make_engine(DEAD_DATABASE)))
    with TestClient(app) as client:
        yield client


def test_healthz_answers_without_the_database(dead_database_client):
    response = dead_database_client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_is_503_with_a_reason_when_the_database_is_unreachable(dead_database_client):
    response = dead_database_client.get("/readyz")
    assert response.status_code == 503
    assert response.headers["retry-after"].isdigit()
    body = response.json()
    assert body["status"] == "unavailable" and body["checks"]["storage"] == "ok"
    assert body["checks"]["database"].startswith("unreachable")


def test_readyz_is_200_when_everything_answers(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "storage": "ok"}}


def test_readiness_checks_the_broker_of_a_celery_deployment(settings, session_factory):
    broken = settings.model_copy(
        update={"scoring_backend": "celery", "celery_broker_url": "redis://127.0.0.1:1/0"}
    )
    checks = readiness.check_all(broken, session_factory)
    assert checks["database"] == "ok" and checks["broker"].startswith("unreachable")


def test_an_unreachable_database_answers_503_with_retry_after(dead_database_client):
    response = dead_database_client.get(
        f"{API}/competitions", headers={"Authorization": "Bearer pdm_x"}
    )
    assert response.status_code == 503
    assert response.headers["retry-after"].isdigit()
    body = response.json()
    assert body["code"] == "unavailable" and body["reason"] == "database_unreachable"
    assert "database" in body["detail"]


def test_a_full_disk_answers_503_and_accepts_nothing(
    client, host, alice, session_factory, monkeypatch
):
    ready_competition(client, host.headers)

    def full(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("app.submissions.service.store_stream", full)
    response = submit(client, alice.headers, PERFECT)
    assert response.status_code == 503, response.text
    assert response.json()["reason"] == "storage_full" and "retry-after" in response.headers
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 0
    monkeypatch.undo()
    assert submit(client, alice.headers, PERFECT).status_code == 202  # recovers by itself


# Another process holds SQLite's write lock until its standard input closes.
LOCK_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
conn.rollback()
"""


def test_a_sqlite_database_locked_by_another_process_answers_503_and_recovers(tmp_path, settings):
    path = tmp_path / "locked.db"
    url = f"sqlite:///{path}"
    migrated(url)
    engine = make_engine(url)

    @event.listens_for(engine, "connect")
    def _wait_briefly(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        # The server waits 30 s for the lock before giving up; the test need not.
        dbapi_connection.execute("PRAGMA busy_timeout=300")

    factory = make_session_factory(engine)
    host, alice = (_token_headers(factory, settings, name) for name in ("host", "alice"))
    app = create_app(settings.model_copy(update={"database_url": url}), session_factory=factory)
    with TestClient(app) as client:
        ready_competition(client, host)
        holder = subprocess.Popen(
            [sys.executable, "-c", LOCK_HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
            refused = submit(client, alice, PERFECT)
            assert refused.status_code == 503, refused.text
            assert refused.json()["reason"] == "database_busy"
            assert refused.headers["retry-after"].isdigit()
            assert client.get("/healthz").status_code == 200
        finally:
            holder.communicate(timeout=30)  # closes its stdin: the lock goes
        accepted = submit(client, alice, PERFECT)
        assert accepted.status_code == 202, accepted.text
        view = client.get(f"{API}/submissions/{accepted.json()['id']}", headers=alice).json()
        assert view["status"] == "scored"
    with factory() as session:
        # Nothing half-accepted while the lock was held: only the second upload is there.
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
    engine.dispose()


def _token_headers(factory, settings, name: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    role = Role.organiser if name == "host" else Role.participant
    with factory() as session:
        _user, token = create_user(session, name=name, role=role, secret_key=settings.secret_key)
        session.commit()
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    "error",
    [
        EndpointConnectionError(endpoint_url="http://127.0.0.1:1/bucket"),
        ClientError(
            {"Error": {"Code": "SlowDown"}, "ResponseMetadata": {"HTTPStatusCode": 503}},
            "PutObject",
        ),
        ClientError(
            {"Error": {"Code": "InternalError"}, "ResponseMetadata": {"HTTPStatusCode": 500}},
            "PutObject",
        ),
    ],
)
def test_a_store_error_that_reaches_the_handlers_raw_answers_503(
    client, host, alice, monkeypatch, error
):
    ready_competition(client, host.headers)

    def failing(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise error

    monkeypatch.setattr("app.submissions.service.store_stream", failing)
    response = submit(client, alice.headers, PERFECT)
    assert response.status_code == 503, response.text
    assert response.json()["reason"] == "storage_unreachable" and "retry-after" in response.headers


def test_a_refusal_from_the_store_is_not_dressed_up_as_an_outage(client, host, alice, monkeypatch):
    ready_competition(client, host.headers)
    denied = ClientError(
        {"Error": {"Code": "AccessDenied"}, "ResponseMetadata": {"HTTPStatusCode": 403}},
        "PutObject",
    )

    def failing(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise denied

    monkeypatch.setattr("app.submissions.service.store_stream", failing)
    with pytest.raises(ClientError):
        submit(client, alice.headers, PERFECT)


def test_other_os_errors_are_not_dressed_up_as_outages(client, host, alice, monkeypatch):
    ready_competition(client, host.headers)

    def broken(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr("app.submissions.service.store_stream", broken)
    with pytest.raises(PermissionError):
        submit(client, alice.headers, PERFECT)


def test_responses_carry_the_callers_request_id_or_a_new_one(client):
    given = client.get("/healthz", headers={"X-Request-ID": "trace-42"})
    assert given.headers["x-request-id"] == "trace-42"
    fresh = client.get("/healthz").headers["x-request-id"]
    assert len(fresh) == 32 and fresh != client.get("/healthz").headers["x-request-id"]
    odd = client.get("/healthz", headers={"X-Request-ID": "no spaces\tor tabs"})
    assert odd.headers["x-request-id"] != "no spaces\tor tabs"


def test_the_request_id_reaches_the_scoring_jobs_log_lines(client, host, alice, caplog):
    ready_competition(client, host.headers)
    caplog.set_level(logging.INFO, logger="app.jobs")
    response = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("sub.csv", PERFECT, "text/csv")},
        headers={**alice.headers, "X-Request-ID": "upload-7"},
    )
    assert response.status_code == 202
    scoring = [r for r in caplog.records if r.name.startswith("app.jobs")]
    assert scoring and all(r.request_id == "upload-7" for r in scoring)
    line = json.loads(JsonFormatter().format(scoring[-1]))
    assert line["request_id"] == "upload-7" and line["level"] == "INFO"


def test_metrics_expose_latency_by_route_uploads_and_queue_depth(client, host, alice):
    ready_competition(client, host.headers)
    assert submit(client, alice.headers, PERFECT).status_code == 202
    client.get(f"{API}/competitions/churn/leaderboard", headers=alice.headers)
    response = client.get("/metrics", headers={"Accept": "text/plain;version=0.0.4"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert (
        'podium_http_request_duration_seconds_count{method="GET",'
        'route="/api/v1/competitions/{slug}/leaderboard",status="200"}'
    ) in text
    assert 'podium_uploads_total{outcome="accepted"}' in text
    assert 'podium_queue_depth{status="queued"} 0.0' in text
    assert "podium_scoring_duration_seconds_bucket" in text
    assert "podium_sweep_actions_total" in text or "podium_sweep_actions" in text
