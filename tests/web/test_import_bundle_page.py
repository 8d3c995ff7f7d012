"""The host page "Import a bundle": the same report as the API, through the CSRF-checked form,
without JavaScript; refused bundles name their file and field and create nothing."""

from tests.bundles.builders import EVALAI_CONFIG, codabench_files, evalai_files, make_zip
from tests.bundles.test_import_api import podium_bundle
from tests.helpers import API


def test_an_organiser_imports_a_bundle_and_reads_its_report(client, person, browser):  # type: ignore[no-untyped-def]
    ada = person("ada", organiser=True)
    web = browser("ada")
    assert "/host/import" in web.get("/").text
    page = web.get("/host/import")
    assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.text
    dry = web.post(
        "/host/import",
        page="/host/import",
        data={"slug": "iris", "dry_run": "1"},
        files={"file": ("iris.zip", make_zip(codabench_files()), "application/zip")},
    )
    assert dry.status_code == 201, dry.text
    assert "What would be created" in dry.text and "the scoring program" in dry.text
    assert client.get(f"{API}/competitions/iris", headers=ada.headers).status_code == 404
    data_dir = client.app.state.settings.data_dir
    assert not [p for p in data_dir.rglob("*") if p.is_file() and "key-cache" not in p.parts]
    made = web.post(
        "/host/import",
        page="/host/import",
        data={"slug": "prices"},
        files={"file": ("prices.zip", podium_bundle(), "application/zip")},
    )
    assert made.status_code == 201, made.text
    assert "/c/prices/host/launch" in made.text and "rmse" in made.text
    assert client.get(f"{API}/competitions/prices", headers=ada.headers).json()["status"] == "draft"


def test_a_refused_bundle_names_file_and_field_and_creates_nothing(client, person, browser):  # type: ignore[no-untyped-def]
    ada = person("ada", organiser=True)
    config = EVALAI_CONFIG.replace('"default_order_by": "Total"', '"default_order_by": "Score"')
    response = browser("ada").post(
        "/host/import",
        page="/host/import",
        data={"slug": "broken"},
        files={"file": ("b.zip", make_zip(evalai_files(config=config)), "application/zip")},
    )
    assert response.status_code == 422
    assert "leaderboard[0].schema.default_order_by" in response.text
    assert "challenge_config.yaml" in response.text and "Nothing was created" in response.text
    assert client.get(f"{API}/competitions/broken", headers=ada.headers).status_code == 404


def test_participants_and_visitors_cannot_import(person, browser):  # type: ignore[no-untyped-def]
    person("alice")
    assert browser("alice").get("/host/import").status_code == 403
    posted = browser("alice").post(
        "/host/import",
        page="/",
        files={"file": ("p.zip", podium_bundle(), "application/zip")},
    )
    assert posted.status_code == 403
    anonymous = browser().get("/host/import", follow_redirects=False)
    assert anonymous.status_code == 303
