"""Validation messages are sentences a host understands (issue 42): what is allowed, with an
example, from the API's 422 (and so the YAML file's lines and the pages, which share them)."""

from tests.helpers import API


def _refusal(client, host, **body):  # type: ignore[no-untyped-def]
    full = {"slug": "words", "title": "Words", "metric": {"name": "rmse"}, **body}
    response = client.post(f"{API}/competitions", json=full, headers=host.headers)
    assert response.status_code == 422, response.text
    return {".".join(map(str, e["loc"][1:])): e["msg"] for e in response.json()["errors"]}


def test_names_say_what_is_allowed_with_an_example(client, host):
    found = _refusal(
        client,
        host,
        slug="My Comp",
        metric=None,
        columns=[{"key": "a b", "metric": {"name": "rmse"}}],
        phases=[{"name": "Final"}],
    )
    assert found["slug"].startswith("'My Comp' is not allowed: a slug is 2 to 63 lowercase")
    assert "e.g. 'titanic-2026'" in found["slug"]
    assert "(no spaces)" in found["columns.0.key"] and "e.g. 'rmse'" in found["columns.0.key"]
    assert "e.g. 'dev' or 'final'" in found["phases.0.name"]
    assert not any("should match pattern" in m for m in found.values())


def test_dates_numbers_choices_and_unknown_fields_are_sentences(client, host):
    found = _refusal(
        client,
        host,
        start="31/12/2026",
        daily_submission_limit="five",
        public_board_mode="fancy",
        colour="red",
    )
    assert found["start"] == (
        "'31/12/2026' is not a date: write a date as 2026-12-31, or a date and time as "
        "2026-12-31T18:00:00 (UTC) or 2026-12-31T18:00:00+01:00"
    )
    assert found["daily_submission_limit"] == "'five' is not a whole number: give one such as 5"
    assert found["public_board_mode"].startswith("'fancy' is not one of the choices: it must be")
    assert found["colour"].startswith("is not a setting here")
    assert not any("invalid character" in m or "Input should" in m for m in found.values())


def test_an_out_of_range_date_with_an_offset_is_a_422_naming_the_field_everywhere(client, host):
    bad = "9999-12-31T23:59:59-12:00"
    assert "deadline" in _refusal(client, host, deadline=bad)
    ok = client.post(
        f"{API}/competitions",
        json={"slug": "ranged", "title": "R", "metric": {"name": "rmse"}},
        headers=host.headers,
    )
    assert ok.status_code == 201
    for path, body in (
        ("/competitions/ranged", {"deadline": bad}),
        ("/competitions/ranged", {"team_merge_deadline": bad}),
        ("/competitions/ranged/phases/main", {"end": bad}),
        ("/competitions/ranged/phases/main", {"start": "0001-01-01T00:00:00+14:00"}),
    ):
        response = client.patch(f"{API}{path}", json=body, headers=host.headers)
        assert response.status_code == 422, response.text
        (field,) = body
        assert response.json()["errors"][0]["loc"][-1] == field
        assert "between 1970-01-01 and 2999-12-31" in response.json()["detail"]


def test_create_dry_run_checks_everything_and_keeps_nothing(client, host, alice):
    body = {"slug": "dry", "title": "Dry", "metric": {"name": "rmse"}}
    dry = client.post(f"{API}/competitions?dry_run=true", json=body, headers=host.headers)
    assert dry.status_code == 200 and dry.json()["slug"] == "dry"
    assert client.get(f"{API}/competitions/dry", headers=host.headers).status_code == 404
    # The service's own checks run too: an unknown metric.
    wrong = client.post(
        f"{API}/competitions?dry_run=true",
        json={**body, "metric": {"name": "nope"}},
        headers=host.headers,
    )
    assert wrong.status_code == 422 and "nope" in wrong.json()["detail"]
    # A participant may not, even to try; nor may nobody.
    assert (
        client.post(
            f"{API}/competitions?dry_run=true", json=body, headers=alice.headers
        ).status_code
        == 403
    )
    assert client.post(f"{API}/competitions?dry_run=true", json=body).status_code == 401
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 201
