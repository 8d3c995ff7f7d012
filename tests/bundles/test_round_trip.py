"""Export → import gives the same competition: phases, dates, quotas, columns, key checksums,
and the same score for the same submission (SQLite and PostgreSQL, as every ``client`` test)."""

import io
import json
import zipfile
from typing import Any

from app.models import Competition
from tests.asgi_client import TestClient
from tests.bundles.test_import_api import import_bundle, podium_bundle
from tests.bundles.test_program_scoring import accept_rules
from tests.conftest import Caller
from tests.helpers import API

SUBMISSION = b"id,target\n1,1.0\n2,1.0\n3,2.5\n4,2.0\n5,7.0\n"
# What a competition is, as GET shows it, apart from its name and its making.
NOT_COMPARED = {"slug", "created_at", "status"}


def published(client: TestClient, slug: str) -> None:
    """Published as is: the launch checklist's sample scoring is not what is tested here."""
    with client.app.state.session_factory() as session:  # type: ignore[attr-defined]
        session.query(Competition).filter_by(slug=slug).update({"status": "published"})
        session.commit()


def shown(client: TestClient, caller: Caller, slug: str) -> dict[str, Any]:
    body = client.get(f"{API}/competitions/{slug}", headers=caller.headers).json()
    for phase in body["phases"]:
        versions = client.get(
            f"{API}/competitions/{slug}/phases/{phase['name']}/answer-key/versions",
            headers=caller.headers,
        ).json()
        phase["key_sha256"] = [v["sha256"] for v in versions]
    return {k: v for k, v in body.items() if k not in NOT_COMPARED}


def scored(client: TestClient, caller: Caller, host: Caller, slug: str) -> dict[str, Any]:
    """``caller`` submits to the (blind) final phase; its host reads the scores."""
    accept_rules(client, caller, slug)
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": ("sub.csv", SUBMISSION, "text/csv")},
        data={"phase": "final"},
        headers=caller.headers,
    )
    assert response.status_code in (201, 202), response.text
    got = client.get(f"{API}/submissions/{response.json()['id']}", headers=host.headers).json()
    assert got["status"] == "scored", got
    assert got["public_score"] is not None, got
    return {"score": got["public_score"], "scores": got["scores"]}


def test_export_then_import_gives_the_same_competition_and_the_same_score(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    assert import_bundle(client, host, podium_bundle(), slug="first").status_code == 201
    published(client, "first")
    before = scored(client, alice, host, "first")

    exported = client.get(f"{API}/competitions/first/export", headers=host.headers)
    assert exported.status_code == 200
    assert exported.headers["content-type"] == "application/zip"
    again = import_bundle(client, host, exported.content, slug="second")
    assert again.status_code == 201, again.text
    published(client, "second")

    assert shown(client, host, "second") == shown(client, host, "first")
    assert [p["key_sha256"] for p in shown(client, host, "first")["phases"]] != [[], []]
    assert scored(client, alice, host, "second") == before


def test_an_export_with_submissions_holds_each_file_and_its_scores(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    assert import_bundle(client, host, podium_bundle(), slug="kept").status_code == 201
    published(client, "kept")
    score = scored(client, alice, host, "kept")
    response = client.get(
        f"{API}/competitions/kept/export", params={"with_submissions": True}, headers=host.headers
    )
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    (entry,) = json.loads(archive.read("submissions/index.json"))
    assert archive.read(entry["file"]) == SUBMISSION
    assert entry["phase"] == "final" and entry["team"]
    assert entry["scores"][0]["public"] == score["score"]
    plain = client.get(f"{API}/competitions/kept/export", headers=host.headers)
    assert "submissions/index.json" not in zipfile.ZipFile(io.BytesIO(plain.content)).namelist()


def test_a_program_scored_competition_round_trips_with_its_program_and_reference_data(
    client: TestClient, host: Caller
) -> None:
    from tests.bundles.builders import codabench_files, make_zip

    assert import_bundle(client, host, make_zip(codabench_files()), slug="iris").status_code == 201
    exported = client.get(f"{API}/competitions/iris/export", headers=host.headers)
    assert exported.status_code == 200, exported.text
    assert import_bundle(client, host, exported.content, slug="iris-again").status_code == 201
    first, second = shown(client, host, "iris"), shown(client, host, "iris-again")
    assert second == first


def test_a_multi_task_phase_round_trips_each_task_its_program_and_reference_data(
    client: TestClient, host: Caller
) -> None:
    from tests.bundles.test_program_scoring import two_task_bundle

    assert import_bundle(client, host, two_task_bundle(), slug="two").status_code == 201
    exported = client.get(f"{API}/competitions/two/export", headers=host.headers)
    assert exported.status_code == 200, exported.text
    config = zipfile.ZipFile(io.BytesIO(exported.content)).read("competition.yaml").decode()
    assert "average_rank" not in config.split("podium:")[0]  # Codabench has no such column
    again = import_bundle(client, host, exported.content, slug="two-again")
    assert again.status_code == 201, again.text
    assert shown(client, host, "two-again") == shown(client, host, "two")
    with client.app.state.session_factory() as session:  # type: ignore[attr-defined]
        first, second = (
            session.query(Competition).filter_by(slug=s).one().phases[0]
            for s in ("two", "two-again")
        )
        assert [t["scorer"]["program"] for t in second.tasks] == [
            t["scorer"]["program"] for t in first.tasks
        ]
        assert [t["scorer"]["reference"] for t in second.tasks] == [
            t["scorer"]["reference"] for t in first.tasks
        ]


def test_a_multi_task_phase_of_catalogue_metrics_round_trips_and_scores_the_same(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    from tests.competitions.test_tasks import CLS_KEY, REG_KEY, create, key, labels, numbers, zipped
    from tests.competitions.test_tasks import submit as submit_zip

    assert create(client, host).status_code == 201
    assert key(client, host, zipped(cls_csv=CLS_KEY, reg_csv=REG_KEY)).status_code == 201
    exported = client.get(f"{API}/competitions/multi/export", headers=host.headers)
    assert exported.status_code == 200, exported.text
    again = import_bundle(client, host, exported.content, slug="multi-again")
    assert again.status_code == 201, again.text
    published(client, "multi-again")
    first, second = shown(client, host, "multi"), shown(client, host, "multi-again")
    assert second["phases"][0]["tasks"] == first["phases"][0]["tasks"]
    # The aggregate comes back with its direction stated (minimize, its op's own).
    assert second["phases"][0]["columns"] == [
        c | {"direction": "minimize"} for c in first["phases"][0]["columns"]
    ]
    assert second["phases"][0]["key_sha256"] != []
    entry = zipped(cls_csv=labels("x", "y", "x", "x"), reg_csv=numbers(2, 2, 3, 4))
    before = submit_zip(client, alice, entry)
    accept_rules(client, alice, "multi-again")
    after = submit_zip(client, alice, entry, slug="multi-again")
    assert after["status"] == "scored", after
    assert after["scores"] == before["scores"]
