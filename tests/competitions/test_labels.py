"""A single-label classification competition publishes its label set (the host's, or the key's)
and refuses at upload a prediction outside it, naming the values and how many rows hold them."""

from sqlalchemy import select

from app.models import Submission
from tests.helpers import API, create_competition, csv_bytes, submit, upload_key

PETS_KEY = csv_bytes(
    ["id", "pet", "Usage"],
    ["a", "cat", "Public"],
    ["b", "dog", "Public"],
    ["c", "fish", "Private"],
    ["d", "cat", "Private"],
)


def _pets(client, host, **fields):  # type: ignore[no-untyped-def]
    create_competition(client, host.headers, "pets", metric={"name": "macro_f1"}, **fields)
    response = upload_key(client, host.headers, "pets", PETS_KEY)
    assert response.status_code == 201, response.text


def _predict(client, caller, *labels: str):  # type: ignore[no-untyped-def]
    rows = [[i, label] for i, label in zip("abcd", labels, strict=True)]
    return submit(client, caller.headers, csv_bytes(["id", "pet"], *rows), slug="pets")


def _competition(client, caller, slug="pets"):  # type: ignore[no-untyped-def]
    return client.get(f"{API}/competitions/{slug}", headers=caller.headers).json()


def test_the_keys_labels_are_published_by_default(client, host, alice):
    _pets(client, host)
    assert _competition(client, alice)["labels"] == ["cat", "dog", "fish"]
    assert "cat, dog, fish" in client.get("/c/pets/evaluation").text


def test_the_hosts_labels_are_published_when_given(client, host, alice):
    _pets(client, host, labels=["cat", "dog", "fish", "bird"])
    assert _competition(client, alice)["labels"] == ["cat", "dog", "fish", "bird"]


def test_a_label_outside_the_set_is_refused_at_upload_naming_it_and_its_rows(
    client, host, alice, session_factory
):
    _pets(client, host)
    response = _predict(client, alice, "cat", "dog", "hamster", "cat")
    assert response.status_code == 422
    body = response.json()
    assert body["kind"] == "unknown_labels" and body["code"] == "unprocessable"
    assert "'hamster' in 1 row(s)" in body["detail"] and "'fish'" in body["detail"]
    # Issue 9: a refused file shows in the team's history with its reason and costs no quota.
    with session_factory() as session:
        (refused,) = session.scalars(select(Submission)).all()
        assert refused.id == body["submission_id"] and refused.status == "failed"
        assert "hamster" in (refused.error or "")
    quota = client.get(f"{API}/competitions/pets/quota", headers=alice.headers).json()
    assert quota["used_today"] == 0


def test_a_prediction_within_the_set_is_scored(client, host, alice):
    _pets(client, host)
    response = _predict(client, alice, "cat", "dog", "fish", "dog")
    assert response.status_code == 202
    view = client.get(f"{API}/submissions/{response.json()['id']}", headers=alice.headers)
    assert view.json()["status"] == "scored"


def test_a_host_label_no_one_holds_is_accepted_as_a_prediction(client, host, alice):
    _pets(client, host, labels=["cat", "dog", "fish", "bird"])
    assert _predict(client, alice, "cat", "dog", "bird", "cat").status_code == 202


def test_labels_for_a_numeric_metric_are_422(client, host):
    response = client.post(
        f"{API}/competitions",
        json={"slug": "churn", "title": "C", "metric": {"name": "roc_auc"}, "labels": ["0", "1"]},
        headers=host.headers,
    )
    assert response.status_code == 422 and "single-label" in response.json()["detail"]
    create_competition(client, host.headers, "plain")
    assert _competition(client, host, "plain")["labels"] is None


def test_a_key_with_a_label_outside_the_hosts_set_is_refused(client, host):
    create_competition(
        client, host.headers, "pets", metric={"name": "macro_f1"}, labels=["cat", "dog"]
    )
    response = upload_key(client, host.headers, "pets", PETS_KEY)
    assert response.status_code == 422 and "'fish'" in response.json()["detail"]


def test_patching_the_labels_is_checked_against_the_key_and_audited(client, host, alice):
    _pets(client, host)
    url = f"{API}/competitions/pets"
    refused = client.patch(url, json={"labels": ["cat", "dog"]}, headers=host.headers)
    assert refused.status_code == 422 and "'fish'" in refused.json()["detail"]
    widened = client.patch(
        url, json={"labels": ["cat", "dog", "fish", "hamster"]}, headers=host.headers
    )
    assert widened.status_code == 200 and "hamster" in widened.json()["labels"]
    assert _predict(client, alice, "cat", "dog", "hamster", "cat").status_code == 202
    log = client.get(f"{API}/competitions/pets/audit", headers=host.headers).json()
    assert log[-1]["after"] == {"labels": ["cat", "dog", "fish", "hamster"]}
