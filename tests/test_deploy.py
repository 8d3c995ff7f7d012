"""There is no Docker engine on these machines: check the deployment files by reading them."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_compose_file_parses_and_names_api_and_postgres_with_a_healthcheck():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"api", "postgres"} <= set(services)
    assert "healthcheck" in services["postgres"]
    assert services["api"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["api"]["environment"]["PODIUM_DATABASE_URL"].startswith("postgresql")
    assert services["api"]["environment"]["PODIUM_ENV"] == "production"


def test_dockerfile_runs_migrations_before_uvicorn():
    cmd = next(
        line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD")
    )
    assert cmd.index("podium migrate") < cmd.index("uvicorn")


def test_compose_runs_migrate_once_then_api_worker_and_beat_on_postgres_and_redis():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"migrate", "api", "worker", "beat", "postgres", "redis"} <= set(services)
    assert services["migrate"]["command"] == ["podium", "migrate"]
    for name in ("api", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )
        assert services[name]["environment"]["PODIUM_SCORING_BACKEND"] == "celery"
    assert services["worker"]["command"] == ["podium", "worker"]
    assert services["beat"]["command"] == ["podium", "beat"]
