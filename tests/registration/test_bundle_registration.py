"""An imported Codabench bundle's registration: ``registration_auto_approve: false`` asks the
hosts to approve each entrant, and its terms page is the competition's rules."""

from tests.bundles.builders import CODABENCH_CONFIG, codabench_files, make_zip
from tests.bundles.test_import_api import import_bundle
from tests.helpers import API


def test_codabench_approval_and_terms_become_registration_and_rules(client, host):
    config = CODABENCH_CONFIG.replace(
        "registration_auto_approve: True", "registration_auto_approve: false"
    )
    made = import_bundle(client, host, make_zip(codabench_files(config)), slug="iris")
    assert made.status_code == 201, made.text
    competition = client.get(f"{API}/competitions/iris", headers=host.headers).json()
    assert competition["registration"] == "approval"
    assert competition["rules"].strip() == "Be fair." and competition["rules_version"] == 1


def test_codabench_auto_approval_is_open(client, host):
    made = import_bundle(client, host, make_zip(codabench_files()), slug="iris")
    assert made.status_code == 201, made.text
    assert (
        client.get(f"{API}/competitions/iris", headers=host.headers).json()["registration"]
        == "open"
    )


def test_a_wrong_auto_approve_names_the_field(client, host):
    config = CODABENCH_CONFIG.replace(
        "registration_auto_approve: True", "registration_auto_approve: maybe"
    )
    refused = import_bundle(client, host, make_zip(codabench_files(config)), slug="iris")
    assert refused.status_code == 422 and "registration_auto_approve" in refused.text
