"""Benchmark mode's settings: ``benchmark: true`` on create and on the settings route, its rules
(no deadline, no phase end, an exact board; a board of every submission is a benchmark's), the
launch checklist, and only the competition's hosts may change it."""

from datetime import UTC, datetime, timedelta

from tests.helpers import API, create_competition, set_competition, upload_key

BODY = {"slug": "bench", "title": "Bench", "metric": {"name": "roc_auc"}}


def _create(client, caller, **fields):
    return client.post(f"{API}/competitions", json={**BODY, **fields}, headers=caller.headers)


def _patch(client, caller, **fields):
    return client.patch(f"{API}/competitions/bench", json=fields, headers=caller.headers)


def _soon() -> str:
    return (datetime.now(UTC) + timedelta(days=30)).isoformat()


def test_a_benchmark_is_made_with_benchmark_true_and_shows_it(client, host):
    made = _create(client, host, benchmark=True, board_every_submission=True)
    assert made.status_code == 201, made.text
    shown = client.get(f"{API}/competitions/bench", headers=host.headers).json()
    assert shown["benchmark"] is True and shown["board_every_submission"] is True
    assert shown["deadline"] is None and [p["end"] for p in shown["phases"]] == [None]
    plain = create_competition(client, host.headers, "plain")
    assert plain["benchmark"] is False and plain["board_every_submission"] is False


def test_a_benchmark_with_a_deadline_or_a_phase_end_is_refused_naming_it(client, host):
    dated = _create(client, host, benchmark=True, deadline=_soon())
    assert dated.status_code == 422 and "never ends" in dated.text
    phased = _create(
        client,
        host,
        benchmark=True,
        phases=[{"name": "dev"}, {"name": "test", "end": _soon()}],
    )
    assert phased.status_code == 422 and "phase 'test'" in phased.text
    ladder = _create(client, host, benchmark=True, public_board_mode="ladder")
    assert ladder.status_code == 422 and "public_board_mode" in ladder.text
    every = _create(client, host, board_every_submission=True)
    assert every.status_code == 422 and "benchmark: true" in every.text


def test_the_settings_route_turns_a_benchmark_on_and_keeps_its_rules(client, host):
    assert _create(client, host, deadline=_soon()).status_code == 201
    refused = _patch(client, host, benchmark=True)
    assert refused.status_code == 422 and "clear the end" in refused.json()["detail"]
    turned = _patch(client, host, benchmark=True, deadline=None)
    assert turned.status_code == 200, turned.text
    assert turned.json()["benchmark"] is True and turned.json()["deadline"] is None
    assert _patch(client, host, deadline=_soon()).status_code == 422
    phase_end = client.patch(
        f"{API}/competitions/bench/phases/main", json={"end": _soon()}, headers=host.headers
    )
    assert phase_end.status_code == 422 and "benchmark" in phase_end.json()["detail"]
    assert _patch(client, host, board_every_submission=True).json()["board_every_submission"]
    off = _patch(client, host, benchmark=False)
    assert off.status_code == 422 and "board_every_submission" in off.json()["detail"]
    assert _patch(client, host, benchmark=None).status_code == 422  # cannot be cleared
    actions = client.get(f"{API}/competitions/bench/audit", headers=host.headers).json()
    assert any(
        e["action"] == "settings_change" and (e.get("after") or {}).get("benchmark") is True
        for e in actions
    )


def test_only_the_competitions_hosts_may_change_it(client, host, alice, make_user):
    assert _create(client, host).status_code == 201
    assert _patch(client, alice, benchmark=True).status_code == 403
    stranger = make_user("stranger", organiser=True)
    assert _patch(client, stranger, benchmark=True).status_code in (403, 404)
    assert client.patch(f"{API}/competitions/bench", json={"benchmark": True}).status_code == 401
    shown = client.get(f"{API}/competitions/bench", headers=host.headers).json()
    assert shown["benchmark"] is False


def test_the_checklist_accepts_an_open_ended_benchmark_and_refuses_one_that_ends(
    client, host, session_factory
):
    assert _create(client, host, status="draft", benchmark=True).status_code == 201
    upload_key(client, host.headers, "bench")
    found = client.get(f"{API}/competitions/bench/checklist", headers=host.headers).json()
    dates = next(i for i in found["items"] if i["key"] == "dates")
    assert dates["ok"] and "open-ended" in dates["detail"] and "benchmark" in dates["detail"]
    # An end written past the API (an old database, a hand edit) fails the checklist.
    set_competition(session_factory, "bench", deadline=datetime.now(UTC) + timedelta(days=3))
    found = client.get(f"{API}/competitions/bench/checklist", headers=host.headers).json()
    dates = next(i for i in found["items"] if i["key"] == "dates")
    assert not dates["ok"] and "never ends" in dates["detail"]
    refused = client.post(f"{API}/competitions/bench/publish", headers=host.headers)
    assert refused.status_code == 409 and "never ends" in refused.json()["detail"]
