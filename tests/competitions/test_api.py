import csv
import io

from tests.helpers import API, KEY_ROWS, create_competition, csv_bytes, submit, upload_key


def test_organiser_creates_a_competition_with_defaults(client, host):
    body = create_competition(client, host.headers, "titanic", description="Who survives?")
    assert body["slug"] == "titanic"
    assert body["metric"] == {"name": "roc_auc", "params": {}}
    assert body["direction"] == "maximize"
    assert body["daily_submission_limit"] == 5
    assert body["final_selection_limit"] == 2
    assert body["has_answer_key"] is False


def test_competitions_are_listed_and_fetched_by_slug(client, host, alice):
    create_competition(client, host.headers, "one")
    create_competition(client, host.headers, "two")
    listed = client.get(f"{API}/competitions", headers=alice.headers).json()
    assert {c["slug"] for c in listed} == {"one", "two"}
    assert client.get(f"{API}/competitions/two", headers=alice.headers).json()["slug"] == "two"


def test_unknown_slug_is_404(client, alice):
    response = client.get(f"{API}/competitions/nope", headers=alice.headers)
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]


def test_participant_cannot_create_a_competition(client, alice):
    body = {"slug": "x1", "title": "X", "metric": {"name": "roc_auc"}}
    assert client.post(f"{API}/competitions", json=body, headers=alice.headers).status_code == 403


def test_missing_or_unknown_token_is_401(client):
    assert client.get(f"{API}/competitions").status_code == 401
    response = client.get(f"{API}/competitions", headers={"Authorization": "Bearer pdm_wrong"})
    assert response.status_code == 401


def test_unknown_metric_is_422_listing_the_metric_names(client, host):
    body = {"slug": "x1", "title": "X", "metric": {"name": "f2_score_typo"}}
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "f2_score_typo" in detail
    for name in ("accuracy", "roc_auc", "rmse"):
        assert name in detail


def test_bad_metric_params_are_422_naming_the_field(client, host):
    body = {"slug": "x1", "title": "X", "metric": {"name": "rmse", "params": {"squared": True}}}
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 422
    assert "squared" in response.json()["detail"]


def test_duplicate_slug_is_409(client, host):
    create_competition(client, host.headers, "dup")
    body = {"slug": "dup", "title": "Again", "metric": {"name": "rmse"}}
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 409


def test_answer_key_versions_are_kept_and_the_first_is_published(client, host):
    create_competition(client, host.headers)
    first = upload_key(client, host.headers)
    assert first.status_code == 201, first.text
    assert first.json()["version"] == 1
    assert first.json()["n_public"] == 3 and first.json()["n_private"] == 3
    assert first.json()["published_at"] is not None
    second = upload_key(
        client, host.headers, content=csv_bytes(["id", "target"], *[r[:2] for r in KEY_ROWS])
    )
    assert second.status_code == 201, second.text
    assert second.json()["version"] == 2
    assert second.json()["published_at"] is None
    versions = client.get(f"{API}/competitions/churn/answer-key/versions", headers=host.headers)
    assert [v["version"] for v in versions.json()] == [1, 2]


def test_participant_cannot_upload_or_list_answer_keys(client, host, alice):
    create_competition(client, host.headers)
    assert upload_key(client, alice.headers).status_code == 403
    response = client.get(f"{API}/competitions/churn/answer-key/versions", headers=alice.headers)
    assert response.status_code == 403


def test_answer_key_with_duplicate_ids_is_422_naming_them(client, host):
    create_competition(client, host.headers)
    content = csv_bytes(["id", "target"], ["a", 1], ["b", 0], ["a", 0], ["c", 1], ["c", 0])
    response = upload_key(client, host.headers, content=content)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "duplicate" in detail and "'a'" in detail and "'c'" in detail and "2" in detail


def test_empty_answer_key_is_422(client, host):
    create_competition(client, host.headers)
    response = upload_key(client, host.headers, content=b"")
    assert response.status_code == 422
    assert "empty" in response.json()["detail"]


def test_answer_key_with_bad_usage_values_is_422_naming_them(client, host):
    create_competition(client, host.headers)
    content = csv_bytes(
        ["id", "target", "Usage"], ["a", 1, "Public"], ["b", 0, "public"], ["c", 1, "Secret"]
    )
    response = upload_key(client, host.headers, content=content)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "'public'" in detail and "'Secret'" in detail and "2 row" in detail


def test_answer_key_the_metric_cannot_score_is_422(client, host):
    create_competition(client, host.headers)
    content = csv_bytes(["id", "target"], ["a", 1], ["b", 1])
    response = upload_key(client, host.headers, content=content)
    assert response.status_code == 422
    assert "one class" in response.json()["detail"]


def test_sample_submission_lists_every_id_and_scores_cleanly(client, host, alice):
    create_competition(client, host.headers)
    upload_key(client, host.headers)
    response = client.get(f"{API}/competitions/churn/sample-submission", headers=alice.headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == ["id", "target"]
    assert sorted(r[0] for r in rows[1:]) == [r[0] for r in KEY_ROWS]
    accepted = submit(client, alice.headers, response.content)
    assert accepted.status_code == 202
    view = client.get(f"{API}/submissions/{accepted.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["public_score"] == 0.5


def test_sample_submission_before_any_key_is_404(client, host, alice):
    create_competition(client, host.headers)
    response = client.get(f"{API}/competitions/churn/sample-submission", headers=alice.headers)
    assert response.status_code == 404


def test_competition_shows_its_columns_once_keyed(client, host, alice):
    create_competition(client, host.headers)
    upload_key(client, host.headers)
    body = client.get(f"{API}/competitions/churn", headers=alice.headers).json()
    assert body["columns"] == ["id", "target"] and body["has_answer_key"] is True
