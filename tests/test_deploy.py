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


def test_dockerfile_serves_with_podium_serve_which_migrates_first():
    # tests/cli/test_serve.py checks that `podium serve` migrates before it starts uvicorn.
    cmd = next(
        line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD")
    )
    assert cmd.startswith('CMD ["podium", "serve"') and '"--proxy-headers"' in cmd


def test_compose_serves_several_api_processes_behind_a_configurable_proxy():
    api = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["api"]
    assert api["command"][:2] == ["podium", "serve"] and "--proxy-headers" in api["command"]
    assert api["environment"]["PODIUM_WORKERS"] == "${PODIUM_API_WORKERS:-2}"
    assert "PODIUM_FORWARDED_ALLOW_IPS" in api["environment"]
    # The processes share their limits in Redis, in a database apart from the broker's.
    assert api["environment"]["PODIUM_REDIS_URL"] == "redis://redis:6379/1"


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


def test_compose_keeps_the_files_in_a_minio_bucket_created_before_the_app_starts():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"minio", "createbucket"} <= set(services)
    assert "healthcheck" in services["minio"]
    assert services["createbucket"]["depends_on"]["minio"]["condition"] == "service_healthy"
    make_bucket = " ".join(services["createbucket"]["command"])
    for name in ("api", "worker", "beat"):
        env = services[name]["environment"]
        assert env["PODIUM_STORAGE"] == "s3"
        assert env["PODIUM_S3_ENDPOINT_URL"] == "http://minio:9000"
        assert f"mc mb --ignore-existing podium/{env['PODIUM_S3_BUCKET']}" in make_bucket
        # The app signs in with the credentials MinIO was started with.
        assert env["PODIUM_S3_ACCESS_KEY_ID"] == services["minio"]["environment"]["MINIO_ROOT_USER"]
        assert (
            env["PODIUM_S3_SECRET_ACCESS_KEY"]
            == services["minio"]["environment"]["MINIO_ROOT_PASSWORD"]
        )
        assert services[name]["depends_on"]["createbucket"]["condition"] == (
            "service_completed_successfully"
        )


JAIL_OPTIONS = {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"}


def test_compose_lets_the_metric_jail_make_its_namespaces_where_metrics_run():
    # bubblewrap needs unshare/clone with CLONE_NEWUSER (seccomp), mount (AppArmor) and a fresh
    # /proc (no masked paths): the API self-tests the jail and checks metrics; workers score.
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name in ("api", "worker"):
        options = set(services[name].get("security_opt", []))
        assert options >= JAIL_OPTIONS, (name, options)
        # The jail's options come on top of the shared settings, not instead of them.
        assert services[name]["environment"]["PODIUM_ENV"] == "production"
        assert "privileged" not in services[name] and "cap_add" not in services[name]
    for name in ("migrate", "beat", "postgres", "redis", "minio"):
        assert "security_opt" not in services[name], name


def test_compose_says_why_the_jail_options_are_there_and_how_to_make_the_first_user():
    text = (ROOT / "docker-compose.yml").read_text()
    comments = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    for reason in ("CLONE_NEWUSER", "mount", "/proc", "apparmor_restrict_unprivileged_userns"):
        assert reason in comments, reason
    services = yaml.safe_load(text)["services"]
    first_user = next(line for line in comments.splitlines() if "podium users create" in line)
    command = first_user.lstrip("# ").split()
    assert command[:3] == ["docker", "compose", "exec"]
    assert command[3] in services and command[4:7] == ["podium", "users", "create"]
    assert "--organiser" in command
