"""What a newcomer hits on a first run of `podium`, each answered by one line saying what to do:
a command run where there is no database, a missing extra, a refused secret, the server's address.
"""

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from tests.cli.inprocess import run_main
from tests.cli.test_commands import _assert_error

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    # The checkout on the path, whatever directory the command is run from.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return {**env, **extra}


def _run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The command run where a newcomer runs it, with their environment, in this process."""
    return run_main(*args, env=env, cwd=cwd)


def _process(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The same in a process of its own: an interpreter without an extra, a server's start."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


# --- no database where the command looks: refused, nothing created ----------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("users", "list"),
        ("users", "token", "alice"),
        ("users", "revoke", "alice"),
        ("users", "create", "alice"),
        ("users", "password", "alice"),
        ("sweep",),
    ],
)
def test_a_command_run_where_there_is_no_database_is_refused_and_creates_none(tmp_path, args):
    result = _run(*args, cwd=tmp_path, env=_env())
    expected = tmp_path / ".podium" / "podium.db"
    _assert_error(result, f"no database at {expected}", "podium migrate", "PODIUM_DATABASE_URL")
    assert "no user named" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # no ./.podium/, no empty database


def test_users_create_offers_create_and_makes_the_database_only_when_asked(tmp_path):
    refused = _run("users", "create", "ada", cwd=tmp_path, env=_env())
    _assert_error(refused, "no database at", "--create")
    assert list(tmp_path.iterdir()) == []

    made = _run("users", "create", "ada", "--organiser", "--create", cwd=tmp_path, env=_env())
    assert made.returncode == 0, made.stderr
    db = tmp_path / ".podium" / "podium.db"
    assert made.stderr.splitlines() == [f"database: sqlite:///{db}"]
    assert made.stdout.startswith("pdm_")
    listed = _run("users", "list", cwd=tmp_path, env=_env())
    assert listed.returncode == 0, listed.stderr
    assert "ada" in listed.stdout and "organiser" in listed.stdout
    assert listed.stderr.splitlines() == [f"database: sqlite:///{db}"]


def test_an_explicit_url_to_a_missing_file_is_refused_too(tmp_path):
    missing = tmp_path / "elsewhere" / "podium.db"
    env = _env(PODIUM_DATABASE_URL=f"sqlite:///{missing}")
    _assert_error(_run("users", "list", cwd=tmp_path, env=env), f"no database at {missing}")
    assert not missing.parent.exists()


def test_an_empty_sqlite_file_is_not_a_podium_database(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    env = _env(PODIUM_DATABASE_URL=f"sqlite:///{empty}")
    _assert_error(_run("users", "list", cwd=tmp_path, env=env), "holds no Podium tables")
    assert empty.stat().st_size == 0


def test_migrate_creates_the_database_and_the_users_commands_then_name_it(tmp_path):
    migrated = _run("migrate", cwd=tmp_path, env=_env())
    assert migrated.returncode == 0, migrated.stderr
    assert f"database: sqlite:///{tmp_path / '.podium' / 'podium.db'}\n" in migrated.stderr
    listed = _run("users", "list", cwd=tmp_path, env=_env())
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr == f"database: sqlite:///{tmp_path / '.podium' / 'podium.db'}\n"


def test_a_postgresql_url_is_shown_with_its_password_masked():
    from app.db import shown_url

    shown = shown_url("postgresql+psycopg://podium:hunter22@db.example:5432/podium")
    assert shown == "postgresql+psycopg://podium:***@db.example:5432/podium"


def test_an_unreachable_database_is_one_line_without_its_password(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once closed
    env = _env(PODIUM_DATABASE_URL=f"postgresql+psycopg://podium:hunter22@127.0.0.1:{port}/x")
    result = _run("users", "list", cwd=tmp_path, env=env)
    _assert_error(result, "cannot open the database", f"podium:***@127.0.0.1:{port}/x")
    assert "hunter22" not in result.stderr


# --- the scale extra and the settings ---------------------------------------------------------


def _without_celery(tmp_path: Path) -> dict[str, str]:
    """An environment whose interpreter cannot import celery, as without `podium[scale]`."""
    site = tmp_path / "no_celery"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import sys
            sys.modules["celery"] = None  # `import celery` now raises ModuleNotFoundError
            """
        )
    )
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
    return env


@pytest.mark.parametrize("command", ["worker", "beat"])
def test_worker_and_beat_without_the_scale_extra_name_what_to_install(tmp_path, command):
    env = _without_celery(tmp_path)
    check = subprocess.run(
        [sys.executable, "-c", "import celery"], capture_output=True, text=True, env=env
    )
    assert check.returncode != 0 and "celery" in check.stderr  # the simulation holds
    _assert_error(_process(command, cwd=tmp_path, env=env), "pip install 'podium[scale]'")


@pytest.mark.parametrize(
    "secret,fragments",
    [
        (None, ("PODIUM_SECRET_KEY", "at least 32 characters", "secrets.token_urlsafe")),
        ("too-short", ("PODIUM_SECRET_KEY", "at least 32 characters", "it has 9")),
    ],
)
@pytest.mark.parametrize("command", [("migrate",), ("serve",), ("users", "list")])
def test_a_production_start_without_a_good_secret_is_one_line_naming_it(
    tmp_path, command, secret, fragments
):
    env = _env(PODIUM_ENV="production")
    if secret is not None:
        env["PODIUM_SECRET_KEY"] = secret
    # `serve` in a process of its own: were it to start anyway, it would not hold the suite.
    run = _process if command == ("serve",) else _run
    result = run(*command, cwd=tmp_path, env=env)
    _assert_error(result, *fragments)
    assert "pydantic" not in result.stderr and "validation error" not in result.stderr


def test_a_refused_setting_is_named_by_its_variable(tmp_path):
    result = _run("users", "list", cwd=tmp_path, env=_env(PODIUM_BOARD_CONCURRENCY="0"))
    _assert_error(result, "PODIUM_BOARD_CONCURRENCY", "greater than or equal to 1")


# --- the address the server announces is the one it listens on --------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_announces_the_port_it_was_given_and_answers_there(tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(PODIUM_SCORING_BACKEND="eager"),
    )
    try:
        assert server.stdout is not None and server.stderr is not None
        announced = server.stdout.readline()  # printed before the server starts listening
        assert announced.strip() == (
            f"Podium: http://127.0.0.1:{port}/ (the API explorer: http://127.0.0.1:{port}/docs)"
        )
        for line in server.stderr:  # uvicorn says when it listens
            if "Uvicorn running on" in line:
                assert f":{port}" in line
                break
        else:
            pytest.fail("the server exited before listening")
        answer = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        assert answer.status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize(
    "host,port,url",
    [
        ("127.0.0.1", 8123, "http://127.0.0.1:8123"),
        ("0.0.0.0", 80, "http://127.0.0.1:80"),
        ("::", 9000, "http://[::1]:9000"),
        ("::1", 9000, "http://[::1]:9000"),
        ("podium.example", 8443, "http://podium.example:8443"),
    ],
)
def test_the_announced_address_is_the_one_to_open(host, port, url):
    from app.cli.commands import _base_url

    assert _base_url(host, port) == url


def test_the_demo_report_points_at_the_servers_address(tmp_path):
    from app.cli.demo import seed_demo
    from app.config import Settings
    from tests.databases import migrated

    settings = Settings(
        env="test",
        database_url=f"sqlite:///{tmp_path}/demo.db",
        data_dir=tmp_path / "data",
        scoring_backend="eager",
    )
    migrated(settings.database_url)
    report = seed_demo(settings, base_url="http://127.0.0.1:8123")
    assert "http://127.0.0.1:8123/c/demo-churn/leaderboard" in report
    assert "8000" not in report
    again = seed_demo(settings, base_url="http://127.0.0.1:8123")
    assert "http://127.0.0.1:8123/c/demo-churn/leaderboard" in again
