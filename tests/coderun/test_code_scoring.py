"""A code phase end to end on the real jail: the script's submission.csv is scored exactly like
the same predictions uploaded as a file; a failing run and a refused output are named (Kaggle's
words for the team, the log's end for the hosts); the log is the team's and the hosts' only."""

from typing import Any

from tests.helpers import API, csv_bytes

KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 5.0, "Private"],
)
PREDICTIONS = "id,y\na,1.5\nb,2.0\nc,2.0\nd,5.5\n"
# Reads the hidden test set from Kaggle's layout and writes the same predictions as PREDICTIONS.
SCRIPT = b"""
import os
import pandas as pd

test = pd.read_csv(os.path.join(os.environ["PODIUM_INPUT_DIR"], "test.csv"))
print("rows:", len(test))
test["y"] = [1.5, 2.0, 2.0, 5.5]
test[["id", "y"]].to_csv("/kaggle/working/submission.csv", index=False)
"""


def _competition(client, host, slug: str, kind: str) -> None:
    body = {
        "slug": slug,
        "title": slug.title(),
        "metric": {"name": "rmse"},
        "phases": [
            {"name": "main", "submission_kind": kind, "code_limits": {"wall_seconds": 120}}
            if kind == "code"
            else {"name": "main"}
        ],
    }
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 201
    key = client.put(
        f"{API}/competitions/{slug}/answer-key",
        files={"file": ("key.csv", KEY, "text/csv")},
        headers=host.headers,
    )
    assert key.status_code in (200, 201), key.text
    hidden = client.put(
        f"{API}/competitions/{slug}/files/test.csv?visibility=hidden",
        content=b"id\na\nb\nc\nd\n",
        headers=host.headers,
    )
    assert hidden.status_code == 201, hidden.text


def _submit(client, caller, slug: str, name: str, content: bytes) -> dict[str, Any]:
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": (name, content, "application/octet-stream")},
        headers=caller.headers,
    )
    assert response.status_code == 202, response.text
    return response.json()


def _view(client, caller, submission_id: int) -> dict[str, Any]:
    response = client.get(f"{API}/submissions/{submission_id}", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_script_is_scored_exactly_like_its_predictions_uploaded(jail, client, host, alice, bob):
    _competition(client, host, "code", "code")
    _competition(client, host, "plain", "predictions")
    ran = _submit(client, alice, "code", "main.py", SCRIPT)
    uploaded = _submit(client, alice, "plain", "sub.csv", PREDICTIONS.encode())
    by_code, by_file = _view(client, host, ran["id"]), _view(client, host, uploaded["id"])
    assert by_code["status"] == "scored", by_code
    # The interval too: the bootstrap reads the file the run wrote, not the code.
    for field in ("public_score", "private_score", "scores", "public_interval"):
        assert by_code[field] == by_file[field], field
    assert by_code["public_score"] is not None and by_code["public_interval"] is not None
    # The log and the run's provenance: the team's and the hosts'.
    log = client.get(f"{API}/submissions/{ran['id']}/log", headers=alice.headers)
    assert log.status_code == 200, log.text
    body = log.json()
    assert "rows: 4" in body["log"] and body["failure"] is None
    assert all(len(body[k]) == 64 for k in ("code_sha256", "inputs_sha256", "runtime_fingerprint"))
    assert client.get(f"{API}/submissions/{ran['id']}/log", headers=host.headers).json() == body
    # Anyone else: no such log (nor submission).
    assert client.get(f"{API}/submissions/{ran['id']}/log", headers=bob.headers).status_code == 404
    # A predictions submission has no log.
    plain = client.get(f"{API}/submissions/{uploaded['id']}/log", headers=alice.headers)
    assert plain.status_code == 404


def test_a_failing_run_is_named_in_kaggles_words_and_its_log_end_is_the_hosts(
    jail, client, host, alice
):
    _competition(client, host, "code", "code")
    made = _submit(client, alice, "code", "main.py", b"print('working...')\nraise SystemExit(3)\n")
    seen = _view(client, alice, made["id"])
    assert seen["status"] == "failed"
    assert seen["error"].startswith("Notebook Threw Exception (runtime_error)")
    assert "host_error" not in seen
    hosts = _view(client, host, made["id"])
    assert "working..." in hosts["host_error"]
    log = client.get(f"{API}/submissions/{made['id']}/log", headers=alice.headers).json()
    assert log["failure"] == "runtime_error" and "working..." in log["log"]
    assert log["kaggle_words"] == "Notebook Threw Exception"


def test_an_output_intake_refuses_is_invalid_output_with_intakes_message(jail, client, host, alice):
    _competition(client, host, "code", "code")
    wrong = b"open('submission.csv', 'w').write('id,guess\\na,1\\n')\n"
    made = _submit(client, alice, "code", "main.py", wrong)
    seen = _view(client, alice, made["id"])
    assert seen["status"] == "failed"
    assert seen["error"].startswith("Submission Scoring Error (invalid_output): ")
    # The same file uploaded is refused with the same words.
    _competition(client, host, "plain", "predictions")
    refused = client.post(
        f"{API}/competitions/plain/submissions",
        files={"file": ("sub.csv", b"id,guess\na,1\n", "text/csv")},
        headers=alice.headers,
    )
    assert refused.status_code == 422
    assert seen["error"].endswith(refused.json()["detail"])
    log = client.get(f"{API}/submissions/{made['id']}/log", headers=alice.headers).json()
    assert log["failure"] == "invalid_output"


def test_a_host_reruns_a_failed_run_and_nobody_else_may(jail, client, host, alice, bob):
    _competition(client, host, "code", "code")
    needs_go = (
        b"import os\n"
        b"if not os.path.exists(os.path.join(os.environ['PODIUM_INPUT_DIR'], 'go.csv')):\n"
        b"    raise SystemExit('no go.csv yet')\n" + SCRIPT
    )
    made = _submit(client, alice, "code", "main.py", needs_go)
    assert _view(client, alice, made["id"])["status"] == "failed"
    rerun = f"{API}/submissions/{made['id']}/rerun"
    assert client.post(rerun, headers=alice.headers).status_code == 403  # its own team
    assert client.post(rerun, headers=bob.headers).status_code == 404  # anyone else
    client.put(
        f"{API}/competitions/code/files/go.csv?visibility=hidden",
        content=b"go\n",
        headers=host.headers,
    )
    quota = client.get(f"{API}/competitions/code/quota", headers=alice.headers).json()
    assert client.post(rerun, headers=host.headers).status_code == 200
    assert _view(client, alice, made["id"])["status"] == "scored"
    # A rerun is the same submission: nothing more is charged.
    assert client.get(f"{API}/competitions/code/quota", headers=alice.headers).json() == quota


def test_a_host_reruns_a_scored_run_and_the_same_code_gives_the_same_score(
    jail, client, host, alice, make_user
):
    _competition(client, host, "code", "code")
    made = _submit(client, alice, "code", "main.py", SCRIPT)
    first = _view(client, host, made["id"])
    assert first["status"] == "scored", first
    first_log = client.get(f"{API}/submissions/{made['id']}/log", headers=host.headers).json()
    quota = client.get(f"{API}/competitions/code/quota", headers=alice.headers).json()
    rerun = f"{API}/submissions/{made['id']}/rerun"
    # The host of another competition may not (nor learn that it exists).
    stranger = make_user("stranger", organiser=True)
    _competition(client, stranger, "theirs", "predictions")
    assert client.post(rerun, headers=stranger.headers).status_code == 404
    assert client.post(rerun, headers=host.headers).status_code == 200
    again = _view(client, host, made["id"])
    assert again["status"] == "scored"
    for field in ("public_score", "private_score", "scores", "public_interval"):
        assert again[field] == first[field], field
    log = client.get(f"{API}/submissions/{made['id']}/log", headers=host.headers).json()
    for field in ("code_sha256", "inputs_sha256", "runtime_fingerprint", "log"):
        assert log[field] == first_log[field], field
    # Scored once against the key: the rerun's score replaced the first, it did not add one.
    versions = client.get(f"{API}/submissions/{made['id']}/scores", headers=host.headers).json()
    assert len(versions) == 1
    assert client.get(f"{API}/competitions/code/quota", headers=alice.headers).json() == quota
