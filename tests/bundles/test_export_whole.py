"""An export comes back whole: data files with their visibility, each column's precision as set
(unset stays unset), the competition's origin; and a file that is gone (a refused upload's,
never kept) is listed in the archive rather than breaking it (``export --with-submissions`` and
``submissions.zip``)."""

import io
import json
import zipfile
from typing import Any

from tests.asgi_client import TestClient
from tests.bundles.builders import codalab_files, make_zip
from tests.bundles.test_import_api import import_bundle
from tests.conftest import Caller
from tests.helpers import API, PERFECT, upload_key

COLUMNS = [
    {"key": "auc", "metric": {"name": "roc_auc"}},  # precision unset
    {"key": "loss", "metric": {"name": "log_loss_binary"}, "precision": 3},
]


def _made(client: TestClient, host: Caller) -> None:
    body = {
        "slug": "whole",
        "title": "Whole",
        "description": "A task",
        "columns": COLUMNS,
        "start": "2020-01-01",
        "deadline": "2099-01-01",
    }
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 201, response.text
    assert upload_key(client, host.headers, "whole").status_code == 201
    for name, content, visibility in (
        ("train.csv", b"id,x\na,1\n", "public"),
        ("test_inputs.csv", b"id,x\nz,9\n", "hidden"),
    ):
        put = client.put(
            f"{API}/competitions/whole/files/{name}",
            params={"visibility": visibility},
            content=content,
            headers={**host.headers, "Content-Type": "application/octet-stream"},
        )
        assert put.status_code == 201, put.text


def _files(client: TestClient, host: Caller, slug: str) -> list[tuple[str, str, str]]:
    listed = client.get(f"{API}/competitions/{slug}/files", headers=host.headers).json()
    return sorted((f["name"], f.get("visibility", "public"), f["sha256"]) for f in listed)


def _columns(client: TestClient, host: Caller, slug: str) -> list[dict[str, Any]]:
    body = client.get(f"{API}/competitions/{slug}", headers=host.headers).json()
    return [{"key": c["key"], "precision": c.get("precision")} for c in body["leaderboard_columns"]]


def test_export_then_import_keeps_data_files_with_visibility_and_unset_precision(
    client: TestClient, host: Caller
) -> None:
    _made(client, host)
    exported = client.get(f"{API}/competitions/whole/export", headers=host.headers)
    assert exported.status_code == 200, exported.text
    config = zipfile.ZipFile(io.BytesIO(exported.content)).read("competition.yaml").decode()
    assert "test_inputs.csv" in config and "hidden" in config
    again = import_bundle(client, host, exported.content, slug="whole-again")
    assert again.status_code == 201, again.text
    assert _files(client, host, "whole-again") == _files(client, host, "whole")
    assert [f[1] for f in _files(client, host, "whole-again")] == ["hidden", "public"]
    assert _columns(client, host, "whole-again") == _columns(client, host, "whole")
    assert _columns(client, host, "whole") == [
        {"key": "auc", "precision": None},
        {"key": "loss", "precision": 3},
    ]


def test_the_origin_of_an_imported_competition_survives_export_and_import(
    client: TestClient, host: Caller
) -> None:
    first = import_bundle(client, host, make_zip(codalab_files()), slug="pi")
    assert first.status_code == 201, first.text
    origin = first.json()["origin"]
    assert origin["format"] == "codalab" and origin["file"] == "bundle.zip"
    assert len(origin["sha256"]) == 64
    exported = client.get(f"{API}/competitions/pi/export", headers=host.headers)
    again = import_bundle(client, host, exported.content, slug="pi-again")
    assert again.status_code == 201, again.text
    assert again.json()["origin"] == origin


def test_a_refused_upload_is_listed_and_never_breaks_either_archive(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    _made(client, host)
    good = client.post(
        f"{API}/competitions/whole/submissions",
        files={"file": ("good.csv", PERFECT, "text/csv")},
        headers=alice.headers,
    )
    assert good.status_code in (201, 202), good.text
    refused = client.post(
        f"{API}/competitions/whole/submissions",
        files={"file": ("bad.csv", b"not,a\nvalid file\n", "text/csv")},
        headers=alice.headers,
    )
    assert refused.status_code == 422, refused.text
    refused_id = refused.json()["submission_id"]

    exported = client.get(
        f"{API}/competitions/whole/export", params={"with_submissions": True}, headers=host.headers
    )
    assert exported.status_code == 200, exported.text
    archive = zipfile.ZipFile(io.BytesIO(exported.content))
    assert archive.testzip() is None
    index = {e["id"]: e for e in json.loads(archive.read("submissions/index.json"))}
    assert index[refused_id]["file"] is None
    assert index[refused_id]["missing"] == "refused at upload, its file not kept"
    assert archive.read(index[good.json()["id"]]["file"]) == PERFECT
    assert f"submission {refused_id} (bad.csv)" in archive.read("submissions/MISSING.txt").decode()

    files = client.get(f"{API}/competitions/whole/submissions.zip", headers=host.headers)
    assert files.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(files.content))
    assert archive.testzip() is None
    names = archive.namelist()
    assert names[-1] == "MISSING.txt" and len(names) == 2
    assert archive.read(names[0]) == PERFECT
    assert "_bad.csv: refused at upload" in archive.read("MISSING.txt").decode()
