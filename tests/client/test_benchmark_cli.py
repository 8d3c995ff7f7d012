"""Benchmark mode from the command line, against a real server: ``benchmark: true`` in the
competition file, ``podium competitions settings --benchmark / --every-submission``, and the
rules said on one error line (a participant refused too)."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.test_participant_cli import one_error_line, podium
from tests.live_server import HTTP, LiveServer, free_port, live_server

SPEC = """\
slug: {slug}
title: A benchmark
description: Forever.
metric:
  name: roc_auc
start: 2020-01-01
{extra}benchmark: true
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("benchmark-cli"), free_port()) as running:
        yield running


def _as(server: LiveServer, home: Path, who: str, *args: str) -> subprocess.CompletedProcess[str]:
    return podium(home, *args, PODIUM_URL=server.url, PODIUM_TOKEN=server.tokens[who])


def _shown(server: LiveServer, slug: str) -> dict:  # type: ignore[type-arg]
    headers = {"Authorization": f"Bearer {server.tokens['host']}"}
    response = HTTP.get(f"{server.url}/api/v1/competitions/{slug}", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_benchmark_from_its_file_then_its_settings(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    spec = home / "bench.yaml"
    spec.write_text(SPEC.format(slug="forever", extra=""))
    created = _as(server, home, "host", "competitions", "create", str(spec))
    assert created.returncode == 0, created.stderr
    assert _shown(server, "forever")["benchmark"] is True

    every = _as(server, home, "host", "competitions", "settings", "forever", "--every-submission")
    assert every.returncode == 0, every.stderr
    assert "board_every_submission" in every.stdout
    assert _shown(server, "forever")["board_every_submission"] is True
    refused = _as(server, home, "host", "competitions", "settings", "forever", "--no-benchmark")
    assert "a board of every submission is a benchmark's" in one_error_line(refused)
    # A draft: to a participant it is not there at all.
    alice = _as(server, home, "alice", "competitions", "settings", "forever", "--team-best")
    assert alice.returncode != 0 and "no competition 'forever'" in one_error_line(alice)
    assert _shown(server, "forever")["board_every_submission"] is True


def test_a_benchmark_file_with_a_deadline_names_the_rule(
    server: LiveServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    spec = home / "bench.yaml"
    spec.write_text(SPEC.format(slug="dated", extra="deadline: 2999-01-01\n"))
    line = one_error_line(_as(server, home, "host", "competitions", "create", str(spec)))
    assert "never ends" in line
