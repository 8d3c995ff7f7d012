"""Code phases: a phase's submission kind and code limits, kind mismatches at upload, hidden data
files, and the run log's readers. (Running code in the jail: tests/coderun/test_code_scoring.py.)"""

import io
import zipfile
from typing import Any

from sqlalchemy import update

from app.models import Submission, SubmissionStatus
from tests.helpers import API, csv_bytes

KEY = csv_bytes(["id", "y", "Usage"], ["a", 1.0, "Public"], ["b", 2.0, "Private"])
SCRIPT = b"import pandas as pd\npd.DataFrame({'id': ['a', 'b'], 'y': [1.0, 2.0]}).to_csv('submission.csv', index=False)\n"


def _create(client, host, slug="code", **phase: Any):
    body = {
        "slug": slug,
        "title": slug.title(),
        "metric": {"name": "rmse"},
        "phases": [{"name": "main", **phase}],
    }
    return client.post(f"{API}/competitions", json=body, headers=host.headers)


def _code_competition(client, host, slug="code", **phase: Any) -> dict[str, Any]:
    response = _create(client, host, slug, submission_kind="code", **phase)
    assert response.status_code == 201, response.text
    key = client.put(
        f"{API}/competitions/{slug}/answer-key",
        files={"file": ("key.csv", KEY, "text/csv")},
        headers=host.headers,
    )
    assert key.status_code in (200, 201), key.text
    return response.json()


def _submit(client, caller, name: str, content: bytes, slug="code"):
    return client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": (name, content, "application/octet-stream")},
        headers=caller.headers,
    )


def test_a_phase_is_for_predictions_unless_made_for_code(client, host):
    assert _create(client, host, "plain").status_code == 201
    phases = client.get(f"{API}/competitions/plain/phases", headers=host.headers).json()
    assert phases[0]["submission_kind"] == "predictions" and phases[0]["code_limits"] is None
    _code_competition(client, host, code_limits={"wall_seconds": 60, "memory_mb": 512})
    phases = client.get(f"{API}/competitions/code/phases", headers=host.headers).json()
    assert phases[0]["submission_kind"] == "code"
    assert phases[0]["code_limits"]["wall_seconds"] == 60
    assert phases[0]["code_limits"]["working_mb"] == 1024  # the default filled in


def test_limits_past_the_servers_maxima_are_a_422_naming_the_field(client, host):
    response = _create(client, host, submission_kind="code", code_limits={"memory_mb": 10**7})
    assert response.status_code == 422, response.text
    assert "code_limits.memory_mb" in response.text
    assert "PODIUM_CODE_MAX_MEMORY_MB" in response.text
    _code_competition(client, host)
    patched = client.patch(
        f"{API}/competitions/code/phases/main",
        json={"code_limits": {"wall_seconds": 10**9}},
        headers=host.headers,
    )
    assert patched.status_code == 422 and "code_limits.wall_seconds" in patched.text
    fine = client.patch(
        f"{API}/competitions/code/phases/main",
        json={"code_limits": {"wall_seconds": 30}},
        headers=host.headers,
    )
    assert fine.status_code == 200 and fine.json()["code_limits"]["wall_seconds"] == 30


def test_a_predictions_file_sent_to_a_code_phase_is_a_422_naming_the_kind(client, host, alice):
    _code_competition(client, host)
    response = _submit(client, alice, "sub.csv", csv_bytes(["id", "y"], ["a", 1.0], ["b", 2.0]))
    assert response.status_code == 422, response.text
    assert "the phase 'main' takes code" in response.text
    assert response.json()["phase_takes"] == "code"
    listed = client.get(f"{API}/competitions/code/submissions", headers=alice.headers).json()
    assert listed == []  # refused before anything was stored or charged


def test_code_sent_to_a_predictions_phase_is_a_422_naming_the_kind(client, host, alice):
    assert _create(client, host, "plain").status_code == 201
    client.put(
        f"{API}/competitions/plain/answer-key",
        files={"file": ("key.csv", KEY, "text/csv")},
        headers=host.headers,
    )
    response = _submit(client, alice, "main.py", SCRIPT, slug="plain")
    assert response.status_code == 422, response.text
    assert "takes a predictions file" in response.text
    assert response.json()["phase_takes"] == "predictions"
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("main.py", SCRIPT)
    response = _submit(client, alice, "code.zip", zipped.getvalue(), slug="plain")
    assert response.status_code == 422 and "holds code" in response.text


def test_bad_code_is_refused_at_upload_naming_why(client, host, alice):
    _code_competition(client, host)
    bad = _submit(client, alice, "nb.ipynb", b"{not a notebook")
    assert bad.status_code == 422 and bad.json()["kind"] == "invalid_code"
    no_main = io.BytesIO()
    with zipfile.ZipFile(no_main, "w") as archive:
        archive.writestr("helper.py", "x = 1\n")
    refused = _submit(client, alice, "code.zip", no_main.getvalue())
    assert refused.status_code == 422 and "main.py" in refused.text


# -- hidden data files ----------------------------------------------------------------------------

KAGGLE = f"{API}/competitions.CompetitionApiService"


def _kaggle(client, method: str, body: dict[str, Any], caller):
    return client.post(
        f"{KAGGLE}/{method}", json=body, headers=caller.headers, follow_redirects=False
    )


def _hidden_and_public(client, host) -> None:
    _code_competition(client, host)
    hidden = client.put(
        f"{API}/competitions/code/files/test.csv?visibility=hidden",
        content=b"id,x\nSECRET,1\n",
        headers=host.headers,
    )
    assert hidden.status_code == 201 and hidden.json()["visibility"] == "hidden"
    public = client.put(
        f"{API}/competitions/code/files/train.csv",
        files={"file": ("train.csv", b"id,x\na,1\n")},
        data={"visibility": "public"},
        headers=host.headers,
    )
    assert public.status_code == 201 and public.json()["visibility"] == "public"


def test_a_hidden_file_is_invisible_to_participants_by_every_route(client, host, alice):
    _hidden_and_public(client, host)
    files = f"{API}/competitions/code/files"
    listed = client.get(files, headers=alice.headers).json()
    assert [f["name"] for f in listed] == ["train.csv"]
    assert client.get(f"{files}/test.csv", headers=alice.headers).status_code == 404
    assert client.get(f"{files}/train.csv", headers=alice.headers).status_code == 200
    # Web pages (a visitor and the data tab's download link).
    page = client.get("/c/code/data")
    assert "train.csv" in page.text and "test.csv" not in page.text
    assert client.get("/c/code/data/files/test.csv").status_code == 404
    # The kaggle client's routes and their signed links.
    kaggle_list = _kaggle(client, "ListDataFiles", {"competitionName": "code"}, alice).json()
    assert [f["name"] for f in kaggle_list["files"]] == ["train.csv"]
    one = _kaggle(
        client, "DownloadDataFile", {"competitionName": "code", "fileName": "test.csv"}, alice
    )
    assert one.status_code == 404
    bundle = _kaggle(client, "DownloadDataFiles", {"competitionName": "code"}, alice)
    assert bundle.status_code == 302
    archive = zipfile.ZipFile(io.BytesIO(client.get(bundle.headers["location"]).content))
    assert archive.namelist() == ["train.csv"]


def test_hosts_see_hidden_files_marked_and_a_link_stops_when_a_file_is_hidden(client, host, alice):
    _hidden_and_public(client, host)
    files = f"{API}/competitions/code/files"
    listed = {f["name"]: f["visibility"] for f in client.get(files, headers=host.headers).json()}
    assert listed == {"test.csv": "hidden", "train.csv": "public"}
    assert client.get(f"{files}/test.csv", headers=host.headers).content == b"id,x\nSECRET,1\n"
    bundle = _kaggle(client, "DownloadDataFiles", {"competitionName": "code"}, host)
    archive = zipfile.ZipFile(io.BytesIO(client.get(bundle.headers["location"]).content))
    assert sorted(archive.namelist()) == ["test.csv", "train.csv"]
    link = _kaggle(
        client, "DownloadDataFile", {"competitionName": "code", "fileName": "train.csv"}, alice
    ).headers["location"]
    client.put(f"{files}/train.csv?visibility=hidden", content=b"id,x\n", headers=host.headers)
    assert client.get(link).status_code == 404
    bad = client.put(f"{files}/x.csv?visibility=secret", content=b"a\n", headers=host.headers)
    assert bad.status_code == 422 and "visibility" in bad.text


def test_a_queued_submission_shows_its_place_in_the_queue(client, host, alice, session_factory):
    assert _create(client, host, "plain").status_code == 201
    client.put(
        f"{API}/competitions/plain/answer-key",
        files={"file": ("key.csv", KEY, "text/csv")},
        headers=host.headers,
    )
    preds = csv_bytes(["id", "y"], ["a", 1.0], ["b", 2.0])
    ids = [_submit(client, alice, "sub.csv", preds, slug="plain").json()["id"] for _ in range(2)]
    view = client.get(f"{API}/submissions/{ids[1]}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["queue_position"] is None
    with session_factory() as session:  # as if a worker had not reached them yet
        session.execute(update(Submission).values(status=SubmissionStatus.queued))
        session.commit()
    places = [
        client.get(f"{API}/submissions/{i}", headers=alice.headers).json()["queue_position"]
        for i in ids
    ]
    assert places == [1, 2]
