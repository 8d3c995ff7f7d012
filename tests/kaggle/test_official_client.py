"""The official `kaggle` command line (PyPI `kaggle`, pinned in the test extra), run unchanged as a
user would against a real Podium server on http://localhost:80, its LOCALHOST endpoint. The
assertions are on what the commands print and on the database. The server is shared by the
module; each test that submits makes a competition of its own, so that each passes alone and in
any order."""

import csv
import hashlib
import io
import os
import socket
import subprocess
import sys
import time
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from app.models import Competition, DataFile, Submission, SubmissionStatus
from tests.helpers import KEY, PERFECT, PUBLIC_HALF, csv_bytes, predictions
from tests.live_server import HTTP, SLUG, TEST, TRAIN, LiveServer, free_port, live_server

KAGGLE = Path(sys.executable).parent / "kaggle"
MISSING_COLUMN = csv_bytes(["id", "prediction"], *[[k, 0.5] for k in "abcdef"])
UNKNOWN_ID = predictions(a=0.9, b=0.1, c=0.8, d=0.2, e=0.7, zzz=0.3)


PORT_80_WAIT_SECONDS = 180


def _check_port_80() -> None:
    """Port 80 must be ours. Another run of this module (a second checkout on the same machine)
    may hold it for a minute: wait for it a while, then fail saying why."""
    deadline = time.monotonic() + PORT_80_WAIT_SECONDS
    while True:
        probe = socket.socket()
        try:
            probe.bind(("127.0.0.1", 80))
            return
        except PermissionError:
            pytest.fail(
                "this test serves Podium on port 80 (the kaggle client's http://localhost): run it as root"
            )
        except OSError as exc:
            if time.monotonic() > deadline:
                pytest.fail(
                    f"port 80 is busy ({exc}): the kaggle client only talks to http://localhost:80"
                )
        finally:
            probe.close()
        time.sleep(0.5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    if not KAGGLE.exists():
        pytest.fail(f"no kaggle client in {KAGGLE.parent}: pip install -e '.[test]'")
    _check_port_80()
    with live_server(tmp_path_factory.mktemp("kaggle"), 80) as running:
        yield running


def kaggle(
    server: LiveServer,
    *args: str,
    user: str = "alice",
    key: str | None = None,
    cwd: Path | None = None,
    proxy: str | None = None,
    python: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """The command line with ``args``; with ``python``, that code run with the client's Python
    API instead (``args`` its ``sys.argv[1:]``)."""
    home = server.root / f"home-{user}"
    home.mkdir(exist_ok=True)
    # A clean environment, as on a participant's machine: no proxy, no other Kaggle settings.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy") and not k.startswith("KAGGLE_")
    }
    env.update(
        HOME=str(home),
        KAGGLE_CONFIG_DIR=str(home / ".kaggle"),
        KAGGLE_API_ENVIRONMENT="LOCALHOST",
        KAGGLE_USERNAME=user,
        KAGGLE_KEY=key if key is not None else server.tokens[user],
    )
    if proxy is not None:
        env["HTTP_PROXY"] = proxy
    program = [sys.executable, "-c", python] if python is not None else [str(KAGGLE)]
    return subprocess.run(
        [*program, *args], env=env, cwd=cwd or home, capture_output=True, text=True, timeout=120
    )


def ref_of(result: subprocess.CompletedProcess[str]) -> int:
    line = next(line for line in result.stdout.splitlines() if line.startswith("Submission ref:"))
    return int(line.split(":")[1])


def table(result: subprocess.CompletedProcess[str]) -> list[list[str]]:
    """The rows of a table the client printed (after its header and rule lines)."""
    assert result.returncode == 0, result.stdout + result.stderr
    return [line.split() for line in result.stdout.splitlines()[2:]]


def own_competition(server: LiveServer) -> tuple[str, str]:
    """A new competition with the answer key, for one test: its slug and its title."""
    slug = f"own-{uuid.uuid4().hex[:10]}"
    title = f"Own {slug[4:]}"
    headers = {"Authorization": f"Bearer {server.tokens['host']}"}
    with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=30) as api:
        body = {
            "slug": slug,
            "title": title,
            "metric": {"name": "roc_auc"},
            "daily_submission_limit": 3,
        }
        assert api.post("/competitions", json=body).status_code == 201
        key = api.put(f"/competitions/{slug}/answer-key", files={"file": ("key.csv", KEY)})
        assert key.status_code == 201, key.text
    return slug, title


def submitted(server: LiveServer, slug: str, user: str, name: str, content: bytes) -> Submission:
    """A submission made through the API (not the client under test), once it is done."""
    made = HTTP.post(
        f"{server.url}/api/v1/competitions/{slug}/submissions",
        files={"file": (name, content)},
        headers={"Authorization": f"Bearer {server.tokens[user]}"},
        timeout=30,
    )
    assert made.status_code == 202, made.text
    return server.wait_until_done(made.json()["id"])


def test_list_and_search_competitions(server):
    with server.session() as session:
        every = set(session.scalars(select(Competition.slug)))
    assert {SLUG, "other"} <= every  # and those other tests made, in whatever order they ran
    assert {row[0] for row in table(kaggle(server, "competitions", "list"))} == every
    assert [row[0] for row in table(kaggle(server, "competitions", "list", "-s", "CHURN"))] == [
        SLUG
    ]
    assert (
        "No competitions found"
        in kaggle(server, "competitions", "list", "-s", "nothing-like-it").stdout
    )


def test_files_and_downloads(server, tmp_path):
    rows = table(kaggle(server, "competitions", "files", SLUG))
    assert {row[0]: int(row[1]) for row in rows} == {"test.csv": len(TEST), "train.csv": len(TRAIN)}

    one = kaggle(server, "competitions", "download", SLUG, "-f", "train.csv", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert (tmp_path / "train.csv").read_bytes() == TRAIN

    every = kaggle(server, "competitions", "download", SLUG, cwd=tmp_path)
    assert every.returncode == 0, every.stderr
    with zipfile.ZipFile(tmp_path / f"{SLUG}.zip") as bundle:
        assert {n: bundle.read(n) for n in bundle.namelist()} == {
            "test.csv": TEST,
            "train.csv": TRAIN,
        }
    with server.session() as session:
        stored = {f.name: (f.sha256, f.size_bytes) for f in session.scalars(select(DataFile))}
    assert stored["train.csv"] == (hashlib.sha256(TRAIN).hexdigest(), len(TRAIN))

    missing = kaggle(server, "competitions", "download", SLUG, "-f", "nope.csv", cwd=tmp_path)
    assert missing.returncode == 1 and "no data file 'nope.csv'" in missing.stderr


def test_submit_stores_and_scores_the_file(server, tmp_path):
    slug, title = own_competition(server)
    (tmp_path / "perfect.csv").write_bytes(PERFECT)
    result = kaggle(
        server,
        "competitions",
        "submit",
        "-c",
        slug,
        "-f",
        str(tmp_path / "perfect.csv"),
        "-m",
        "all right",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Successfully submitted to {title}" in result.stdout
    assert "2 submissions remaining today" in result.stdout
    sub = server.wait_until_done(ref_of(result))
    assert sub.status == SubmissionStatus.scored
    assert (sub.description, sub.filename, sub.size_bytes) == (
        "all right",
        "perfect.csv",
        len(PERFECT),
    )
    assert sub.sha256 == hashlib.sha256(PERFECT).hexdigest()
    assert Path(sub.path).read_bytes() == PERFECT
    # `submission-download`: the team gets its file back; another participant finds nothing.
    got = kaggle(
        server, "competitions", "submission-download", str(sub.id), "-p", str(tmp_path / "back")
    )
    assert got.returncode == 0, got.stdout + got.stderr
    assert (tmp_path / "back" / "perfect.csv").read_bytes() == PERFECT
    other = kaggle(
        server,
        "competitions",
        "submission-download",
        str(sub.id),
        "-p",
        str(tmp_path / "x"),
        user="bob",
    )
    assert other.returncode != 0 and "Traceback" not in other.stderr
    assert not (tmp_path / "x" / "perfect.csv").exists()


def test_format_errors_reach_the_terminal(server, tmp_path):
    slug, _title = own_competition(server)
    (tmp_path / "columns.csv").write_bytes(MISSING_COLUMN)
    header = kaggle(
        server, "competitions", "submit", "-c", slug, "-f", str(tmp_path / "columns.csv"), "-m", "x"
    )
    assert header.returncode == 1
    assert "'target'" in header.stderr and "Traceback" not in header.stderr

    (tmp_path / "ids.csv").write_bytes(UNKNOWN_ID)
    args = ("-f", str(tmp_path / "ids.csv"), "-m", "ids", "--wait", "60", "--poll-interval", "5")
    rows = kaggle(server, "competitions", "submit", "-c", slug, *args)
    assert rows.returncode == 1
    assert "failed to score" in rows.stderr and "zzz" in rows.stderr
    assert server.wait_until_done(ref_of(rows)).status == SubmissionStatus.failed


def test_submissions_list_the_teams_own(server):
    slug, _title = own_competition(server)
    perfect = submitted(server, slug, "alice", "perfect.csv", PERFECT)
    faulty = submitted(server, slug, "alice", "ids.csv", UNKNOWN_ID)
    assert (perfect.status, faulty.status) == (SubmissionStatus.scored, SubmissionStatus.failed)
    bobs = submitted(server, slug, "bob", "bobs.csv", PUBLIC_HALF)  # not alice's team's: unlisted
    rows = table(kaggle(server, "competitions", "submissions", slug))
    assert [int(row[0]) for row in rows] == [faulty.id, perfect.id]
    assert bobs.id not in [int(row[0]) for row in rows]
    by_file = {row[1]: row for row in rows}
    assert "SubmissionStatus.COMPLETE" in by_file["perfect.csv"] and "1.0" in by_file["perfect.csv"]
    assert "SubmissionStatus.ERROR" in by_file["ids.csv"]


def test_the_daily_quota_applies(server, tmp_path):
    slug, _title = own_competition(server)
    # Issue 9: a faulty file costs no quota (it stays in the history, as failed).
    assert submitted(server, slug, "alice", "ids.csv", UNKNOWN_ID).status == SubmissionStatus.failed
    (tmp_path / "half.csv").write_bytes(PUBLIC_HALF)
    args = ("competitions", "submit", "-c", slug, "-f", str(tmp_path / "half.csv"), "-m", "more")
    for _ in range(3):
        made = kaggle(server, *args)
        assert made.returncode == 0, made.stdout + made.stderr
    refused = kaggle(server, *args)
    assert refused.returncode == 1
    assert "used all 3 submissions for today" in refused.stderr
    with server.session() as session:
        ids = session.scalars(
            select(Submission.id).join(Competition).where(Competition.slug == slug)
        ).all()
    assert len(ids) == 4  # the faulty one and three accepted; the refused one is not stored
    # `submission-limits` (GetSubmissionLimits) reads the same quota.
    limits = kaggle(server, "competitions", "submission-limits", slug)
    assert limits.returncode == 0, limits.stdout + limits.stderr
    assert "Submissions today: 3" in limits.stdout
    assert "Remaining today: 0" in limits.stdout


def test_a_command_podium_does_not_serve_is_one_message_not_a_traceback(server):
    slug, _title = own_competition(server)
    for args, method, instead in (
        (
            ("competitions", "topics", "list", slug),
            "CompetitionApiService/ListCompetitionTopics",
            "announcements",
        ),
        (("datasets", "list"), "datasets.DatasetApiService/ListDatasets", "competitions commands"),
    ):
        done = kaggle(server, *args, user="host")
        assert done.returncode != 0
        assert "Traceback" not in done.stderr and "TypeError" not in done.stderr, done.stderr
        said = done.stdout + done.stderr
        assert f"Podium does not implement {method}" in said, said
        assert instead in said, said


def test_leaderboard_show_and_download_match_the_board(server, tmp_path):
    slug, _title = own_competition(server)
    assert submitted(server, slug, "alice", "a.csv", PERFECT).status == SubmissionStatus.scored
    assert submitted(server, slug, "bob", "b.csv", PUBLIC_HALF).status == SubmissionStatus.scored
    bob = {"Authorization": f"Bearer {server.tokens['bob']}"}
    board = HTTP.get(f"{server.url}/api/v1/competitions/{slug}/leaderboard", headers=bob).json()
    expected = [(row["team"], row["score"]) for row in board["rows"]]
    assert expected == [("alice", 1.0), ("bob", 0.5)]

    shown = table(kaggle(server, "competitions", "leaderboard", slug, "--show"))
    assert [(row[1], float(row[-1])) for row in shown] == expected

    downloaded = kaggle(server, "competitions", "leaderboard", slug, "--download", cwd=tmp_path)
    assert downloaded.returncode == 0, downloaded.stderr
    with zipfile.ZipFile(tmp_path / f"{slug}.zip") as archive:
        text = archive.read(f"{slug}-publicleaderboard.csv").decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["Rank"], r["TeamName"], float(r["Score"])) for r in rows] == [
        ("1", "alice", 1.0),
        ("2", "bob", 0.5),
    ]


def test_a_wrong_key_gets_the_usual_authentication_error(server):
    for user, key in (("alice", "pdm_not-a-real-token"), ("alice", server.tokens["bob"])):
        result = kaggle(server, "competitions", "list", user=user, key=key)
        assert result.returncode == 1
        assert "Authentication required" in result.stdout


def test_an_unknown_competition_is_named(server):
    result = kaggle(server, "competitions", "files", "nope")
    assert result.returncode == 1
    assert "no competition 'nope'" in result.stderr


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_http_proxy_reaches_a_podium_elsewhere(server, tmp_path, parser):
    # The client only knows http://localhost, where the module's server listens; HTTP_PROXY
    # sends its requests (in proxy form) to the server it names instead: here another Podium,
    # on another port, whose token alone is good there. Under both of uvicorn's HTTP parsers:
    # httptools takes the proxy form itself, h11 leaves it to app.kaggle.proxy.
    root = tmp_path / "elsewhere"
    root.mkdir()
    with live_server(root, free_port(), http=parser) as elsewhere:
        files = kaggle(
            elsewhere,
            "competitions",
            "download",
            SLUG,
            "-f",
            "test.csv",
            cwd=tmp_path,
            proxy=elsewhere.url,
        )
        log = elsewhere.log.read_text()
    assert files.returncode == 0, files.stderr
    assert (tmp_path / "test.csv").read_bytes() == TEST
    assert "test.csv" in log  # it reached the server the proxy named
    if parser == "h11":
        assert "POST http" in log  # it did arrive in proxy form


def test_simulation_commands_list_episodes_download_replays_and_logs(server, tmp_path):
    """``competitions episodes``, ``replay``, ``logs`` and ``team-submissions`` on a ConnectX
    phase whose two agents played their validation and at least one ladder episode."""
    import json

    from app.models import AgentRating, Episode, Team
    from tests.simulation.agents import RANDOM

    slug = f"sim-{uuid.uuid4().hex[:10]}"
    headers = {"Authorization": f"Bearer {server.tokens['host']}"}
    phase = {
        "name": "main",
        "submission_kind": "simulation",
        "environment": {"name": "connectx"},
        "simulation": {"episodes_in_flight": 1},
    }
    body = {"slug": slug, "title": "Sim", "metric": {"name": "accuracy"}, "phases": [phase]}
    with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=30) as api:
        assert api.post("/competitions", json=body).status_code == 201
    mine = submitted(server, slug, "alice", "main.py", RANDOM)
    theirs = submitted(server, slug, "bob", "main.py", RANDOM)
    assert (mine.status, theirs.status) == (SubmissionStatus.scored, SubmissionStatus.scored)
    deadline = time.monotonic() + 120
    while True:  # the ladder plays in the server's code lane
        with server.session() as session:
            done = session.scalar(
                select(Episode.id).where(Episode.kind == "ladder", Episode.status == "done")
            )
        if done is not None:
            break
        assert time.monotonic() < deadline, "no ladder episode was played"
        time.sleep(0.2)
    with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=30) as api:
        # The phase ends: the ladder stops playing for the rest of the module.
        ended = api.patch(f"/competitions/{slug}/phases/main", json={"end": _now_iso()})
        assert ended.status_code == 200, ended.text

    listed = kaggle(server, "competitions", "episodes", str(mine.id), "-v")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    rows = list(csv.DictReader(io.StringIO(listed.stdout)))
    assert rows, listed.stdout
    assert {"VALIDATION", "PUBLIC"} <= {str(r["type"]).rsplit("_", 1)[-1] for r in rows}, (
        listed.stdout
    )
    assert str(done) in {r["id"] for r in rows}

    replay = kaggle(server, "competitions", "replay", str(done), "-p", str(tmp_path))
    assert replay.returncode == 0, replay.stdout + replay.stderr
    document = json.loads((tmp_path / f"episode-{done}-replay.json").read_text())
    assert document["name"] == "connectx" and document["steps"]

    with server.session() as session:
        seats = session.get(Episode, done).agents
        own = next(s.position for s in seats if s.submission_id == mine.id)
        alice_team = session.scalar(select(Team.id).where(Team.id == mine.team_id))
        rating = session.get(AgentRating, mine.id)
    logs = kaggle(server, "competitions", "logs", str(done), str(own), "-p", str(tmp_path))
    assert logs.returncode == 0, logs.stdout + logs.stderr
    steps = json.loads((tmp_path / f"episode-{done}-agent-{own}-logs.json").read_text())
    assert any("duration" in step for step in steps)
    refused = kaggle(
        server, "competitions", "logs", str(done), str(own), "-p", str(tmp_path), user="bob"
    )
    assert refused.returncode == 1

    team = kaggle(server, "competitions", "team-submissions", str(alice_team), "-v")
    assert team.returncode == 0, team.stdout + team.stderr
    [row] = list(csv.DictReader(io.StringIO(team.stdout)))
    assert int(row["id"]) == mine.id
    assert float(row["publicScore"]) == pytest.approx(rating.mu - 3 * rating.sigma)


def _now_iso() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat()


def test_hosts_and_host_add_list_and_add_co_hosts_for_the_owner_only(server):
    slug, _title = own_competition(server)
    listed = kaggle(server, "competitions", "hosts", slug, user="host")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "host (owner)" in listed.stdout
    refused = kaggle(server, "competitions", "hosts", slug, user="alice")
    assert refused.returncode != 0 and "only the hosts" in refused.stdout + refused.stderr
    not_owner = kaggle(server, "competitions", "host-add", slug, "-u", "bob", "-y", user="alice")
    assert not_owner.returncode != 0 and "Traceback" not in not_owner.stderr
    added = kaggle(server, "competitions", "host-add", slug, "-u", "bob", "-y", user="host")
    assert added.returncode == 0, added.stdout + added.stderr
    assert f"User 'bob' added as a host of competition '{slug}'" in added.stdout
    assert "bob (cohost)" in kaggle(server, "competitions", "hosts", slug, user="host").stdout


def test_launch_publishes_a_draft_whose_checklist_passes_for_its_hosts_only(server):
    slug = f"draft-{uuid.uuid4().hex[:10]}"
    headers = {"Authorization": f"Bearer {server.tokens['host']}"}
    with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=30) as api:
        body = {"slug": slug, "title": "Draft", "metric": {"name": "roc_auc"}, "status": "draft"}
        assert api.post("/competitions", json=body).status_code == 201
        not_ready = kaggle(server, "competitions", "launch", slug, user="host")
        assert not_ready.returncode != 0 and "Traceback" not in not_ready.stderr
        assert "not ready to publish" in not_ready.stdout + not_ready.stderr
        assert (
            api.put(f"/competitions/{slug}/answer-key", files={"file": ("k.csv", KEY)}).status_code
            == 201
        )
        assert api.patch(f"/competitions/{slug}", json={"description": "A task"}).status_code == 200
        later = kaggle(
            server, "competitions", "launch", slug, "--at", "2031-01-01T00:00:00Z", user="host"
        )
        assert (
            later.returncode != 0 and "no launch scheduled for later" in later.stdout + later.stderr
        )
        assert kaggle(server, "competitions", "launch", slug, user="alice").returncode != 0
        launched = kaggle(server, "competitions", "launch", slug, user="host")
        assert launched.returncode == 0, launched.stdout + launched.stderr
        assert f'Competition "{slug}" launched.' in launched.stdout
        assert api.get(f"/competitions/{slug}").json()["status"] == "published"


def test_settings_get_shows_the_title_and_deadline_to_hosts_only(server):
    slug, title = own_competition(server)
    shown = kaggle(server, "competitions", "settings", "get", slug, user="host")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"title: {title}" in shown.stdout and f"competition_name: {slug}" in shown.stdout
    refused = kaggle(server, "competitions", "settings", "get", slug, user="alice")
    assert refused.returncode != 0 and "only the hosts" in refused.stdout + refused.stderr


# The host commands' tests (tests/kaggle/official_client_hosting.py) run in this module, on its
# server: as a module of their own they started a second server on port 80 in another xdist
# worker, which waited for this one to end (two minutes of the suite's time).
from tests.kaggle.official_client_hosting import *  # noqa: E402, F403
