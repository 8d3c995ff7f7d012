"""A benchmark in bundles: Codabench's ``competition_type: benchmark`` is read as one when its
phases never end (a warning says why not otherwise), and an exported benchmark imports as one."""

from app.bundles import read_bundle
from tests.bundles.builders import CODABENCH_CONFIG, codabench_files, make_zip
from tests.bundles.test_import_api import import_bundle
from tests.helpers import API, ready_competition

TYPED = CODABENCH_CONFIG.replace("version: 2 ", "competition_type: benchmark\nversion: 2 ", 1)


def _read(config: str):  # type: ignore[no-untyped-def]
    return read_bundle(make_zip(codabench_files(config)))


def test_a_codabench_benchmark_whose_phases_never_end_is_a_benchmark() -> None:
    assert "end: 8-7-2026\n" in TYPED
    competition = _read(TYPED.replace("  end: 8-7-2026\n", "", 1))
    assert [p.end for p in competition.phases] == [None, None]
    assert competition.benchmark is True
    assert _read(CODABENCH_CONFIG).benchmark is False


def test_a_codabench_benchmark_whose_phase_ends_is_a_competition_and_says_why() -> None:
    competition = _read(TYPED)
    assert competition.benchmark is False
    (warning,) = [w for w in competition.warnings if "competition_type" in w]
    assert "'development'" in warning and "never ends" in warning and "--benchmark" in warning


def test_an_exported_benchmark_imports_as_a_benchmark(client, host) -> None:  # type: ignore[no-untyped-def]
    ready_competition(client, host.headers, "forever", benchmark=True, board_every_submission=True)
    exported = client.get(f"{API}/competitions/forever/export", headers=host.headers)
    assert exported.status_code == 200, exported.text
    again = import_bundle(client, host, exported.content, slug="again")
    assert again.status_code == 201, again.text
    assert again.json()["benchmark"] is True
    # Its board of every submission comes back too (the bundle's podium: mapping).
    assert again.json()["board_every_submission"] is True
    ready_competition(client, host.headers, "plain")
    exported = client.get(f"{API}/competitions/plain/export", headers=host.headers)
    assert import_bundle(client, host, exported.content, slug="plain2").json()["benchmark"] is False
