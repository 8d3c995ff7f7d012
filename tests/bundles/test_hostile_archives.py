"""Archives an attacker builds (found by one, on landed main): a zip holding a file ``a`` and an
entry ``a/b``, a YAML file with a control character. Each is the sender's own error, named: a
422 at a bundle's import, the participant's failure for a submission, never "a problem on our
side" or a 500."""

import pytest

from app.bundles import Limits, read_bundle
from app.bundles.archive import unzip_submission
from app.bundles.errors import BundleError
from app.coderun.code import InvalidCode, check_code
from app.jobs.program import PLATFORM_FAILURE
from tests.asgi_client import TestClient
from tests.bundles.builders import codabench_files, codalab_files, evalai_files, make_zip
from tests.bundles.test_import_api import import_bundle, slugs
from tests.bundles.test_program_scoring import jail, opened, submitted  # noqa: F401
from tests.conftest import Caller

LIMITS = Limits(max_total_bytes=10**8)


def _with_program_entry(files: dict[str, bytes | str]) -> dict[str, bytes | str]:
    program = {
        "metadata": "command: python $program/evaluate.py $input $output\n",
        "evaluate.py": "print(1)\n",
        "evaluate.py/inner": "x",
    }
    return {**files, "program.zip": make_zip(program)}


@pytest.mark.parametrize(
    ("bundle", "named"),
    [
        (make_zip({**codalab_files(), "a": "1", "a/b": "2"}), "'a/b' is inside 'a'"),
        (make_zip(_with_program_entry(codalab_files())), "'evaluate.py/inner' is inside"),
    ],
    ids=["at-the-root", "in-a-nested-zip"],
)
def test_a_file_and_an_entry_inside_it_are_a_422_naming_both(
    client: TestClient, host: Caller, bundle: bytes, named: str
) -> None:
    with pytest.raises(BundleError, match=named):
        read_bundle(bundle, limits=LIMITS, name="b.zip")
    response = import_bundle(client, host, bundle, slug="both")
    assert response.status_code == 422, response.text
    assert named in response.json()["detail"]
    assert "both" not in slugs(client, host)


def test_a_folder_entry_with_a_file_of_the_same_name_is_refused() -> None:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("a", b"file")
        archive.writestr(zipfile.ZipInfo("a/"), b"")
    with pytest.raises(BundleError, match="both a file and a folder"):
        unzip_submission(out.getvalue(), name="r.zip")


@pytest.mark.parametrize(
    ("files", "config"),
    [
        (codabench_files(), "competition.yaml"),
        (codalab_files(), "competition.yaml"),
        (evalai_files(), "challenge_config.yaml"),
    ],
    ids=["codabench", "codalab", "evalai"],
)
def test_a_config_with_a_control_character_is_a_422(
    client: TestClient, host: Caller, files: dict[str, bytes | str], config: str
) -> None:
    text = files[config]
    assert isinstance(text, str)
    files = {**files, config: text.replace("title: ", "title: \x07", 1)}
    response = import_bundle(client, host, make_zip(files), slug="bell")
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "invalid_bundle"
    assert "character #x0007 is not allowed" in body["detail"]
    assert body["file"].endswith(config)


def test_a_code_zip_with_a_file_and_an_entry_inside_it_is_refused_at_upload() -> None:
    bad = make_zip({"main.py": "print(1)", "data": "x", "data/more.csv": "y"})
    with pytest.raises(InvalidCode, match="'data' as a file and 'data/more.csv' inside it"):
        check_code("code.zip", bad, max_bytes=1 << 20)


def test_a_results_zip_with_a_file_and_an_entry_inside_it_is_the_participants_failure(
    jail: None,  # noqa: F811
    client: TestClient,
    host: Caller,
    alice: Caller,
) -> None:
    assert import_bundle(client, host, make_zip(codalab_files()), slug="pi").status_code == 201
    development = opened(client, host, "pi")[0]
    results = make_zip({"answer.txt": "3.14", "answer.txt/x": "3"})
    got, own = submitted(client, alice, host, "pi", development, "r.zip", results)
    assert got["status"] == own["status"] == "failed"
    assert "cannot be unpacked" in own["error"] and "'answer.txt/x'" in own["error"]
    assert own["error"] != PLATFORM_FAILURE and "our side" not in own["error"]


def test_a_host_cli_file_with_a_control_character_is_one_error_line() -> None:
    from app.client.bodyfile import BodyFileError, parse

    with pytest.raises(BodyFileError, match="#x0007"):
        parse("slug: x\ntitle: \x07bell\n", is_json=False)
