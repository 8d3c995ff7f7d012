"""Migration between phases: when a phase whose ``migrate`` names another opens, each team's
submissions there (the selected ones, or the last) are scored on it once, charged to no quota,
marked as migrated; by a host's call or by the first upload into the phase."""

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.bundles.builders import CODABENCH_CONFIG, codabench_files, make_zip
from tests.bundles.test_import_api import import_bundle
from tests.competitions.test_phases import (
    LATER,
    NEXT_WEEK,
    PAST,
    _created,
    _key,
    _preds,
    _set_phase,
    _submit,
)
from tests.helpers import API


def _competition(client, host, take: str = "selected") -> None:  # type: ignore[no-untyped-def]
    phases = [
        {"name": "dev", "start": PAST, "end": NEXT_WEEK},
        {
            "name": "final",
            "start": NEXT_WEEK,
            "end": LATER,
            "migrate": {"from": "dev", "take": take},
        },
    ]
    _created(client, host, phases=phases)
    assert _key(client, host, phase="dev").status_code == 201
    assert _key(client, host, phase="final").status_code == 201


def _scored(client, caller, content: bytes, **data: Any) -> int:  # type: ignore[no-untyped-def]
    response = _submit(client, caller, content, **data)
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _open_final(session_factory) -> None:  # type: ignore[no-untyped-def]
    _set_phase(session_factory, "final", start=datetime.now(UTC) - timedelta(minutes=1))


def _final(client, host) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    response = client.get(f"{API}/competitions/reg/submissions", headers=host.headers)
    return [s for s in response.json() if s["phase"] == "final"]


def test_a_host_migrates_each_teams_selected_or_last_submission_once(
    client, host, alice, bob, session_factory
):
    _competition(client, host)
    first = _scored(client, alice, _preds(1, 2, 3, 4))
    _scored(client, alice, _preds(9, 9, 9, 9))
    assert (
        client.post(f"{API}/submissions/{first}/select", headers=alice.headers).status_code == 200
    )
    bobs = [_scored(client, bob, _preds(2, 2, 3, 4)), _scored(client, bob, _preds(2, 2, 2, 4))]
    url = f"{API}/competitions/reg/phases/final/migrate"
    assert client.post(url, headers=alice.headers).status_code in (403, 404)
    _open_final(session_factory)
    done = client.post(url, headers=host.headers)
    assert done.status_code == 200, done.text
    assert done.json()["migrated"] == 2
    copies = {
        s["migrated_from"]: s
        for s in (
            client.get(f"{API}/submissions/{i}", headers=host.headers).json()
            for i in done.json()["submission_ids"]
        )
    }
    # alice's selected one, bob's last (he selected none); scored on the final phase.
    assert set(copies) == {first, bobs[1]}
    assert all(c["phase"] == "final" and c["status"] == "scored" for c in copies.values())
    assert all(c["refunded"] for c in copies.values())
    again = client.post(url, headers=host.headers)
    assert again.status_code == 409 and "runs once" in again.json()["detail"]
    quota = client.get(
        f"{API}/competitions/reg/quota", params={"phase": "final"}, headers=alice.headers
    )
    assert quota.status_code == 200, quota.text
    assert quota.json()["phase"] == "final" and quota.json()["used_total"] == 0  # no quota
    phase = client.get(f"{API}/competitions/reg/phases", headers=host.headers).json()[1]
    assert phase["migrate"] == {"from": "dev", "take": "selected"}
    assert phase["migrated_at"] is not None


def test_the_first_upload_into_the_opened_phase_carries_the_migrated_entries_first(
    client, host, alice, bob, session_factory
):
    _competition(client, host, take="last")
    _scored(client, bob, _preds(2, 2, 3, 4))
    _open_final(session_factory)
    # Both phases are open now: the upload names its phase.
    _scored(client, alice, _preds(1, 2, 3, 4), phase="final")
    final = _final(client, host)
    assert sorted((s["team"], s["migrated_from"] is not None) for s in final) == [
        ("alice", False),
        ("bob", True),
    ]
    board = client.get(
        f"{API}/competitions/reg/leaderboard", params={"phase": "final"}, headers=host.headers
    ).json()
    assert {r["team"] for r in board["rows"]} == {"alice", "bob"}


def test_a_migration_from_a_phase_that_is_not_there_is_a_422(client, host):
    phases = [
        {"name": "dev", "start": PAST, "end": NEXT_WEEK},
        {"name": "final", "start": NEXT_WEEK, "migrate": {"from": "nope"}},
    ]
    response = client.post(
        f"{API}/competitions",
        json={
            "slug": "reg",
            "title": "Reg",
            "columns": [{"key": "mae", "metric": {"name": "mae"}}],
            "phases": phases,
        },
        headers=host.headers,
    )
    assert response.status_code == 422
    assert response.json()["field"] == "phases[1].migrate.from"


def test_codabench_auto_migrate_to_this_phase_is_read_as_a_migration(client, host):
    config = CODABENCH_CONFIG.replace(
        "- index: 1\n  name: Final\n",
        "- index: 1\n  name: Final\n  auto_migrate_to_this_phase: true\n",
    )
    assert config != CODABENCH_CONFIG
    response = import_bundle(client, host, make_zip(codabench_files(config)), slug="iris")
    assert response.status_code == 201, response.text
    final = response.json()["phases"][1]
    assert final["migrate"] == {"from": "development", "take": "selected"}
    assert any("auto_migrate_to_this_phase" in w for w in response.json()["warnings"])
    exported = client.get(f"{API}/competitions/iris/export", headers=host.headers)
    again = import_bundle(client, host, exported.content, slug="iris-again")
    assert again.json()["phases"][1]["migrate"] == final["migrate"]
