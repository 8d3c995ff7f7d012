"""`podium worker` takes its queues: a worker of the queue ``code`` alone runs code submissions,
PODIUM_CODE_CONCURRENCY at once; the default takes both queues. Celery's own start is replaced
by a recorder (tests/jobs/test_celery.py runs a real worker). The command configures logging on
this process's root logger: each test puts it back, so no neighbour's log line meets a handler
on the run's closed stderr."""

import logging
from typing import Any

import pytest
from celery import Celery
from typer.testing import CliRunner

from app.cli.commands import app as cli
from app.config import get_settings
from tests.cli.inprocess import restored_logging, run_main


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch, tmp_path) -> list[list[str]]:  # type: ignore[no-untyped-def]
    argv: list[list[str]] = []
    monkeypatch.setattr(Celery, "worker_main", lambda self, args: argv.append(list(args)))
    monkeypatch.setattr("app.cli.commands._open_database", lambda settings: None)
    monkeypatch.setenv("PODIUM_ENV", "test")
    monkeypatch.setenv("PODIUM_DATABASE_URL", f"sqlite:///{tmp_path}/worker.db")
    monkeypatch.setenv("PODIUM_WORKER_CONCURRENCY", "2")
    monkeypatch.setenv("PODIUM_CODE_CONCURRENCY", "3")
    get_settings.cache_clear()
    with restored_logging():
        yield argv
    get_settings.cache_clear()


def _options(argv: list[str]) -> dict[str, Any]:
    return dict(arg.removeprefix("--").split("=", 1) for arg in argv if "=" in arg)


def test_a_worker_takes_both_queues_by_default(started):
    result = CliRunner().invoke(cli, ["worker"])
    assert result.exit_code == 0, result.output
    options = _options(started[0])
    assert options["queues"] == "celery,code" and options["concurrency"] == "2"


def test_a_worker_of_the_code_queue_runs_code_concurrency_runs_at_once(started):
    result = CliRunner().invoke(cli, ["worker", "-Q", "code"])
    assert result.exit_code == 0, result.output
    options = _options(started[0])
    assert options["queues"] == "code" and options["concurrency"] == "3"
    assert options["pool"] == "prefork"


def test_an_unknown_queue_is_refused_before_the_worker_starts(started):
    result = CliRunner().invoke(cli, ["worker", "--queues", "code,gpu"])
    assert result.exit_code == 2 and started == []
    said = " ".join(result.output.replace("│", " ").split())  # the error box, unwrapped
    assert "unknown queue 'gpu'" in said and "the queues are 'celery' and 'code'" in said


def test_a_worker_run_in_process_leaves_the_root_logger_as_it_was(started, capsys):
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    result = run_main("worker")
    assert result.returncode == 0, result.stderr
    assert started, "the worker did not start"  # configure_logging ran before it
    assert root.handlers == handlers and root.level == level
    # A neighbour's log line afterwards is written, not "Logging error" on a closed stream.
    logging.getLogger("podium.neighbour").error("after the worker")
    assert "Logging error" not in capsys.readouterr().err
