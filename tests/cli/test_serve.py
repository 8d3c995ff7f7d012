"""`podium serve` hands uvicorn its processes and the trusted proxies, from options or from the
environment, migrates once before any process starts, and refuses several processes on SQLite
(issue 23). uvicorn itself is replaced by a recorder here; tests/http/test_proxy_headers.py runs
the real thing."""

from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli.commands import app as cli
from app.config import get_settings

POSTGRES = "postgresql+psycopg://podium@db.invalid/podium"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: calls.append(("uvicorn", (app, kw))))
    monkeypatch.setattr("app.migrate.upgrade", lambda url: calls.append(("upgrade", url)))
    monkeypatch.setenv("PODIUM_ENV", "test")
    get_settings.cache_clear()
    yield calls
    get_settings.cache_clear()


def _serve(*args: str) -> Any:
    return CliRunner().invoke(cli, ["serve", *args])


def test_serve_passes_workers_and_trusted_proxies_to_uvicorn(served, monkeypatch):
    monkeypatch.setenv("PODIUM_DATABASE_URL", POSTGRES)
    result = _serve(
        "--workers", "3", "--proxy-headers", "--forwarded-allow-ips", "10.0.0.7,10.1.0.0/16"
    )
    assert result.exit_code == 0, result.output
    assert [what for what, _ in served] == ["upgrade", "uvicorn"]  # migrated once, first
    app, options = served[1][1]
    assert app == "app.main:create_app" and options["factory"] is True
    assert options["workers"] == 3
    assert options["proxy_headers"] is True
    assert options["forwarded_allow_ips"] == "10.0.0.7,10.1.0.0/16"


def test_serve_takes_its_defaults_from_the_environment(served, monkeypatch):
    monkeypatch.setenv("PODIUM_DATABASE_URL", POSTGRES)
    monkeypatch.setenv("PODIUM_WORKERS", "4")
    monkeypatch.setenv("PODIUM_FORWARDED_ALLOW_IPS", "172.18.0.0/16")
    result = _serve("--host", "0.0.0.0")
    assert result.exit_code == 0, result.output
    _app, options = served[1][1]
    assert options["workers"] == 4 and options["host"] == "0.0.0.0"
    assert options["proxy_headers"] is True
    assert options["forwarded_allow_ips"] == "172.18.0.0/16"


def test_serve_can_ignore_forwarded_headers(served, monkeypatch):
    monkeypatch.setenv("PODIUM_DATABASE_URL", POSTGRES)
    result = _serve("--no-proxy-headers")
    assert result.exit_code == 0, result.output
    _app, options = served[1][1]
    assert options["proxy_headers"] is False and options["workers"] == 1


def test_serve_refuses_several_processes_on_sqlite(served, monkeypatch, tmp_path):
    monkeypatch.setenv("PODIUM_DATABASE_URL", f"sqlite:///{tmp_path}/podium.db")
    result = _serve("--workers", "2")
    assert result.exit_code == 2
    assert "needs PostgreSQL" in result.output
    assert served == []  # nothing migrated, nothing served
