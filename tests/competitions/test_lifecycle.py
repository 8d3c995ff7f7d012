"""The launch checklist, publishing a draft, deleting and the dates a host types."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.models import AuditEntry, Competition
from tests.helpers import API, PERFECT, create_competition, csv_bytes, submit, upload_key

FUTURE = (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0)


def _items(body: dict) -> dict[str, bool]:  # type: ignore[type-arg]
    return {i["key"]: i["ok"] for i in body["items"]}


def test_the_checklist_lists_every_failing_item_of_an_empty_draft(client, host):
    create_competition(client, host.headers, "new", status="draft")
    response = client.get(f"{API}/competitions/new/checklist", headers=host.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["ready"] is False
    assert _items(body) == {
        "answer_key": False,
        "sample_scores": False,
        # No deadline: open until a host ends it, as Codabench's "never ends" phases.
        "dates": True,
        "description": False,
    }
    assert all(i["detail"] for i in body["items"])


def test_publish_answers_not_ready_naming_every_failing_item(client, host):
    create_competition(client, host.headers, "new", status="draft", description="A task")
    response = client.post(f"{API}/competitions/new/publish", headers=host.headers)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "not_ready"
    assert {i["key"] for i in body["items"]} == {"answer_key", "sample_scores"}
    assert "answer_key" in body["detail"]


def test_a_ready_draft_is_published_and_audited(client, host, alice, session_factory):
    create_competition(
        client,
        host.headers,
        "new",
        status="draft",
        description="A task",
        deadline=FUTURE.isoformat(),
    )
    assert upload_key(client, host.headers, "new").status_code == 201
    checklist = client.get(f"{API}/competitions/new/checklist", headers=host.headers).json()
    assert checklist["ready"] is True, checklist
    assert "scores the sample" in _detail(checklist, "sample_scores")
    response = client.post(f"{API}/competitions/new/publish", headers=host.headers)
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "published"
    assert client.get(f"{API}/competitions/new", headers=alice.headers).status_code == 200
    with session_factory() as session:
        actions = session.scalars(select(AuditEntry.action)).all()
    assert "publish" in actions
    again = client.post(f"{API}/competitions/new/publish", headers=host.headers)
    assert again.status_code == 409 and "not a draft" in again.json()["detail"]


def _detail(checklist: dict, key: str) -> str:  # type: ignore[type-arg]
    return next(i["detail"] for i in checklist["items"] if i["key"] == key)


def test_a_sample_the_metric_cannot_score_fails_its_item(client, host, monkeypatch):
    # A sample the scorer refuses (here, one id short) is what a metric that cannot read its
    # own sample looks like to the host: the item names the scorer's message.
    from app.competitions import lifecycle

    create_competition(
        client, host.headers, "one", status="draft", description="x", deadline=FUTURE.isoformat()
    )
    assert upload_key(client, host.headers, "one").status_code == 201
    monkeypatch.setattr(
        lifecycle,
        "sample_submission_csv",
        lambda *_a, **_k: csv_bytes(["id", "target"], ["a", 0.5]),
    )
    checklist = client.get(f"{API}/competitions/one/checklist", headers=host.headers).json()
    assert _items(checklist)["sample_scores"] is False
    assert "the sample submission fails" in _detail(checklist, "sample_scores")
    refused = client.post(f"{API}/competitions/one/publish", headers=host.headers)
    assert refused.status_code == 409
    assert [i["key"] for i in refused.json()["items"]] == ["sample_scores"]


def test_past_dates_publish_as_an_ended_competition_and_incoherent_ones_fail(
    client, host, session_factory
):
    create_competition(
        client,
        host.headers,
        "late",
        status="draft",
        description="x",
        start="2020-01-01",
        deadline="2020-02-01",
    )
    checklist = client.get(f"{API}/competitions/late/checklist", headers=host.headers).json()
    # As EvalAI and Codabench publish a challenge whose dates are past: ended, not refused.
    assert _items(checklist)["dates"] is True
    assert "it publishes as an ended competition" in _detail(checklist, "dates")
    with session_factory() as session:
        c = session.scalar(select(Competition).where(Competition.slug == "late"))
        c.team_merge_deadline = c.start  # stored directly: the API refuses it on input
        session.commit()
    checklist = client.get(f"{API}/competitions/late/checklist", headers=host.headers).json()
    assert "merge deadline must come after the start" in _detail(checklist, "dates")


def test_the_checklist_and_publish_are_for_hosts_only(client, host, alice, make_user):
    create_competition(client, host.headers, "pub", description="x")
    other = make_user("olga", organiser=True)
    for caller in (alice, other):
        for method, path in (("GET", "checklist"), ("POST", "publish")):
            response = client.request(
                method, f"{API}/competitions/pub/{path}", headers=caller.headers
            )
            assert response.status_code == 403, (path, response.text)


# --- deletion -------------------------------------------------------------------------------


def test_a_competition_without_ranked_submissions_is_deleted_with_its_blobs(
    client, host, settings, session_factory
):
    create_competition(client, host.headers, "oops", status="draft")
    assert upload_key(client, host.headers, "oops").status_code == 201
    put = client.put(
        f"{API}/competitions/oops/files/train.csv", content=b"id\n1\n", headers=host.headers
    )
    assert put.status_code == 201
    baseline = submit(client, host.headers, PERFECT, "oops", baseline=True)
    assert baseline.status_code == 202, baseline.text
    stored = [p for p in settings.data_dir.rglob("*") if p.is_file() and "oops" not in p.name]
    assert stored
    response = client.delete(f"{API}/competitions/oops", headers=host.headers)
    assert response.status_code == 204, response.text
    assert client.get(f"{API}/competitions/oops", headers=host.headers).status_code == 404
    left = [
        p
        for p in settings.data_dir.rglob("*")
        if p.is_file()
        and any(part in p.parts for part in ("answer-keys", "datafiles", "submissions"))
    ]
    assert left == []
    with session_factory() as session:
        assert session.scalar(select(Competition).where(Competition.slug == "oops")) is None
    # The slug is free again.
    create_competition(client, host.headers, "oops")


def test_a_competition_with_submissions_cannot_be_deleted_and_names_archiving(client, host, alice):
    create_competition(client, host.headers, "busy")
    assert upload_key(client, host.headers, "busy").status_code == 201
    assert client.post(f"{API}/competitions/busy/join", headers=alice.headers).status_code == 201
    assert submit(client, alice.headers, PERFECT, "busy").status_code == 202
    response = client.delete(f"{API}/competitions/busy", headers=host.headers)
    assert response.status_code == 409
    assert response.json()["code"] == "has_submissions"
    assert "archive" in response.json()["detail"]


def test_only_the_owner_or_an_admin_deletes(client, host, alice, make_user):
    create_competition(client, host.headers, "keep")
    cohost = make_user("carl", organiser=True)
    added = client.post(
        f"{API}/competitions/keep/hosts", json={"user": "carl"}, headers=host.headers
    )
    assert added.status_code == 201
    other = make_user("olga", organiser=True)
    for caller in (alice, other, cohost):
        response = client.delete(f"{API}/competitions/keep", headers=caller.headers)
        assert response.status_code == 403, response.text
    admin = make_user("root", admin=True)
    assert client.delete(f"{API}/competitions/keep", headers=admin.headers).status_code == 204


# --- dates ----------------------------------------------------------------------------------


def test_bare_dates_are_the_start_and_end_of_their_utc_day(client, host):
    body = create_competition(
        client,
        host.headers,
        "days",
        start="2030-03-01",
        team_merge_deadline="2030-03-20",
        deadline="2030-03-31",
    )
    assert body["start"] == "2030-03-01T00:00:00Z"
    assert body["team_merge_deadline"] == "2030-03-20T23:59:59Z"
    assert body["deadline"] == "2030-03-31T23:59:59Z"


def test_a_time_without_a_zone_is_utc_and_other_zones_are_converted(client, host):
    body = create_competition(
        client,
        host.headers,
        "times",
        start="2030-03-01T08:30:00",
        deadline="2030-03-31T12:00:00+02:00",
    )
    assert body["start"] == "2030-03-01T08:30:00Z"
    assert body["deadline"] == "2030-03-31T10:00:00Z"
    patched = client.patch(
        f"{API}/competitions/times", json={"deadline": "2030-04-02"}, headers=host.headers
    )
    assert patched.status_code == 200
    assert patched.json()["deadline"] == "2030-04-02T23:59:59Z"


def test_a_bad_date_is_a_422_naming_the_field(client, host):
    body = {"slug": "bad", "title": "Bad", "metric": {"name": "roc_auc"}, "deadline": "2030-02-30"}
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 422
    assert "deadline" in response.text


def test_a_custom_metric_draft_needs_its_metric_file(client, host):
    create_competition(
        client,
        host.headers,
        "own",
        status="draft",
        description="x",
        deadline=FUTURE.isoformat(),
        metric={"name": "custom"},
    )
    assert upload_key(client, host.headers, "own").status_code == 201
    checklist = client.get(f"{API}/competitions/own/checklist", headers=host.headers).json()
    assert _items(checklist)["sample_scores"] is False
    assert "no metric file yet" in _detail(checklist, "sample_scores")


# -- phases and columns -----------------------------------------------------------------------

TWO_PHASES = [
    {"name": "dev", "start": "2030-01-01", "end": "2030-01-31"},
    {"name": "final", "start": "2030-02-01", "end": "2030-02-14", "board": "blind"},
]
THREE_COLUMNS = [
    {"key": "rmse", "metric": {"name": "rmse"}},
    {"key": "mae", "metric": {"name": "mae"}},
    {"key": "mean", "computed": {"op": "mean", "of": ["rmse", "mae"]}},
]
REG_KEY = csv_bytes(
    ["id", "y", "Usage"], ["a", 1.0, "Public"], ["b", 2.0, "Public"], ["c", 3.0, "Private"]
)


def _phased(client, host, slug="two", **fields):  # type: ignore[no-untyped-def]
    body = {
        "slug": slug,
        "title": "Two",
        "status": "draft",
        "description": "A task",
        "columns": THREE_COLUMNS,
        "phases": TWO_PHASES,
        **fields,
    }
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 201, response.text


def _phase_key(client, host, slug: str, phase: str):  # type: ignore[no-untyped-def]
    return client.put(
        f"{API}/competitions/{slug}/phases/{phase}/answer-key",
        files={"file": ("key.csv", REG_KEY, "text/csv")},
        headers=host.headers,
    )


def test_the_checklist_has_a_key_per_phase_and_a_sample_score_per_column(client, host):
    _phased(client, host)
    assert _phase_key(client, host, "two", "dev").status_code == 201
    checklist = client.get(f"{API}/competitions/two/checklist", headers=host.headers).json()
    items = _items(checklist)
    assert items["phases.dev.answer_key"] is True
    assert items["phases.final.answer_key"] is False
    for column in ("rmse", "mae", "mean"):
        assert items[f"phases.dev.sample_scores.{column}"] is True
        assert items[f"phases.final.sample_scores.{column}"] is False
    assert "mean of columns scores the sample" in _detail(
        checklist, "phases.dev.sample_scores.mean"
    )
    refused = client.post(f"{API}/competitions/two/publish", headers=host.headers)
    assert refused.status_code == 409 and refused.json()["code"] == "not_ready"
    failing = refused.json()["items"]
    assert {i["key"] for i in failing} == {
        "phases.final.answer_key",
        "phases.final.sample_scores.rmse",
        "phases.final.sample_scores.mae",
        "phases.final.sample_scores.mean",
    }
    assert all(i["phase"] == "final" for i in failing)
    assert _phase_key(client, host, "two", "final").status_code == 201
    published = client.post(f"{API}/competitions/two/publish", headers=host.headers)
    assert published.status_code == 200, published.text


def test_a_column_that_cannot_score_the_sample_is_named(client, host, monkeypatch):
    from app.competitions import lifecycle
    from app.scoring.core import ScoringError

    real = lifecycle.score_columns_file

    def mae_fails(path, *, columns, **kw):  # type: ignore[no-untyped-def]
        if any(c.key == "mae" for c in columns):
            raise ScoringError("mae cannot read this")
        return real(path, columns=columns, **kw)

    monkeypatch.setattr(lifecycle, "score_columns_file", mae_fails)
    _phased(client, host)
    for phase in ("dev", "final"):
        assert _phase_key(client, host, "two", phase).status_code == 201
    refused = client.post(f"{API}/competitions/two/publish", headers=host.headers)
    assert refused.status_code == 409
    details = {i["key"]: i["detail"] for i in refused.json()["items"]}
    assert set(details) == {
        f"phases.{p}.sample_scores.{c}" for p in ("dev", "final") for c in ("mae", "mean")
    }
    assert "mae cannot read this" in details["phases.dev.sample_scores.mae"]
    assert "needs its input columns" in details["phases.dev.sample_scores.mean"]


def test_phases_starting_in_any_order_overlapping_or_open_ended_pass_the_dates(
    client, host, session_factory
):
    # The source platforms' rules: EvalAI runs a test phase that starts before its dev phase,
    # Codabench a last phase that never ends. Only a phase ending before it starts fails.
    from app.models import Phase

    _phased(client, host, team_merge_deadline="2030-02-10")
    checklist = client.get(f"{API}/competitions/two/checklist", headers=host.headers).json()
    assert _items(checklist)["dates"] is True
    assert "dev 2030-01-01T00:00:00+00:00 to" in _detail(checklist, "dates")
    with session_factory() as session:
        final = session.scalar(select(Phase).where(Phase.name == "final"))
        final.start = datetime(2029, 12, 1, tzinfo=UTC)  # stored directly: before dev's start
        final.end = None  # and open-ended
        session.commit()
    checklist = client.get(f"{API}/competitions/two/checklist", headers=host.headers).json()
    assert _items(checklist)["dates"] is True, _detail(checklist, "dates")
    assert "final 2029-12-01T00:00:00+00:00 to open-ended" in _detail(checklist, "dates")
    with session_factory() as session:
        final = session.scalar(select(Phase).where(Phase.name == "final"))
        final.end = datetime(2029, 11, 1, tzinfo=UTC)  # before its own start
        session.commit()
    detail = _detail(
        client.get(f"{API}/competitions/two/checklist", headers=host.headers).json(), "dates"
    )
    assert "phase 'final' must end after it starts" in detail


def test_a_final_selection_in_an_archived_competition_is_refused(client, host, alice):
    from tests.helpers import ready_competition

    ready_competition(client, host.headers, "arch")
    sub = submit(client, alice.headers, PERFECT, "arch")
    assert sub.status_code == 202, sub.text
    sub_id = sub.json()["id"]
    # Before archiving, the team may select it (so the refusal below is the archive's).
    chosen = client.post(f"{API}/submissions/{sub_id}/select", headers=alice.headers)
    assert chosen.status_code == 200, chosen.text
    assert client.post(f"{API}/competitions/arch/archive", headers=host.headers).status_code == 200
    for method in ("POST", "DELETE"):
        refused = client.request(
            method, f"{API}/submissions/{sub_id}/select", headers=alice.headers
        )
        assert refused.status_code == 409, refused.text
        assert refused.json()["code"] == "archived"


def test_the_host_guides_two_phase_three_column_example_is_a_valid_body(client, host):
    import json
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[2] / "docs" / "host-guide.md").read_text()
    blocks = [b for b in re.findall(r"```json\n(.*?)```", guide, re.S) if '"store-sales"' in b]
    assert len(blocks) == 1
    response = client.post(f"{API}/competitions", json=json.loads(blocks[0]), headers=host.headers)
    assert response.status_code == 201, response.text
    body = response.json()
    assert [c["key"] for c in body["leaderboard_columns"]] == ["rmse", "mae", "mean_error"]
    assert [(p["name"], p["board"]) for p in body["phases"]] == [
        ("development", "public"),
        ("final", "blind"),
    ]
