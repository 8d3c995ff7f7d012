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
        "dates": False,
        "description": False,
    }
    assert all(i["detail"] for i in body["items"])


def test_publish_answers_not_ready_naming_every_failing_item(client, host):
    create_competition(client, host.headers, "new", status="draft", description="A task")
    response = client.post(f"{API}/competitions/new/publish", headers=host.headers)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "not_ready"
    assert {i["key"] for i in body["items"]} == {"answer_key", "sample_scores", "dates"}
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
        lifecycle, "sample_submission_csv", lambda *_a: csv_bytes(["id", "target"], ["a", 0.5])
    )
    checklist = client.get(f"{API}/competitions/one/checklist", headers=host.headers).json()
    assert _items(checklist)["sample_scores"] is False
    assert "the sample submission fails" in _detail(checklist, "sample_scores")
    refused = client.post(f"{API}/competitions/one/publish", headers=host.headers)
    assert refused.status_code == 409
    assert [i["key"] for i in refused.json()["items"]] == ["sample_scores"]


def test_incoherent_or_past_dates_fail_the_dates_item(client, host, session_factory):
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
    assert "has passed" in _detail(checklist, "dates")
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
    baseline = client.post(
        f"{API}/competitions/oops/submissions",
        files={"file": ("b.csv", PERFECT, "text/csv")},
        data={"baseline": "true"},
        headers=host.headers,
    )
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
