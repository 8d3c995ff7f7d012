"""Phases and leaderboard columns: definitions, filing uploads into phases, per-phase keys and
quotas, board rules (public, hidden, blind), counting rules, columns and sorting."""

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from app.models import AuditEntry, Competition, Phase
from app.teams.service import list_teams, team_counts
from tests.helpers import API, csv_bytes

NOW = datetime.now(UTC)
PAST = (NOW - timedelta(days=10)).isoformat()
YESTERDAY = (NOW - timedelta(days=1)).isoformat()
TOMORROW = (NOW + timedelta(days=1)).isoformat()
NEXT_WEEK = (NOW + timedelta(days=7)).isoformat()
LATER = (NOW + timedelta(days=14)).isoformat()

# A regression key: ids a..d, two public rows and two private ones.
REG_KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 4.0, "Private"],
)
COLUMNS = [
    {"key": "rmse", "title": "RMSE", "metric": {"name": "rmse"}},
    {"key": "mae", "title": "MAE", "metric": {"name": "mae"}},
]


def _preds(*values: float) -> bytes:
    return csv_bytes(["id", "y"], *[[k, v] for k, v in zip("abcd", values, strict=True)])


def _create(client, host, slug="reg", **fields: Any):
    body = {"slug": slug, "title": slug.title(), "columns": COLUMNS, **fields}
    return client.post(f"{API}/competitions", json=body, headers=host.headers)


def _created(client, host, slug="reg", **fields: Any) -> dict[str, Any]:
    response = _create(client, host, slug, **fields)
    assert response.status_code == 201, response.text
    return response.json()


def _key(client, host, slug="reg", phase=None, content=REG_KEY):
    path = f"phases/{phase}/answer-key" if phase else "answer-key"
    return client.put(
        f"{API}/competitions/{slug}/{path}",
        files={"file": ("key.csv", content, "text/csv")},
        headers=host.headers,
    )


def _submit(client, caller, content, slug="reg", **data: Any):
    return client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": ("sub.csv", content, "text/csv")},
        data=data,
        headers=caller.headers,
    )


def _board(client, caller, slug="reg", **params: Any):
    return client.get(
        f"{API}/competitions/{slug}/leaderboard", params=params, headers=caller.headers
    )


def _set_phase(session_factory, name: str, **fields: Any) -> None:
    with session_factory() as session:
        session.execute(update(Phase).where(Phase.name == name).values(**fields))
        session.commit()


# -- definitions ------------------------------------------------------------------------------


def test_metric_and_columns_together_is_a_422_naming_both(client, host):
    response = _create(client, host, metric={"name": "rmse"})
    assert response.status_code == 422
    assert "'metric'" in response.text and "'columns'" in response.text


def test_deadline_and_phases_together_is_a_422_naming_both(client, host):
    response = _create(client, host, deadline=NEXT_WEEK, phases=[{"name": "dev"}])
    assert response.status_code == 422
    assert "'deadline'" in response.text and "'phases'" in response.text


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"columns": [COLUMNS[0], {**COLUMNS[1], "key": "rmse"}]}, "duplicate column key"),
        ({"columns": [{"key": "x", "metric": {"name": "no_such_metric"}}]}, "columns[0].metric"),
        (
            {"columns": [COLUMNS[0], {"key": "acc", "metric": {"name": "accuracy"}}]},
            "reads a submission differently",
        ),
        (
            {
                "columns": [
                    *COLUMNS,
                    {"key": "r2", "metric": {"name": "r2"}},
                    {"key": "m", "computed": {"op": "mean", "of": ["rmse", "r2"]}},
                ]
            },
            "directions disagree",
        ),
        ({"columns": [*COLUMNS, {"key": "m", "computed": {"op": "mean", "of": ["nope"]}}]}, "nope"),
        ({"columns": [{"key": f"c{i}", "metric": {"name": "rmse"}} for i in range(21)]}, "columns"),
        ({"phases": [{"name": "dev"}, {"name": "dev"}]}, "duplicate phase name"),
        ({"phases": [{"name": "Not A Slug"}]}, "phases"),
        ({"phases": [{"name": "dev", "start": TOMORROW, "end": YESTERDAY}]}, "end must come after"),
        ({"phases": [{"name": f"p{i}"} for i in range(21)]}, "phases"),
    ],
)
def test_bad_definitions_are_a_422_naming_the_field(client, host, fields, named):
    response = _create(client, host, **fields)
    assert response.status_code == 422, response.text
    assert named in response.text


def test_a_legacy_body_has_one_phase_main_and_one_column_named_after_its_metric(client, host):
    body = {"slug": "old", "title": "Old", "metric": {"name": "rmse"}, "deadline": NEXT_WEEK}
    created = client.post(f"{API}/competitions", json=body, headers=host.headers).json()
    assert [p["name"] for p in created["phases"]] == ["main"]
    assert created["phases"][0]["end"] == created["deadline"]
    assert [c["key"] for c in created["leaderboard_columns"]] == ["rmse"]
    assert created["leaderboard_columns"][0]["direction"] == "minimize"


# -- columns ----------------------------------------------------------------------------------


def test_every_column_is_scored_and_shown_on_the_board_and_the_submission(client, host, alice):
    columns = [*COLUMNS, {"key": "avg", "computed": {"op": "mean", "of": ["rmse", "mae"]}}]
    _created(client, host, columns=columns)
    assert _key(client, host).status_code == 201
    submission = _submit(client, alice, _preds(2.0, 2.0, 3.0, 4.0)).json()
    board = _board(client, alice).json()
    assert [c["key"] for c in board["columns"]] == ["rmse", "mae", "avg"]
    assert board["sort"] == "rmse" and board["phase"] == "main"
    scores = board["rows"][0]["scores"]
    # Public rows a, b: errors 1 and 0.
    assert scores["rmse"] == pytest.approx(0.5**0.5, abs=1e-5)
    assert scores["mae"] == pytest.approx(0.5)
    assert scores["avg"] == pytest.approx((0.5**0.5 + 0.5) / 2, abs=1e-5)
    assert board["rows"][0]["score"] == scores["rmse"]
    view = client.get(f"{API}/submissions/{submission['id']}", headers=alice.headers).json()
    assert view["phase"] == "main"
    assert view["scores"]["mae"] == {"public": pytest.approx(0.5), "private": None}
    host_view = client.get(f"{API}/submissions/{submission['id']}", headers=host.headers).json()
    assert host_view["scores"]["mae"]["private"] == pytest.approx(0.0)


def test_the_next_column_breaks_a_tie_in_the_first(client, host, alice, bob):
    # Equal RMSE on the public rows, different MAE: alice errs (1, 1), rmse 1 and mae 1; bob
    # errs (0, 2**0.5), rmse 1 and mae 0.707. Bob ranks first although alice submitted first.
    _created(client, host)
    _key(client, host)
    _submit(client, alice, _preds(2.0, 3.0, 3.0, 4.0))
    _submit(client, bob, _preds(1.0, 2.0 + 2**0.5, 3.0, 4.0))
    rows = _board(client, alice).json()["rows"]
    assert [r["team"] for r in rows] == ["bob", "alice"]
    assert rows[0]["score"] == pytest.approx(rows[1]["score"])


def test_sort_ranks_by_another_column_and_an_unknown_one_is_a_422(client, host, alice, bob):
    _created(client, host)
    _key(client, host)
    _submit(client, alice, _preds(1.0, 4.0, 3.0, 4.0))  # rmse 1.414, mae 1
    _submit(client, bob, _preds(2.2, 3.2, 3.0, 4.0))  # rmse 1.2, mae 1.2
    assert [r["team"] for r in _board(client, alice).json()["rows"]] == ["bob", "alice"]
    by_mae = _board(client, alice, sort="mae").json()
    assert by_mae["sort"] == "mae"
    assert [(r["rank"], r["team"]) for r in by_mae["rows"]] == [(1, "alice"), (2, "bob")]
    csv = client.get(f"{API}/competitions/reg/leaderboard.csv?sort=mae", headers=alice.headers)
    lines = csv.text.splitlines()
    assert lines[0].endswith(",rmse,mae") and lines[1].startswith("1,alice")
    response = _board(client, alice, sort="nope")
    assert response.status_code == 422 and "rmse, mae" in response.text


def test_a_hidden_column_is_shown_to_hosts_only(client, host, alice):
    columns = [COLUMNS[0], {**COLUMNS[1], "hidden": True}]
    _created(client, host, columns=columns)
    _key(client, host)
    submission = _submit(client, alice, _preds(2.0, 2.0, 3.0, 4.0)).json()
    participant = _board(client, alice).json()
    assert [c["key"] for c in participant["columns"]] == ["rmse"]
    assert set(participant["rows"][0]["scores"]) == {"rmse"}
    assert _board(client, alice, sort="mae").status_code == 422
    assert "mae" in _board(client, host).json()["rows"][0]["scores"]
    view = client.get(f"{API}/submissions/{submission['id']}", headers=alice.headers).json()
    assert set(view["scores"]) == {"rmse"}


def test_precision_rounds_what_is_shown_not_what_ranks(client, host, alice):
    _created(client, host, columns=[{**COLUMNS[0], "precision": 2}, COLUMNS[1]])
    _key(client, host)
    _submit(client, alice, _preds(2.0, 2.0, 3.0, 4.0))
    row = _board(client, alice).json()["rows"][0]
    assert row["scores"]["rmse"] == 0.71
    assert row["scores"]["mae"] == 0.5


# -- phases: filing, keys, quotas -------------------------------------------------------------


def _two_phases(client, host, **final: Any) -> None:
    phases = [
        {"name": "dev", "title": "Development", "start": PAST, "end": NEXT_WEEK},
        {"name": "final", "start": NEXT_WEEK, "end": LATER, **final},
    ]
    _created(client, host, phases=phases)
    assert _key(client, host, phase="dev").status_code == 201
    assert _key(client, host, phase="final").status_code == 201


def test_an_upload_files_into_the_open_phase_and_a_closed_one_is_a_409(client, host, alice):
    _two_phases(client, host)
    accepted = _submit(client, alice, _preds(1, 2, 3, 4))
    assert accepted.status_code == 202
    view = client.get(f"{API}/submissions/{accepted.json()['id']}", headers=alice.headers).json()
    assert view["phase"] == "dev"
    refused = _submit(client, alice, _preds(1, 2, 3, 4), phase="final")
    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "phase_closed" and body["next_phase"] == "final"
    assert "final" in body["detail"] and "opens at" in body["detail"]


def test_outside_every_window_is_a_409_naming_the_next_phase(client, host, alice, session_factory):
    _two_phases(client, host)
    _set_phase(session_factory, "dev", end=datetime.now(UTC) - timedelta(hours=1))
    refused = _submit(client, alice, _preds(1, 2, 3, 4))
    assert refused.status_code == 409
    assert refused.json()["next_phase"] == "final"
    listed = client.get(f"{API}/competitions/reg/submissions", headers=alice.headers).json()
    assert listed == []  # nothing stored, nothing counted


def test_overlapping_open_phases_need_the_phase_field(client, host, alice):
    phases = [{"name": "dev", "start": PAST, "end": LATER}, {"name": "test", "start": PAST}]
    _created(client, host, phases=phases)
    _key(client, host, phase="dev")
    _key(client, host, phase="test")
    refused = _submit(client, alice, _preds(1, 2, 3, 4))
    assert refused.status_code == 422
    assert refused.json()["open_phases"] == ["dev", "test"]
    accepted = _submit(client, alice, _preds(1, 2, 3, 4), phase="test")
    assert accepted.status_code == 202
    assert _board(client, alice, phase="test").json()["rows"][0]["team"] == "alice"
    assert _board(client, alice, phase="dev").json()["rows"] == []


def test_each_phase_has_its_own_key_and_the_legacy_route_names_the_phase_route(client, host):
    phases = [{"name": "dev", "start": PAST, "end": NEXT_WEEK}, {"name": "final", "end": LATER}]
    _created(client, host, phases=phases)
    legacy = _key(client, host)
    assert legacy.status_code == 409
    assert "/phases/{name}/answer-key" in legacy.json()["detail"]
    assert _key(client, host, phase="dev").json()["version"] == 1
    assert _key(client, host, phase="final").json()["version"] == 1
    assert _key(client, host, phase="dev").json()["version"] == 2
    versions = client.get(
        f"{API}/competitions/reg/phases/dev/answer-key/versions", headers=host.headers
    ).json()
    assert [v["version"] for v in versions] == [1, 2]
    assert _key(client, host, phase="nope").status_code == 404


def test_phase_routes_refuse_participants_and_other_hosts(client, host, alice, make_user):
    _two_phases(client, host)
    other = make_user("other-host", organiser=True)
    for caller in (alice, other):
        assert _key(client, caller, phase="dev").status_code in (403, 404)
        patched = client.patch(
            f"{API}/competitions/reg/phases/dev", json={"title": "x"}, headers=caller.headers
        )
        assert patched.status_code in (403, 404)


def test_quotas_are_per_phase(client, host, alice):
    phases = [
        {"name": "dev", "start": PAST, "daily_submission_limit": 1},
        {"name": "test", "start": PAST, "daily_submission_limit": 1},
    ]
    _created(client, host, phases=phases)
    _key(client, host, phase="dev")
    _key(client, host, phase="test")
    assert _submit(client, alice, _preds(1, 2, 3, 4), phase="dev").status_code == 202
    assert _submit(client, alice, _preds(1, 2, 3, 4), phase="dev").status_code == 429
    assert _submit(client, alice, _preds(1, 2, 3, 4), phase="test").status_code == 202
    quota = client.get(f"{API}/competitions/reg/quota?phase=test", headers=alice.headers).json()
    assert quota["phase"] == "test" and quota["remaining_today"] == 0


def test_patching_a_phase_moves_its_window_and_is_audited(client, host, session_factory):
    _two_phases(client, host)
    response = client.patch(
        f"{API}/competitions/reg/phases/final",
        json={"end": "2099-01-31", "board": "blind", "counts": "last"},
        headers=host.headers,
    )
    assert response.status_code == 200, response.text
    phase = response.json()
    assert phase["end"] == "2099-01-31T23:59:59Z" and phase["board"] == "blind"
    competition = client.get(f"{API}/competitions/reg", headers=host.headers).json()
    assert competition["deadline"] == "2099-01-31T23:59:59Z"  # the last phase's end
    bad = client.patch(
        f"{API}/competitions/reg/phases/final", json={"end": PAST}, headers=host.headers
    )
    assert bad.status_code == 422
    with session_factory() as session:
        actions = session.scalars(select(AuditEntry.action)).all()
    assert "phase_change" in actions


def test_the_competition_window_of_a_several_phase_competition_is_changed_per_phase(client, host):
    _two_phases(client, host)
    response = client.patch(
        f"{API}/competitions/reg", json={"deadline": "2099-01-01"}, headers=host.headers
    )
    assert response.status_code == 409 and "/phases/" in response.json()["detail"]


# -- board rules ------------------------------------------------------------------------------


def test_a_blind_phase_shows_participants_nothing_of_a_score_until_it_ends(
    client, host, alice, session_factory
):
    _created(
        client, host, phases=[{"name": "final", "start": PAST, "end": LATER, "board": "blind"}]
    )
    _key(client, host, phase="final")
    submission_id = _submit(client, alice, _preds(2, 2, 3, 4)).json()["id"]
    refused = _board(client, alice)
    assert refused.status_code == 403 and refused.json()["code"] == "board_blind"
    assert refused.json()["ends_at"] is not None
    private = _board(client, alice, board="private")  # asked for directly, not only by default
    assert private.status_code == 403 and private.json()["code"] == "board_blind"
    assert client.get(f"{API}/competitions/reg/leaderboard").status_code == 403
    csv = client.get(f"{API}/competitions/reg/leaderboard.csv", headers=alice.headers)
    assert csv.status_code == 403
    view = client.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    assert view["status"] == "scored"
    assert view["public_score"] is None and view["scores"] == {}
    assert view["public_interval"] is None
    listed = client.get(f"{API}/competitions/reg/submissions", headers=alice.headers).json()
    assert listed[0]["public_score"] is None
    # Hosts see everything; once the phase ends, it is an ordinary board.
    assert _board(client, host).json()["rows"][0]["team"] == "alice"
    assert _board(client, host, board="private").json()["rows"][0]["team"] == "alice"
    _set_phase(session_factory, "final", end=datetime.now(UTC) - timedelta(seconds=1))
    assert _board(client, alice).json()["rows"][0]["team"] == "alice"
    view = client.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    assert view["public_score"] is not None and view["private_score"] is not None


def test_a_hidden_board_is_for_hosts_while_each_team_sees_its_own_scores(client, host, alice):
    _created(client, host, phases=[{"name": "dev", "start": PAST, "board": "hidden"}])
    _key(client, host, phase="dev")
    submission_id = _submit(client, alice, _preds(2, 2, 3, 4)).json()["id"]
    refused = _board(client, alice)
    assert refused.status_code == 403 and refused.json()["code"] == "board_hidden"
    assert _board(client, host).status_code == 200
    view = client.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    assert view["public_score"] is not None


@pytest.mark.parametrize(("counts", "stands"), [("best", "good"), ("last", "worse")])
def test_the_counting_rule_decides_which_submission_stands(client, host, alice, counts, stands):
    _created(client, host, phases=[{"name": "dev", "start": PAST, "counts": counts}])
    _key(client, host, phase="dev")
    _submit(client, alice, _preds(1, 2, 3, 4), description="good")
    _submit(client, alice, _preds(3, 4, 3, 4), description="worse")
    row = _board(client, alice).json()["rows"][0]
    assert row["score"] == (0.0 if stands == "good" else 2.0)
    assert row["entries"] == 2


def test_a_phase_may_carry_its_own_columns(client, host, alice):
    phases = [
        {"name": "dev", "start": PAST, "columns": [COLUMNS[1]]},
    ]
    created = _created(client, host, phases=phases)
    assert created["phases"][0]["columns"][0]["key"] == "mae"
    _key(client, host, phase="dev")
    _submit(client, alice, _preds(2, 2, 3, 4))
    board = _board(client, alice).json()
    assert [c["key"] for c in board["columns"]] == ["mae"]
    assert board["rows"][0]["score"] == pytest.approx(0.5)


def test_a_phase_with_columns_ranking_the_other_way_is_a_422(client, host):
    phases = [{"name": "dev", "columns": [{"key": "r2", "metric": {"name": "r2"}}]}]
    response = _create(client, host, phases=phases)
    assert response.status_code == 422 and "phases[0].columns" in response.text


def test_a_competition_row_keeps_the_first_start_and_the_last_end(client, host, session_factory):
    _two_phases(client, host)
    with session_factory() as session:
        competition = session.scalar(select(Competition).where(Competition.slug == "reg"))
        assert competition.deadline is not None
        assert competition.deadline.isoformat().startswith(LATER[:16])


# -- entry details and entries ----------------------------------------------------------------

FIELDS = [
    {"key": "method_name", "required": True, "on_board": True},
    {"key": "project_url"},
    {"key": "external_data", "type": "boolean"},
    {"key": "track", "type": "choice", "options": ["cpu", "gpu"]},
]


def _with_fields(client, host):
    _created(client, host, phases=[{"name": "dev", "start": PAST, "entry_fields": FIELDS}])
    _key(client, host, phase="dev")


@pytest.mark.parametrize(
    ("details", "named"),
    [
        ("{}", "details.method_name: is required"),
        ('{"method_name": "m", "project_url": "javascript:alert(1)"}', "details.project_url"),
        ('{"method_name": "m", "external_data": "perhaps"}', "details.external_data"),
        ('{"method_name": "m", "track": "tpu"}', "details.track: must be one of cpu, gpu"),
        ('{"method_name": "m", "sneaky": 1}', "unknown field(s) sneaky"),
        ('{"method_name": "' + "x" * 300 + '"}', "details.method_name: is 300 characters"),
        ("[1, 2]", "must be a JSON object"),
        ("{not json", "not a JSON object"),
    ],
)
def test_bad_entry_details_are_a_422_naming_the_field_and_nothing_is_stored(
    client, host, alice, details, named
):
    _with_fields(client, host)
    response = _submit(client, alice, _preds(1, 2, 3, 4), details=details)
    assert response.status_code == 422, response.text
    assert named in response.json()["detail"]
    assert client.get(f"{API}/competitions/reg/submissions", headers=alice.headers).json() == []


def test_entry_details_show_on_the_submission_and_the_on_board_ones_on_boards(client, host, alice):
    _with_fields(client, host)
    details = {
        "method_name": "=HYPERLINK(1)",
        "project_url": "https://example.org/x",
        "external_data": "false",
        "track": "gpu",
    }

    accepted = _submit(client, alice, _preds(1, 2, 3, 4), details=json.dumps(details))
    assert accepted.status_code == 202, accepted.text
    view = client.get(f"{API}/submissions/{accepted.json()['id']}", headers=alice.headers).json()
    assert view["details"] == {**details, "external_data": False}
    row = _board(client, alice).json()["rows"][0]
    assert row["details"] == {"method_name": "=HYPERLINK(1)"}
    csv = client.get(f"{API}/competitions/reg/leaderboard.csv", headers=alice.headers).text
    header, line = csv.splitlines()[:2]
    assert header.endswith(",method_name")
    assert line.endswith(",'=HYPERLINK(1)")  # neutralised for spreadsheets


def test_entries_count_the_teams_scored_submissions_in_the_phase(client, host, alice):
    phases = [{"name": "dev", "start": PAST}, {"name": "test", "start": PAST}]
    _created(client, host, phases=phases)
    _key(client, host, phase="dev")
    _key(client, host, phase="test")
    _submit(client, alice, _preds(1, 2, 3, 4), phase="dev")
    _submit(client, alice, _preds(1, 2, 3, 4), phase="dev")
    _submit(client, alice, b"not,a\nvalid file", phase="dev")  # failed: not an entry
    _submit(client, alice, _preds(1, 2, 3, 4), phase="test")
    assert _board(client, alice, phase="dev").json()["rows"][0]["entries"] == 2
    assert _board(client, alice, phase="test").json()["rows"][0]["entries"] == 1


# -- host downloads -------------------------------------------------------------------------


def test_hosts_download_a_phases_submissions_as_csv_and_zip(client, host, alice, bob, make_user):
    _two_phases(client, host)
    first = _preds(2, 2, 3, 4)
    _submit(client, alice, first, description="=cmd")
    _submit(client, bob, _preds(1, 2, 3, 4))
    csv = client.get(f"{API}/competitions/reg/submissions.csv?phase=dev", headers=host.headers)
    assert csv.status_code == 200, csv.text
    lines = csv.text.splitlines()
    assert lines[0].endswith("rmse_public,rmse_private,mae_public,mae_private")
    assert len(lines) == 3 and ",alice,alice,dev," in lines[1] and "'=cmd" in lines[1]
    assert lines[2].split(",")[-4:] == ["0.0", "0.0", "0.0", "0.0"]
    empty = client.get(f"{API}/competitions/reg/submissions.csv?phase=final", headers=host.headers)
    assert empty.text.count("\n") == 1
    response = client.get(f"{API}/competitions/reg/submissions.zip?phase=dev", headers=host.headers)
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = archive.namelist()
        assert len(names) == 2 and "_alice_sub.csv" in names[0]
        assert archive.read(names[0]) == first
    other = make_user("other-host", organiser=True)
    for caller in (alice, other):
        for name in ("submissions.csv", "submissions.zip"):
            refused = client.get(f"{API}/competitions/reg/{name}", headers=caller.headers)
            assert refused.status_code in (403, 404)
    assert client.get(f"{API}/competitions/reg/submissions.csv").status_code == 401


def test_a_phases_key_is_fixed_rescored_and_published_on_its_own(client, host, alice):
    _two_phases(client, host)
    _submit(client, alice, _preds(2, 2, 3, 4))
    fixed = csv_bytes(
        ["id", "y", "Usage"],
        ["a", 2.0, "Public"],
        ["b", 2.0, "Public"],
        ["c", 3.0, "Private"],
        ["d", 4.0, "Private"],
    )
    assert _key(client, host, phase="dev", content=fixed).json()["version"] == 2
    started = client.post(f"{API}/competitions/reg/rescore?phase=dev", headers=host.headers)
    assert started.status_code == 202 and started.json()["queued"] == 1
    # The final phase has one version only: nothing to move to.
    other = client.post(f"{API}/competitions/reg/rescore?phase=final", headers=host.headers)
    assert other.status_code == 409
    preview = client.get(f"{API}/competitions/reg/rescore/preview?phase=dev", headers=host.headers)
    assert preview.json()["public"][0]["new_score"] == 0.0
    published = client.post(
        f"{API}/competitions/reg/rescore/publish?phase=dev", headers=host.headers
    )
    assert published.status_code == 200 and published.json()["version"] == 2
    assert _board(client, alice, phase="dev").json()["rows"][0]["score"] == 0.0
    refused = client.post(f"{API}/competitions/reg/rescore?phase=dev", headers=alice.headers)
    assert refused.status_code in (403, 404)


# -- baselines --------------------------------------------------------------------------------


def test_each_baseline_stands_on_every_board_labelled_and_unranked(
    client, host, alice, bob, session_factory
):
    _two_phases(client, host)
    for label, content in (
        ("Mean predictor", _preds(2.5, 2.5, 2.5, 2.5)),
        ("", _preds(1, 2, 3, 5)),
    ):
        baseline = _submit(client, host, content, description=label, baseline="true")
        assert baseline.status_code == 202, baseline.text
    _submit(client, alice, _preds(1, 2, 3, 4))
    _submit(client, bob, _preds(3, 3, 3, 4))
    for board in ("public", "private"):
        rows = _board(client, host, board=board).json()["rows"]
        labelled = {r["team"]: r["rank"] for r in rows}
        assert labelled["Mean predictor"] is None and labelled["Baseline"] is None
        assert sorted(r["rank"] for r in rows if r["rank"] is not None) == [1, 2]
    csv = client.get(f"{API}/competitions/reg/leaderboard.csv", headers=alice.headers).text
    assert ",Mean predictor," in csv
    # A baseline is not a team: counted (pages, kaggle list) and listed (Teams tab) are two.
    with session_factory() as session:
        competition = session.scalar(select(Competition).where(Competition.slug == "reg"))
        assert team_counts(session, competition_ids=[competition.id]) == {competition.id: 2}
        listed = list_teams(session, competition=competition)
        assert [team.name for team, _members in listed] == ["alice", "bob"]


@pytest.mark.parametrize("counts", ["best", "last"])
def test_a_phase_without_choices_refuses_a_selection(client, host, alice, counts):
    _created(client, host, phases=[{"name": "dev", "start": PAST, "counts": counts}])
    _key(client, host, phase="dev")
    submission_id = _submit(client, alice, _preds(1, 2, 3, 4)).json()["id"]
    refused = client.post(f"{API}/submissions/{submission_id}/select", headers=alice.headers)
    assert refused.status_code == 409 and "nothing to select" in refused.json()["detail"]
