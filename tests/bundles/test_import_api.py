"""``POST /api/v1/competitions/import`` and ``GET .../export``: bundles into the database and
back, with nothing created when a bundle is refused."""

from dataclasses import replace
from typing import Any

import pytest

from app.bundles import export_codabench
from tests.asgi_client import TestClient
from tests.bundles.builders import (
    EVALAI_CONFIG,
    codabench_files,
    codalab_files,
    evalai_files,
    make_zip,
    symlink_zip,
)
from tests.bundles.test_export import catalogue_competition
from tests.conftest import Caller
from tests.helpers import API

KEY = b"id,target,Usage\n1,0.5,Public\n2,1.5,Private\n3,2.0,Public\n4,3.0,Private\n5,9.0,Ignored\n"


def import_bundle(
    client: TestClient, caller: Caller, bundle: bytes, **form: Any
) -> Any:  # the response
    return client.post(
        f"{API}/competitions/import",
        files={"file": ("bundle.zip", bundle, "application/zip")},
        data={k: str(v).lower() if isinstance(v, bool) else v for k, v in form.items()},
        headers=caller.headers,
    )


def podium_bundle() -> bytes:
    """A catalogue-scored competition as Podium exports it (dates far ahead: it stays open)."""
    competition = catalogue_competition()
    return export_codabench(competition).data


def slugs(client: TestClient, caller: Caller) -> list[str]:
    return [c["slug"] for c in client.get(f"{API}/competitions", headers=caller.headers).json()]


@pytest.mark.parametrize(
    ("files", "formats"),
    [(evalai_files(), "evalai"), (codabench_files(), "codabench"), (codalab_files(), "codalab")],
    ids=["evalai", "codabench", "codalab"],
)
def test_a_program_scored_bundle_is_imported_as_a_draft_with_its_phases_and_columns(
    client: TestClient, host: Caller, files: dict[str, bytes | str], formats: str
) -> None:
    response = import_bundle(client, host, make_zip(files), slug="imported")
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["slug"] == "imported" and body["status"] == "draft"
    assert body["metric"]["name"] == "program"
    assert body["phases"] and all(
        c["program"] or c["computed"] for c in body["leaderboard_columns"]
    )
    # The reference data is each phase's published answer key: the phase takes submissions.
    assert all(p["has_answer_key"] for p in body["phases"]), body["phases"]
    assert not any("program jail" in w for w in body["warnings"])
    shown = client.get(f"{API}/competitions/imported", headers=host.headers).json()
    assert shown["phases"] == body["phases"]
    assert shown["leaderboard_columns"] == body["leaderboard_columns"]


def test_a_dry_run_reports_the_competition_and_keeps_nothing(
    client: TestClient, host: Caller, settings: Any
) -> None:
    response = import_bundle(client, host, podium_bundle(), slug="prices", dry_run=True)
    assert response.status_code == 201, response.text
    assert response.json()["dry_run"] is True
    assert [p["name"] for p in response.json()["phases"]] == ["dev", "final"]
    assert "prices" not in slugs(client, host)
    assert client.get(f"{API}/competitions/prices", headers=host.headers).status_code == 404
    stored = [p for p in (settings.data_dir).rglob("*") if p.is_file()]
    assert [p for p in stored if "answer-keys" in str(p) or "programs" in str(p)] == []


def test_only_organisers_import(client: TestClient, alice: Caller) -> None:
    assert import_bundle(client, alice, podium_bundle()).status_code == 403
    anonymous = client.post(
        f"{API}/competitions/import", files={"file": ("b.zip", podium_bundle(), "application/zip")}
    )
    assert anonymous.status_code == 401


def test_an_invalid_bundle_is_a_422_naming_the_file_and_field_and_creates_nothing(
    client: TestClient, host: Caller
) -> None:
    config = EVALAI_CONFIG.replace('"default_order_by": "Total"', '"default_order_by": "Score"')
    response = import_bundle(client, host, make_zip(evalai_files(config=config)), slug="broken")
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "invalid_bundle"
    assert body["file"] == "bundle.zip/challenge_config.yaml"
    assert body["field"] == "leaderboard[0].schema.default_order_by"
    assert "broken" not in slugs(client, host)


@pytest.mark.parametrize(
    ("bundle", "named"),
    [
        (make_zip({"../escape.yaml": "x: 1", "competition.yaml": "version: 2"}), "escapes"),
        (b"not a zip at all", "zip"),
        (make_zip({"readme.txt": "hello"}), "competition.yaml"),
    ],
    ids=["path-escape", "not-a-zip", "no-config"],
)
def test_hostile_bundles_are_refused_by_name(
    client: TestClient, host: Caller, bundle: bytes, named: str
) -> None:
    response = import_bundle(client, host, bundle, slug="hostile")
    assert response.status_code == 422, response.text
    assert named in response.json()["detail"]
    assert "hostile" not in slugs(client, host)


def test_a_bad_answer_key_undoes_everything_made_before_it(
    client: TestClient, host: Caller, settings: Any
) -> None:
    """The second phase's key is refused after the first's was stored: no competition, and
    neither key's blob is left behind."""
    competition = catalogue_competition()
    bad = replace(
        competition.phases[1],
        answer_key=(competition.phases[1].answer_key[0].__class__("key.csv", b"id\n1\n"),),
    )
    bundle = export_codabench(replace(competition, phases=(competition.phases[0], bad))).data
    response = import_bundle(client, host, bundle, slug="half")
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "phases[1].reference_data"
    assert "half" not in slugs(client, host)
    assert not any(p.is_file() for p in settings.data_dir.rglob("answer-keys/*/*"))


def test_a_taken_slug_is_a_409(client: TestClient, host: Caller) -> None:
    assert import_bundle(client, host, podium_bundle(), slug="same").status_code == 201
    assert import_bundle(client, host, podium_bundle(), slug="same").status_code == 409


def test_a_bundle_over_the_limit_is_a_413(client: TestClient, host: Caller) -> None:
    limit = client.app.state.settings.bundle_max_bytes  # type: ignore[attr-defined]
    response = import_bundle(client, host, b"x" * (limit + 70_000))
    assert response.status_code == 413


# --- export ---------------------------------------------------------------------------------


def test_only_hosts_export(client: TestClient, host: Caller, alice: Caller, make_user: Any) -> None:
    """A participant and another competition's host hear 403 (published) or 404 (a draft they
    cannot see); no token is 401."""
    other = make_user("other-host", organiser=True)
    assert import_bundle(client, other, podium_bundle(), slug="elsewhere").status_code == 201
    assert import_bundle(client, host, podium_bundle(), slug="prices").status_code == 201
    url = f"{API}/competitions/prices/export"
    assert client.get(url, headers=other.headers).status_code == 404  # a draft: unseen
    assert client.get(url, headers=alice.headers).status_code == 404
    with client.app.state.session_factory() as session:  # type: ignore[attr-defined]
        from app.models import Competition

        session.query(Competition).filter_by(slug="prices").update({"status": "published"})
        session.commit()
    assert client.get(url, headers=host.headers).status_code == 200
    assert client.get(url, headers=other.headers).status_code == 403
    assert client.get(url, headers=alice.headers).status_code == 403
    assert client.get(url).status_code == 401


def test_a_symbolic_link_in_a_bundle_is_refused(client: TestClient, host: Caller) -> None:
    response = import_bundle(client, host, symlink_zip("competition.yaml", "/etc/passwd"))
    assert response.status_code == 422
    assert "symbolic link" in response.json()["detail"]


def test_a_bundle_that_unpacks_past_the_limit_stops_there(client: TestClient, host: Caller) -> None:
    client.app.state.settings.bundle_max_unpacked_bytes = 100_000  # type: ignore[attr-defined]
    bomb = make_zip({"competition.yaml": "version: 2\n", "data/zeros.bin": b"\0" * 1_000_000})
    assert len(bomb) < 100_000
    response = import_bundle(client, host, bomb, slug="bomb")
    assert response.status_code == 422
    assert "uncompresses to more than 100000 bytes" in response.json()["detail"]


def test_only_a_site_admin_imports_for_another_organiser(
    client: TestClient, host: Caller, make_user: Any
) -> None:
    admin = make_user("root", admin=True)
    refused = import_bundle(client, host, podium_bundle(), slug="theirs", owner="root")
    assert refused.status_code == 403
    made = import_bundle(client, admin, podium_bundle(), slug="theirs", owner="host")
    assert made.status_code == 201, made.text
    hosts = client.get(f"{API}/competitions/theirs/hosts", headers=host.headers).json()
    assert hosts == [{"user": "host", "role": "owner", "added_at": hosts[0]["added_at"]}]
