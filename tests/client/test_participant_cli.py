"""Podium's own participant CLI (`podium login`, `submit --wait`, ...) run as a user would
against a real server: its ``main()`` in this process with a user's environment, and the console
script as a process once. Assertions are on what it prints and on the database."""

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from app.models import Submission, SubmissionStatus
from tests.cli.inprocess import run_main
from tests.helpers import PERFECT, predictions
from tests.live_server import SLUG, TEST, TRAIN, LiveServer, free_port, live_server

PODIUM = Path(sys.executable).parent / "podium"
UNKNOWN_ID = predictions(a=0.9, b=0.1, c=0.8, d=0.2, e=0.7, zzz=0.3)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("cli"), free_port()) as running:
        yield running


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def podium(
    home: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``podium ARGS`` as a user's shell runs it (its own HOME, no PODIUM_ settings but ``env``,
    no proxy), in this process (tests/cli/inprocess.py; ``podium_process`` is the real one)."""
    home.mkdir(parents=True, exist_ok=True)
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PODIUM_") and not k.lower().endswith("_proxy")
    }
    clean.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **env)
    return run_main(*args, env=clean, cwd=cwd or home)


def podium_process(
    home: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """The console script itself, in a process of its own."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PODIUM_") and not k.lower().endswith("_proxy")
    }
    clean.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **env)
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [str(PODIUM), *args],
        env=clean,
        cwd=cwd or home,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_login_keeps_url_and_token_for_the_user_only(server, home):
    result = podium(home, "login", server.url, "--token", server.tokens["bob"])
    assert result.returncode == 0, result.stderr
    assert "as bob" in result.stdout
    config = home / ".config" / "podium" / "config.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text()) == {"url": server.url, "token": server.tokens["bob"]}
    listed = podium(home, "competitions")
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0] for line in listed.stdout.splitlines()[1:]} == {SLUG, "other"}


def test_a_wrong_token_is_refused_and_not_saved(server, home):
    assert "401" in one_error_line(podium(home, "login", server.url, "--token", "pdm_nope"))
    assert not (home / ".config" / "podium" / "config.json").exists()
    assert "not logged in" in one_error_line(podium(home, "competitions"))


def test_environment_variables_stand_in_for_the_config(server, home, tmp_path):
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["bob"]}
    files = podium(home, "files", SLUG, **env)
    assert files.returncode == 0, files.stderr
    assert {line.split()[0]: int(line.split()[1]) for line in files.stdout.splitlines()[1:]} == {
        "test.csv": len(TEST),
        "train.csv": len(TRAIN),
    }
    one = podium(home, "download", SLUG, "train.csv", "--path", str(tmp_path / "one"), **env)
    assert one.returncode == 0, one.stderr
    assert (tmp_path / "one" / "train.csv").read_bytes() == TRAIN
    every = podium(home, "download", SLUG, "--path", str(tmp_path / "all"), **env)
    assert every.returncode == 0, every.stderr
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["test.csv", "train.csv"]
    assert "no data file" in one_error_line(podium(home, "download", SLUG, "nope.csv", **env))
    bad = {"PODIUM_URL": server.url, "PODIUM_TOKEN": "pdm_wrong"}
    assert "unknown or revoked token" in one_error_line(podium(home, "competitions", **bad))


def test_submit_wait_prints_the_score_and_the_board_shows_it(server, home, tmp_path):
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["bob"]}
    (tmp_path / "perfect.csv").write_bytes(PERFECT)
    result = podium(
        home, "submit", SLUG, str(tmp_path / "perfect.csv"), "-m", "mine", "--wait", **env
    )
    assert result.returncode == 0, result.stderr
    submission_id = int(result.stdout.split()[1])
    assert f"submission {submission_id} scored: public 1.0" in result.stdout
    with server.session() as session:
        sub = session.get(Submission, submission_id)
        assert sub is not None and sub.status == SubmissionStatus.scored
        assert (sub.description, Path(sub.path).read_bytes()) == ("mine", PERFECT)

    board = podium(home, "leaderboard", SLUG, **env)
    assert board.returncode == 0, board.stderr
    row = board.stdout.splitlines()[1].split()
    assert row[:4] == ["1", "bob", "1.00000", "1"]  # at the competition's 5 decimals
    low, high = (float(v) for v in row[4].split(".."))  # the score's 95 % interval
    assert low <= 1.0 <= high and row[5] == "1"  # and its band
    assert "private leaderboard opens" in one_error_line(
        podium(home, "leaderboard", SLUG, "--private", **env)
    )

    selected = podium(home, "select", str(submission_id), **env)
    assert selected.returncode == 0 and f"submission {submission_id} selected" in selected.stdout
    with server.session() as session:
        assert session.scalar(select(Submission.selected).where(Submission.id == submission_id))


def test_submit_wait_on_a_failing_file_prints_the_reason(server, home, tmp_path):
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["bob"]}
    (tmp_path / "ids.csv").write_bytes(UNKNOWN_ID)
    line = one_error_line(
        podium(home, "submit", SLUG, str(tmp_path / "ids.csv"), "-m", "oops", "--wait", **env)
    )
    assert "failed" in line and "zzz" in line
    rows = podium(home, "submissions", SLUG, **env)
    assert rows.returncode == 0, rows.stderr
    failed = next(line for line in rows.stdout.splitlines() if "oops" in line)
    assert failed.split()[1] == "failed" and "zzz" in failed
    with server.session() as session:
        statuses = session.scalars(
            select(Submission.status).where(Submission.description == "oops")
        ).all()
    assert statuses == [SubmissionStatus.failed]


def test_a_large_upload_shows_progress(server, home, tmp_path):
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["alice"]}
    big = tmp_path / "big.csv"
    rows = "".join(f"pad{i:07d},0.5\n" for i in range(120_000))  # about 1.6 MB of ids the key lacks
    big.write_text("id,target\n" + rows)
    result = podium(home, "submit", SLUG, str(big), "-m", "big", **env)
    assert result.returncode == 0, result.stderr
    assert "uploading" in result.stderr
    with server.session() as session:
        size = session.scalar(select(Submission.size_bytes).where(Submission.description == "big"))
    assert size == big.stat().st_size


def test_errors_are_one_line_and_exit_2(server, home, tmp_path):
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["alice"]}
    assert "file not found" in one_error_line(
        podium(home, "submit", SLUG, str(tmp_path / "none.csv"), **env)
    )
    assert "no competition 'nope'" in one_error_line(podium(home, "submissions", "nope", **env))
    assert "no submission 999" in one_error_line(podium(home, "select", "999", **env))
    assert "http://" in one_error_line(podium(home, "login", "localhost:1", "--token", "x"))
    unreachable = {"PODIUM_URL": f"http://127.0.0.1:{free_port()}", "PODIUM_TOKEN": "x"}
    assert "cannot reach" in one_error_line(podium(home, "competitions", **unreachable))


def test_submit_names_its_phase_and_entry_details(server, home, tmp_path):
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["bob"]}
    (tmp_path / "perfect.csv").write_bytes(PERFECT)
    path = str(tmp_path / "perfect.csv")
    accepted = podium(home, "submit", SLUG, path, "--phase", "main", **env)
    assert accepted.returncode == 0, accepted.stderr
    with server.session() as session:
        sub = session.get(Submission, int(accepted.stdout.split()[1]))
        assert sub is not None and sub.phase.name == "main"
    assert "no phase 'nope'" in one_error_line(
        podium(home, "submit", SLUG, path, "--phase", "nope", **env)
    )
    # The details reach the server, which names the field it does not ask for.
    refused = one_error_line(
        podium(home, "submit", SLUG, path, "--detail", "method_name=GBM", **env)
    )
    assert "unknown field(s) method_name" in refused
    assert "KEY=VALUE" in one_error_line(
        podium(home, "submit", SLUG, path, "--detail", "novalue", **env)
    )


def test_the_console_script_prints_one_error_line_and_exits_2_as_a_process(server, home, tmp_path):
    # The installed entry point, exit status and streams of a real process (the other tests run
    # the same main() in this one).
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["alice"]}
    assert "file not found" in one_error_line(
        podium_process(home, "submit", SLUG, str(tmp_path / "none.csv"), **env)
    )
    listed = podium_process(home, "competitions", **env)
    assert listed.returncode == 0, listed.stderr
    assert SLUG in listed.stdout


def test_submit_keeps_its_receipt_and_verify_finds_it_in_the_servers_record(server, home, tmp_path):
    env = {"PODIUM_URL": server.url, "PODIUM_TOKEN": server.tokens["bob"]}
    (tmp_path / "perfect.csv").write_bytes(PERFECT)
    result = podium(home, "submit", SLUG, str(tmp_path / "perfect.csv"), **env)
    assert result.returncode == 0, result.stderr
    kept = home / ".config" / "podium" / "receipts" / SLUG
    (receipt,) = kept.iterdir()
    assert f"receipt kept in {receipt}" in result.stdout
    body = json.loads(receipt.read_text())
    assert body["kind"] == "received" and body["body"]["submission"] == int(
        result.stdout.split()[1]
    )
    # No account needed: the server's URL and the receipts.
    verified = podium(home, "verify", f"{server.url}/c/{SLUG}", "--receipts", str(kept))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "receipts checked: 1" in verified.stdout
    assert verified.stdout.rstrip().endswith("verdict: OK")
    # A receipt the server never signed breaks the verdict: exit 1.
    forged = json.loads(receipt.read_text())
    forged["body"]["sha256"] = "0" * 64
    (kept / "forged.json").write_text(json.dumps(forged))
    broken = podium(home, "verify", f"{server.url}/c/{SLUG}", "--receipts", str(kept))
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "BROKEN: receipt forged.json: not signed by the server's key" in broken.stdout
