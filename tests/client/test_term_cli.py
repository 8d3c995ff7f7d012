"""The whole term without curl (issue 42), on the command line against a real server: a host
extends a phase and releases the final test set with a phase; students read each phase's board
and their submissions by phase, every column at its precision, a blind phase said in words; a
crashed script's log and why it failed."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from app.jail.bwrap import JailUnavailable, check_jail
from app.models import Phase
from tests.client.test_participant_cli import one_error_line, podium
from tests.conftest import skip_or_fail
from tests.helpers import csv_bytes
from tests.live_server import HTTP, LiveServer, free_port, live_server

NOW = datetime.now(UTC)
KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 4.0, "Private"],
)
# Public errors 0.37 and 0: RMSE 0.26163..., MAE 0.185 (at precision 2: 0.18 or 0.19).
ALICE = csv_bytes(["id", "y"], ["a", 1.37], ["b", 2], ["c", 3.2], ["d", 4])
COLUMNS = [
    {"key": "rmse", "title": "RMSE", "metric": {"name": "rmse"}, "precision": 4},
    {"key": "mae", "title": "MAE", "metric": {"name": "mae"}, "precision": 2},
]


def _iso(days: float) -> str:
    return (NOW + timedelta(days=days)).isoformat()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("term-cli"), free_port()) as running:
        _api(running, "post", "/competitions", json=_class_body("term"))
        for phase in ("dev", "final"):
            _api(
                running,
                "put",
                f"/competitions/term/phases/{phase}/answer-key",
                files={"file": ("key.csv", KEY)},
            )
        yield running


def _class_body(slug: str) -> dict:  # type: ignore[type-arg]
    # A public dev phase and a blind final phase, open together.
    return {
        "slug": slug,
        "title": "A class",
        "columns": COLUMNS,
        "phases": [
            {"name": "dev", "start": _iso(-3), "end": _iso(20), "counts": "best"},
            {"name": "final", "start": _iso(-1), "end": _iso(20), "board": "blind"},
        ],
    }


def _api(server: LiveServer, method: str, path: str, who: str = "host", **kwargs):  # type: ignore[no-untyped-def]
    headers = {"Authorization": f"Bearer {server.tokens[who]}"}
    response = HTTP.request(method, f"{server.url}/api/v1{path}", headers=headers, **kwargs)
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


def _as(server: LiveServer, home: Path, who: str, *args: str):  # type: ignore[no-untyped-def]
    return podium(home, *args, PODIUM_URL=server.url, PODIUM_TOKEN=server.tokens[who])


def test_a_host_extends_a_phase_and_changes_its_quota(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    changed = _as(
        server,
        home,
        "host",
        *("competitions", "phase", "term", "dev", "--end", "2999-06-30", "--daily-limit", "7"),
    )
    assert changed.returncode == 0, changed.stderr
    assert "phase dev of term changed: daily_submission_limit, end" in changed.stdout
    dev = next(p for p in _api(server, "get", "/competitions/term")["phases"] if p["name"] == "dev")
    assert dev["end"].startswith("2999-06-30T23:59:59")
    assert dev["daily_submission_limit"] == 7
    # Alone, the command shows the phase's settings.
    shown = _as(server, home, "host", "competitions", "phase", "term", "dev")
    assert "2999-06-30T23:59:59" in shown.stdout and "7" in shown.stdout
    # The API's rules, in words, naming the field: a date out of range, a date typed the
    # wrong way, a participant.
    far = _as(server, home, "host", "competitions", "phase", "term", "dev", "--end", "9999-12-31")
    assert "end" in one_error_line(far) and "between 1970-01-01 and 2999-12-31" in far.stderr
    typed = _as(server, home, "host", "competitions", "phase", "term", "dev", "--end", "31/12/2026")
    assert "'31/12/2026' is not a date: write a date as 2026-12-31" in one_error_line(typed)
    refused = _as(
        server, home, "alice", "competitions", "phase", "term", "dev", "--end", "2999-01-01"
    )
    assert "host" in one_error_line(refused)
    # The competition's own settings too.
    title = _as(server, home, "host", "competitions", "settings", "term", "--title", "Term one")
    assert title.returncode == 0, title.stderr
    assert _api(server, "get", "/competitions/term")["title"] == "Term one"


def test_the_final_test_set_is_released_with_its_phase(server: LiveServer, tmp_path: Path) -> None:
    slug = "release"
    body = {
        **_class_body(slug),
        "phases": [
            {"name": "dev", "start": _iso(-3), "end": _iso(5)},
            {"name": "final", "start": _iso(5), "end": _iso(9)},
        ],
    }
    _api(server, "post", "/competitions", json=body)
    home = tmp_path / "home"
    final_test = home / "final_test.csv"
    hidden = home / "answers_input.csv"
    home.mkdir()
    final_test.write_text("id\nq\n")
    hidden.write_text("id\nz\n")
    sent = _as(
        server,
        home,
        "host",
        *("competitions", "files", slug, str(final_test), "--release-with", "final"),
    )
    assert sent.returncode == 0, sent.stderr
    assert "final_test.csv (5 bytes), public when phase final starts" in sent.stdout
    secret = _as(server, home, "host", "competitions", "files", slug, str(hidden), "--hidden")
    assert "hidden: code runs only" in secret.stdout
    wrong = _as(
        server, home, "host", "competitions", "files", slug, str(final_test), "--release-with", "x"
    )
    assert "release_with: 'x' is not a phase" in one_error_line(wrong)

    listed = _as(server, home, "alice", "files", slug)
    assert "final_test.csv" not in listed.stdout and "answers_input" not in listed.stdout
    hosted = _as(server, home, "host", "files", slug).stdout
    assert "when final starts" in hosted and "never (code runs only)" in hosted
    with server.session() as session:
        session.execute(
            update(Phase).where(Phase.name == "final").values(start=NOW - timedelta(minutes=5))
        )
        session.commit()
    listed = _as(server, home, "alice", "files", slug)
    assert "final_test.csv" in listed.stdout and "answers_input" not in listed.stdout
    # Changed back without uploading it again.
    back = _as(server, home, "host", "competitions", "release", slug, "final_test.csv", "--hidden")
    assert back.returncode == 0 and "hidden: code runs only" in back.stdout
    assert "final_test.csv" not in _as(server, home, "alice", "files", slug).stdout


def test_students_read_each_phases_board_and_their_submissions(
    server: LiveServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    preds = home / "preds.csv"
    home.mkdir()
    preds.write_bytes(ALICE)
    # Two phases open: the CLI user is told to name one with --phase.
    unnamed = _as(server, home, "alice", "submit", "term", str(preds))
    assert "--phase NAME" in one_error_line(unnamed)
    dev = _as(server, home, "alice", "submit", "term", str(preds), "--phase", "dev", "--wait")
    assert dev.returncode == 0, dev.stderr
    assert "rmse: public 0.2616" in dev.stdout and "mae: public 0.1" in dev.stdout
    final = _as(server, home, "alice", "submit", "term", str(preds), "--phase", "final", "--wait")
    assert final.returncode == 0, final.stderr
    assert "None" not in final.stdout
    assert "blind: phase 'final' shows no score until it ends" in final.stdout

    # Without --phase: the board the student may read (the public dev one), every column at its
    # precision.
    board = _as(server, home, "alice", "leaderboard", "term")
    assert board.returncode == 0, board.stderr
    header, row = board.stdout.splitlines()[:2]
    assert header.split()[:4] == ["RANK", "TEAM", "RMSE", "MAE"]
    assert row.split()[:4] == ["1", "alice", "0.2616", "0.18"] or row.split()[:4] == [
        "1",
        "alice",
        "0.2616",
        "0.19",
    ]
    assert "(public board of phase dev)" in board.stdout
    named = _as(server, home, "alice", "leaderboard", "term", "--phase", "dev")
    assert named.stdout == board.stdout
    blind = _as(server, home, "alice", "leaderboard", "term", "--phase", "final")
    assert "phase 'final' is blind: its scores appear when it ends" in one_error_line(blind)

    mine = _as(server, home, "alice", "submissions", "term", "--phase", "final")
    assert mine.returncode == 0, mine.stderr
    lines = mine.stdout.splitlines()
    assert len(lines) == 2 and "blind until the phase ends" in lines[1]
    assert "final" in lines[1] and "0.26" not in mine.stdout
    everything = _as(server, home, "alice", "submissions", "term").stdout
    assert "0.2616" in everything and "blind until the phase ends" in everything


SCRIPT = b"""import pandas as pd
train = pd.DataFrame({"x": [1, 2]})
print("training...")
y = train["target"]
"""


def test_a_crashed_scripts_failure_and_log(server: LiveServer, tmp_path: Path) -> None:
    try:
        check_jail()
    except JailUnavailable as exc:
        skip_or_fail(f"the jail cannot start here: {exc}")
    body = {
        "slug": "code-term",
        "title": "Code",
        "metric": {"name": "rmse"},
        "phases": [
            {"name": "main", "submission_kind": "code", "code_limits": {"wall_seconds": 120}}
        ],
    }
    _api(server, "post", "/competitions", json=body)
    _api(server, "put", "/competitions/code-term/answer-key", files={"file": ("key.csv", KEY)})
    home = tmp_path / "home"
    home.mkdir()
    script = home / "main.py"
    script.write_bytes(SCRIPT)
    ran = _as(server, home, "alice", "submit", "code-term", str(script), "--wait")
    line = one_error_line(ran)
    assert "KeyError: 'target'" in line and "exit status 1" in line
    submission_id = int(ran.stdout.split()[1])
    log = _as(server, home, "alice", "submissions", "log", str(submission_id))
    assert log.returncode == 0, log.stderr
    assert "training..." in log.stdout and "KeyError: 'target'" in log.stdout
    assert 'File "/kaggle/code/main.py", line 4' in log.stdout
    assert "/kaggle/lib/python/" in log.stdout and str(server.root) not in log.stdout
    assert "Notebook Threw Exception" in log.stderr
    # Another participant: no such submission.
    other = _as(server, home, "bob", "submissions", "log", str(submission_id))
    assert f"no submission {submission_id}" in one_error_line(other)
    # The host gives the phase a longer clock; the other limits stay as they were.
    longer = _as(
        server, home, "host", "competitions", "phase", "code-term", "main", "--wall-seconds", "300"
    )
    assert longer.returncode == 0, longer.stderr
    assert "code wall seconds  300" in longer.stdout
    limits = _api(server, "get", "/competitions/code-term")["phases"][0]["code_limits"]
    assert limits["wall_seconds"] == 300 and limits["memory_mb"] == 2048


def test_a_host_adds_and_removes_a_co_host(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = _as(server, home, "host", "competitions", "hosts", "term", "--add", "bob")
    assert added.returncode == 0, added.stderr
    assert "bob is now a co-host of term" in added.stdout
    assert any(line.split()[:2] == ["bob", "cohost"] for line in added.stdout.splitlines())
    refused = _as(server, home, "alice", "competitions", "hosts", "term", "--add", "alice")
    assert one_error_line(refused)
    removed = _as(server, home, "host", "competitions", "hosts", "term", "--remove", "bob")
    assert removed.returncode == 0 and "bob is no longer a host" in removed.stdout
    # The metric file goes up from the CLI too; this one is refused with the API's reason.
    metric_file = home / "metric.py"
    metric_file.write_text("def score(solution, submission, row_id_column_name):\n    return 1.0\n")
    refused_metric = _as(server, home, "host", "competitions", "metric", "term", str(metric_file))
    assert "a metric file needs a competition created with metric name 'custom'" in one_error_line(
        refused_metric
    )


def test_create_dry_run_and_every_yaml_error_with_its_line(
    server: LiveServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    spec = home / "c.yaml"
    spec.write_text(
        "slug: dry-one\ntitle: Dry\nmetric: {name: rmse}\nstart: 2026-01-01\ndeadline: 2999-01-01\n"
    )
    dry = _as(server, home, "host", "competitions", "create", str(spec), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "c.yaml is valid: it would create dry-one" in dry.stdout
    gone = HTTP.get(
        f"{server.url}/api/v1/competitions/dry-one",
        headers={"Authorization": f"Bearer {server.tokens['host']}"},
    )
    assert gone.status_code == 404
    spec.write_text(
        "slug: Bad Slug\ntitle: Dry\ncolumns:\n  - key: a b\n    metric: {name: rmse}\n"
        "start: 31/12/2026\n"
    )
    many = _as(server, home, "host", "competitions", "create", str(spec), "--dry-run")
    assert many.returncode == 2
    errors = many.stderr.splitlines()
    assert len(errors) == 3, many.stderr
    assert errors[0].startswith("error: c.yaml line 1: slug: 'Bad Slug' is not allowed")
    assert errors[1].startswith("error: c.yaml line 4: columns.0.key: 'a b' is not allowed")
    assert errors[2].startswith("error: c.yaml line 6: start: '31/12/2026' is not a date")
