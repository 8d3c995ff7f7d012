"""Imported scoring programs run in the real jail for every submission, as their platforms run
them: a bundle of each format is imported, a participant uploads through the API, the program
scores it, and the board ranks the score like any other. A failing program fails the submission
with a short message for the participant and its output's end for the host; a hostile one is
contained (each attack first tried outside the jail, where it works: the control)."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.jail.bwrap import JailUnavailable, check_jail
from app.models import AnswerKey, Competition, Phase
from tests.asgi_client import TestClient
from tests.bundles.builders import (
    CODALAB_EVALUATE_PY2,
    codabench_files,
    codalab_files,
    evalai_files,
    make_zip,
)
from tests.bundles.test_import_api import import_bundle
from tests.conftest import Caller, skip_or_fail
from tests.helpers import API, create_competition, csv_bytes, set_competition, upload_key

SECRET = f"s3cret-{uuid.uuid4().hex}"
METHOD = {"method": "nearest neighbours"}  # the Codabench fixture's fact sheet asks for it
PI = "3.14159265359"


@pytest.fixture(scope="module")
def jail() -> None:
    try:
        check_jail()
    except JailUnavailable as exc:
        skip_or_fail(f"the jail cannot start here: {exc}")


def accept_rules(client: TestClient, caller: Caller, slug: str) -> None:
    """A bundle's terms page is its competition's rules: a participant accepts them first."""
    competition = client.get(f"{API}/competitions/{slug}", headers=caller.headers).json()
    if competition.get("rules"):
        accepted = client.post(f"{API}/competitions/{slug}/rules/accept", headers=caller.headers)
        assert accepted.status_code == 200, accepted.text


def opened(client: TestClient, host: Caller, slug: str) -> list[str]:
    """Every phase open now, and the competition published through the launch checklist (the
    reference data is each phase's answer key; the program needs no sample); the phases' names."""
    phases = client.get(f"{API}/competitions/{slug}", headers=host.headers).json()["phases"]
    factory = client.app.state.session_factory  # type: ignore[attr-defined]
    set_competition(
        factory,
        slug,
        start=datetime(2020, 1, 1, tzinfo=UTC),
        deadline=datetime(2099, 1, 1, tzinfo=UTC),
    )
    published = client.post(f"{API}/competitions/{slug}/publish", headers=host.headers)
    assert published.status_code == 200, published.text
    return [p["name"] for p in phases]


def submitted(
    client: TestClient,
    caller: Caller,
    host: Caller,
    slug: str,
    phase: str,
    name: str,
    data: bytes,
    details: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Upload through the API (scored at once by the eager queue); the host's and the
    participant's views of the submission."""
    accept_rules(client, caller, slug)
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": (name, data, "application/octet-stream")},
        data={"phase": phase, **({"details": json.dumps(details)} if details else {})},
        headers=caller.headers,
    )
    assert response.status_code in (201, 202), response.text
    sid = response.json()["id"]
    as_host = client.get(f"{API}/submissions/{sid}", headers=host.headers).json()
    as_owner = client.get(f"{API}/submissions/{sid}", headers=caller.headers).json()
    return as_host, as_owner


def board(client: TestClient, caller: Caller, slug: str, phase: str, which: str = "public") -> Any:
    response = client.get(
        f"{API}/competitions/{slug}/leaderboard",
        params={"phase": phase, "board": which},
        headers=caller.headers,
    )
    assert response.status_code == 200, response.text
    return response.json()


# --- each format, scored by its own program -----------------------------------------------------


def test_an_evalai_script_with_relative_imports_and_numpy_results_scores_split_by_split(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    assert import_bundle(client, host, make_zip(evalai_files()), slug="rng").status_code == 201
    phases = opened(client, host, "rng")
    test_phase = phases[1]
    answer = json.dumps({"a": 1, "b": 2, "c": 0, "d": 4}).encode()  # 3 of the 4 right
    got, own = submitted(client, alice, host, "rng", test_phase, "answer.json", answer)
    assert got["status"] == "scored", got
    # train_split is public (visibility 3), test_split host-only (1): the private board's.
    assert got["scores"]["total"] == {"public": 1.0, "private": 0.75}
    assert got["scores"]["metric1"] == {"public": 0.75, "private": 0.25}
    assert got["scores"]["metric2"] == {"public": None, "private": None}  # not returned: blank
    # evaluate() was passed submission_metadata as EvalAI's worker passes it.
    assert got["metric_details"]["submission_result"] == {"team": "alice", "hits": 0.75}
    assert own["public_score"] == 1.0 and "private_score" not in own
    rows = board(client, alice, "rng", test_phase)["rows"]
    assert [(r["team"], r["score"]) for r in rows] == [("alice", 1.0)]
    assert [r["score"] for r in board(client, host, "rng", test_phase, "private")["rows"]] == [0.75]


def test_a_codabench_program_hard_coding_app_input_scores_an_unzipped_results_zip(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    assert import_bundle(client, host, make_zip(codabench_files()), slug="iris").status_code == 201
    development = opened(client, host, "iris")[0]
    results = make_zip({"iris_valid.predict": "1\n2\n1\n"})  # 2 of 3 right
    got, _own = submitted(
        client, alice, host, "iris", development, "results.zip", results, details=METHOD
    )
    assert got["status"] == "scored", got
    two_thirds = 2 / 3
    assert got["scores"]["set1_score"]["public"] == pytest.approx(two_thirds)
    assert got["scores"]["set2_score"]["public"] == 0.5
    # The ranking column is Codabench's computation: avg over columns 0 and 1.
    assert got["scores"]["mean_score"]["public"] == pytest.approx((two_thirds + 0.5) / 2)
    assert got["public_score"] == pytest.approx((two_thirds + 0.5) / 2)
    # Read from input/res/metadata, as Codabench's prediction step leaves it (a hidden column).
    assert got["scores"]["duration"]["public"] == 0.0
    rows = board(client, alice, "iris", development)["rows"]
    assert [r["team"] for r in rows] == ["alice"]
    assert rows[0]["score"] == pytest.approx((two_thirds + 0.5) / 2, abs=1e-2)


def test_a_codalab_program_run_as_its_metadata_command_writes_scores_txt_without_spaces(
    jail: None, client: TestClient, host: Caller, alice: Caller, bob: Caller
) -> None:
    assert import_bundle(client, host, make_zip(codalab_files()), slug="pi").status_code == 201
    development = opened(client, host, "pi")[0]
    # A plain file is passed as it is, under its own name, in input/res.
    got, _ = submitted(client, alice, host, "pi", development, "answer.txt", b"3.14")
    assert got["status"] == "scored", got
    assert got["scores"]["correct"]["public"] == 1.0
    assert got["scores"]["difference"]["public"] == pytest.approx(0.001593, abs=1e-6)
    far, _ = submitted(
        client, bob, host, "pi", development, "answer.zip", make_zip({"answer.txt": "3"})
    )
    assert far["status"] == "scored", far
    assert far["scores"]["correct"]["public"] == 0.0
    # correct sorts ascending, as the bundle says (CodaLab's sort: asc), however odd.
    assert [r["team"] for r in board(client, host, "pi", development)["rows"]] == ["bob", "alice"]


def test_a_submission_to_a_program_phase_is_stored_as_is_without_csv_intake(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    assert import_bundle(client, host, make_zip(codalab_files()), slug="pi").status_code == 201
    development = opened(client, host, "pi")[0]
    data = b"\x00\x01 not a CSV at all \xff"
    accept_rules(client, alice, "pi")
    response = client.post(
        f"{API}/competitions/pi/submissions",
        files={"file": ("answer.bin", data, "application/octet-stream")},
        data={"phase": development},
        headers=alice.headers,
    )
    assert response.status_code in (201, 202), response.text
    sid = response.json()["id"]
    stored = client.get(f"{API}/submissions/{sid}/file", headers=alice.headers)
    assert stored.status_code == 200 and stored.content == data


RUNTIME = """
import json
import numpy, pandas, psutil, scipy, sklearn, yaml
import sklearn.metrics

imported = [numpy, pandas, psutil, scipy, sklearn, yaml]
accuracy = sklearn.metrics.accuracy_score([1, 0, 1, 1], [1, 0, 0, 1])
with open("/app/output/scores.json", "w") as f:
    json.dump({"set1_score": accuracy, "set2_score": len(imported)}, f)
"""


def test_the_scorer_runtime_has_what_scoring_programs_commonly_import(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    files = codabench_files()
    files["scoring_program/score.py"] = RUNTIME
    assert import_bundle(client, host, make_zip(files), slug="runtime").status_code == 201
    development = opened(client, host, "runtime")[0]
    got, _ = submitted(
        client, alice, host, "runtime", development, "r.zip", make_zip({"x": "1"}), details=METHOD
    )
    assert got["status"] == "scored", got
    assert got["scores"]["set1_score"]["public"] == 0.75
    assert got["scores"]["set2_score"]["public"] == 6


# --- a failing program ------------------------------------------------------------------------

FAILING = """
import sys
print("reading the reference: {secret}", file=sys.stderr)
raise RuntimeError("the answer key says {secret}")
"""


def test_a_failing_program_fails_the_submission_with_two_messages(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    files = codabench_files()
    files["scoring_program/score.py"] = FAILING.format(secret=SECRET)
    assert import_bundle(client, host, make_zip(files), slug="broken").status_code == 201
    development = opened(client, host, "broken")[0]
    got, own = submitted(
        client, alice, host, "broken", development, "r.zip", make_zip({"x": "1"}), details=METHOD
    )
    assert got["status"] == own["status"] == "failed"
    assert own["error"] and "scoring program" in own["error"] and "status 1" in own["error"]
    # The participant never sees the program's output: it may print the reference data.
    assert SECRET not in json.dumps(own)
    assert "RuntimeError" in got["host_error"] and SECRET in got["host_error"]
    assert "host_error" not in own


def test_an_evalai_exception_names_its_type_to_the_participant_only(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    script = {
        "__init__.py": "from .main import evaluate\n",
        "main.py": f"def evaluate(a, s, p, **k):\n    raise KeyError({SECRET!r})\n",
    }
    files = evalai_files(script=script)
    assert import_bundle(client, host, make_zip(files), slug="keyerr").status_code == 201
    test_phase = opened(client, host, "keyerr")[1]
    got, own = submitted(client, alice, host, "keyerr", test_phase, "a.json", b"{}")
    assert own["status"] == "failed" and "KeyError" in own["error"]
    assert SECRET not in json.dumps(own)
    assert "Traceback" in got["host_error"] and SECRET in got["host_error"]


def test_a_program_writing_no_scores_file_fails_as_codabench_says(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    files = codabench_files()
    files["scoring_program/score.py"] = "print('done, but nothing written')\n"
    assert import_bundle(client, host, make_zip(files), slug="quiet").status_code == 201
    development = opened(client, host, "quiet")[0]
    got, own = submitted(
        client, alice, host, "quiet", development, "r.zip", make_zip({"x": "1"}), details=METHOD
    )
    assert own["status"] == "failed" and "could not be read as scores" in own["error"]
    assert "neither scores.json nor scores.txt" in got["host_error"]
    assert "done, but nothing written" in got["host_error"]


def test_a_stored_program_that_cannot_be_read_fails_the_submission_on_our_side(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    assert import_bundle(client, host, make_zip(codalab_files()), slug="pi").status_code == 201
    development = opened(client, host, "pi")[0]
    with client.app.state.session_factory() as session:  # type: ignore[attr-defined]
        phase = session.scalars(select(Phase).join(Competition).where(Competition.slug == "pi"))
        Path(next(iter(phase)).scorer["ref"]).write_bytes(b"not a zip any more")
    got, own = submitted(client, alice, host, "pi", development, "answer.txt", b"3.14")
    assert own["status"] == "failed" and "problem on our side" in own["error"]
    assert "BadZipFile" in got["host_error"] and got["refunded"] is True


def test_the_reference_data_is_the_phases_answer_key_and_is_replaced_by_a_new_import(
    client: TestClient, host: Caller
) -> None:
    assert import_bundle(client, host, make_zip(codalab_files()), slug="pi").status_code == 201
    phase = client.get(f"{API}/competitions/pi", headers=host.headers).json()["phases"][0]["name"]
    versions = client.get(
        f"{API}/competitions/pi/phases/{phase}/answer-key/versions", headers=host.headers
    ).json()
    assert [(v["version"], v["n_rows"]) for v in versions] == [(1, 1)]  # answer.txt
    assert versions[0]["published_at"] is not None
    response = client.put(
        f"{API}/competitions/pi/phases/{phase}/answer-key",
        files={"file": ("answer.txt", b"3.1416\n", "text/plain")},
        headers=host.headers,
    )
    assert response.status_code == 409, response.text
    assert "import the corrected bundle" in response.json()["detail"]


# --- Python 2 programs, and several tasks to a phase ---------------------------------------------


def test_a_python2_program_is_converted_at_import_and_scores_as_on_codalab(
    jail: None, client: TestClient, host: Caller, alice: Caller
) -> None:
    # Compute-pi's evaluate.py as CodaLab ran it: a print statement, text written to 'wb'.
    files = codalab_files(evaluate=CODALAB_EVALUATE_PY2)
    response = import_bundle(client, host, make_zip(files), slug="old")
    assert response.status_code == 201, response.text
    assert any(
        "converted to Python 3 at import by fissix" in w for w in response.json()["warnings"]
    )
    development = opened(client, host, "old")[0]
    got, _ = submitted(client, alice, host, "old", development, "answer.txt", b"3.14")
    assert got["status"] == "scored", got
    assert got["scores"]["correct"]["public"] == 1.0
    assert got["scores"]["difference"]["public"] == 0.0


def test_a_python2_program_that_cannot_be_converted_is_refused_naming_file_and_line(
    client: TestClient, host: Caller
) -> None:
    files = codalab_files(evaluate='print "scoring"\nif True\n    pass\n')
    response = import_bundle(client, host, make_zip(files), slug="old")
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "invalid_bundle"
    assert body["file"] == "evaluate.py" and body["field"] == "phases[0].scoring_program"
    assert "Python 2 (evaluate.py line 1: a print statement)" in body["detail"]
    assert client.get(f"{API}/competitions/old", headers=host.headers).status_code == 404


# --- a multi-task phase: each task its own program and reference data ---------------------------

TWO_TASKS = """
version: 2
title: Two tasks
description: Recognise faces and cars, each task scored by its own program on its own data.
image: logo.png
terms: pages/terms.md
pages: []
tasks:
- index: 0
  name: Faces
  reference_data: faces_reference
  scoring_program: faces_program
- index: 1
  name: Cars
  reference_data: cars_reference
  scoring_program: cars_program
phases:
- index: 0
  name: Main
  start: 1-1-2026
  max_submissions_per_day: 50
  tasks:
  - 0
  - 1
leaderboards:
- title: Results
  key: main
  submission_rule: Force_Last
  columns:
  - title: Accuracy
    key: accuracy
    index: 0
    sorting: desc
"""
# Each task's program reads its own reference data (the same file name, other contents) and its
# own file of the results zip: a zip without it fails that task alone.
TASK_PROGRAM = """
import json
truth = open("/app/input/ref/truth.txt").read().split()
pred = open("/app/input/res/{name}.txt").read().split()
hits = sum(a == b for a, b in zip(truth, pred)) / len(truth)
json.dump({{"accuracy": hits}}, open("/app/output/scores.json", "w"))
"""


def two_task_bundle() -> bytes:
    files: dict[str, bytes | str] = {
        "competition.yaml": TWO_TASKS,
        "logo.png": b"\x89PNG\r\n\x1a\nlogo",
        "pages/terms.md": "Be fair.\n",
        "faces_reference/truth.txt": "1 1 1 1\n",
        "cars_reference/truth.txt": "0 0 0 0\n",
    }
    for name in ("faces", "cars"):
        files[f"{name}_program/metadata.yaml"] = "command: python3 /app/program/score.py\n"
        files[f"{name}_program/score.py"] = TASK_PROGRAM.format(name=name)
    return make_zip(files)


def test_a_two_task_codabench_phase_scores_each_task_and_ranks_by_average_rank(
    jail: None, client: TestClient, host: Caller, alice: Caller, bob: Caller, make_user: Any
) -> None:
    response = import_bundle(client, host, two_task_bundle(), slug="two")
    assert response.status_code == 201, response.text
    (phase,) = response.json()["phases"]
    assert [t["key"] for t in phase["tasks"]] == ["faces", "cars"]
    assert phase["columns"][0]["computed"] == {
        "op": "average_rank",
        "of": ["faces.accuracy", "cars.accuracy"],
    }
    main = opened(client, host, "two")[0]
    carol = make_user("carol")
    entries = [
        (alice, {"faces.txt": "1 1 1 1\n", "cars.txt": "0 0 1 1\n"}),  # 1.0 and 0.5
        (bob, {"faces.txt": "1 1 0 0\n", "cars.txt": "0 0 0 0\n"}),  # 0.5 and 1.0
        (carol, {"faces.txt": "1 1 1 1\n"}),  # 1.0, and no file for the cars task
    ]
    scored = {}
    for caller, files in entries:
        got, _own = submitted(client, caller, host, "two", main, "results.zip", make_zip(files))
        assert got["status"] == "scored", got
        scored[caller.name] = got["scores"]
        scored[f"{caller.name}:details"] = got["metric_details"]
    assert scored["alice"]["faces.accuracy"]["public"] == 1.0
    assert scored["alice"]["cars.accuracy"]["public"] == 0.5
    assert scored["bob"]["cars.accuracy"]["public"] == 1.0
    # The task carol's zip could not feed is blank; the other scored all the same.
    assert scored["carol"]["cars.accuracy"]["public"] is None
    assert scored["carol"]["faces.accuracy"]["public"] == 1.0
    # Why, for the hosts: the program's failure, in the row's details.
    failed = scored["carol:details"]["tasks"]["cars"]
    assert "cars.txt" in failed["host_error"] and failed["error"]
    whole = board(client, alice, "two", main)
    # faces: alice and carol 1st, bob 3rd; cars: bob 1st, alice 2nd, carol (missing) last.
    assert [(r["team"], r["score"]) for r in whole["rows"]] == [
        ("alice", 1.5),
        ("bob", 2.0),
        ("carol", 2.0),  # as bob's average, yet lacking a task: never above a complete row
    ]
    assert [t["key"] for t in whole["tasks"]] == ["faces", "cars"]
    assert [c["task"] for c in whole["columns"]] == [None, "faces", "cars"]
    assert whole["rows"][2]["scores"]["cars.accuracy"] is None
    # One task at a time: its columns alone, ranked by it.
    cars = client.get(
        f"{API}/competitions/two/leaderboard",
        params={"phase": main, "task": "cars"},
        headers=alice.headers,
    ).json()
    assert [c["key"] for c in cars["columns"]] == ["cars.accuracy"]
    assert [r["team"] for r in cars["rows"]] == ["bob", "alice", "carol"]
    csv_text = client.get(
        f"{API}/competitions/two/leaderboard.csv", params={"phase": main}, headers=alice.headers
    ).text
    assert "average_rank,faces.accuracy,cars.accuracy" in csv_text.splitlines()[0]
    assert csv_text.splitlines()[1].split(",")[:3] == ["1", "alice", "1.5"]
    unknown = client.get(
        f"{API}/competitions/two/leaderboard",
        params={"phase": main, "task": "boats"},
        headers=alice.headers,
    )
    assert unknown.status_code == 422 and "faces, cars" in unknown.json()["detail"]
    page = client.get(f"/c/two/leaderboard?phase={main}", headers=alice.headers)
    assert page.status_code == 200
    assert 'scope="colgroup" class="task-group">Faces</th>' in page.text


# --- a hostile program is contained -------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP port on 127.0.0.1 (the server's stand-in) and the connections it accepted."""
    accepted: list[object] = []
    stop = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, address = server.accept()
            except TimeoutError:
                continue
            accepted.append(address)
            connection.close()

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        server.close()


ATTACK = """
import os
import socket

def attempt(what, read):
    try:
        if {secret!r} in read():
            print("BREACH", what, flush=True)
        else:
            print("nothing", what, flush=True)
    except OSError as exc:
        print("blocked", what, type(exc).__name__, flush=True)

def walk(root):
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                found.append(open(os.path.join(folder, name), "rb").read().decode("latin-1"))
            except OSError:
                pass
    if not os.path.isdir(root):
        raise FileNotFoundError(root)
    return "".join(found)

attempt("another competition's key", lambda: open({key!r}).read())
attempt("the data directory", lambda: walk({data_dir!r}))
attempt("the server's environment", lambda: open("/proc/{pid}/environ", "rb").read().decode())
attempt("own environment", lambda: repr(dict(os.environ)))

def connect():
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    return {secret!r}

attempt("the network", connect)
"""


def test_a_hostile_program_is_contained(
    jail: None,
    client: TestClient,
    host: Caller,
    alice: Caller,
    settings: Any,
    listener: tuple[int, list[object]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port, accepted = listener
    monkeypatch.setenv("PODIUM_SECRET_KEY", SECRET)
    server = subprocess.Popen(  # a process holding the server's secret in its environment
        [sys.executable, "-c", "import time; time.sleep(120)"],
        env={**os.environ, "PODIUM_SECRET_KEY": SECRET},
        start_new_session=True,
    )
    try:
        _hostile(client, host, alice, settings, server.pid, port, accepted, tmp_path)
    finally:
        server.kill()
        server.wait()


def _hostile(
    client: TestClient,
    host: Caller,
    alice: Caller,
    settings: Any,
    pid: int,
    port: int,
    accepted: list[object],
    tmp_path: Path,
) -> None:
    # Another competition of the same server, its answer key in the data directory.
    create_competition(client, host.headers, "victim", metric={"name": "rmse"})
    key = csv_bytes(["id", "target", "Usage"], [SECRET, 1.5, "Public"], ["b", 2.0, "Private"])
    assert upload_key(client, host.headers, "victim", key).status_code == 201, "victim key"
    with client.app.state.session_factory() as session:  # type: ignore[attr-defined]
        key_path = session.scalars(
            select(AnswerKey.path).join(Competition).where(Competition.slug == "victim")
        ).one()
    assert Path(key_path).is_file() and str(settings.data_dir) in key_path
    attack = textwrap.dedent(ATTACK).format(
        secret=SECRET, key=key_path, data_dir=str(settings.data_dir), pid=pid, port=port
    )

    # The control: the same attack as a plain process of the server's user breaks every door.
    script = tmp_path / "attack.py"
    script.write_text(attack)
    control = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    for what in (
        "another competition's key",
        "the data directory",
        "the server's environment",
        "own environment",
        "the network",
    ):
        assert f"BREACH {what}" in control.stdout, control.stdout + control.stderr
    assert len(accepted) == 1

    # The same attack as the imported program: it then exits 1, so its output reaches the host.
    files = codabench_files()
    files["scoring_program/score.py"] = attack + "\nraise SystemExit(1)\n"
    assert import_bundle(client, host, make_zip(files), slug="hostile").status_code == 201
    development = opened(client, host, "hostile")[0]
    got, own = submitted(
        client, alice, host, "hostile", development, "r.zip", make_zip({"x": "1"}), details=METHOD
    )
    assert own["status"] == "failed"
    output = got["host_error"]
    assert "BREACH" not in output and SECRET not in output, output
    assert "blocked another competition's key FileNotFoundError" in output
    assert "blocked the data directory FileNotFoundError" in output
    assert "blocked the server's environment FileNotFoundError" in output  # its own PID namespace
    assert "nothing own environment" in output  # an empty environment
    assert "blocked the network ConnectionRefusedError" in output  # its own, empty loopback
    assert len(accepted) == 1  # nothing reached the listener from the jail
