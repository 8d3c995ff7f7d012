"""`podium bundle import` and `podium bundle export`, run in-process: the client's HTTP calls go
to the test application (no server process), with the caller's token."""

import io
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli.commands import app
from app.client.http import ClientError, PodiumClient
from tests.asgi_client import TestClient
from tests.bundles.builders import codalab_files, make_zip
from tests.bundles.test_import_api import podium_bundle
from tests.conftest import Caller
from tests.helpers import API

Run = Callable[..., "object"]


@pytest.fixture
def podium(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> Callable[..., object]:
    def run(caller: Caller, *args: str) -> object:
        @contextmanager
        def as_caller() -> Iterator[PodiumClient]:
            from app.client.commands import _fail

            podium_client = PodiumClient("http://testserver", caller.token)
            podium_client._http = client  # an httpx.Client too
            client.base_url = "http://testserver" + API  # type: ignore[assignment]
            client.headers["Authorization"] = f"Bearer {caller.token}"
            try:
                yield podium_client
            except ClientError as exc:
                _fail(str(exc))

        monkeypatch.setattr("app.client.bundle._client", as_caller)
        monkeypatch.setattr("app.client.host._client", as_caller)
        return CliRunner().invoke(app, list(args))

    return run


def test_import_a_directory_then_export_it(
    podium: Callable[..., object], host: Caller, tmp_path: Path, settings: Any
) -> None:
    bundle = tmp_path / "hello"
    for name, data in codalab_files().items():
        path = bundle / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    dry = podium(host, "bundle", "import", str(bundle), "--slug", "hello", "--dry-run")
    assert dry.exit_code == 0, dry.output  # type: ignore[attr-defined]
    assert "would create hello" in dry.output  # type: ignore[attr-defined]
    assert not list(settings.data_dir.rglob("programs/*/*"))  # the dry run kept no program
    made = podium(host, "bundle", "import", str(bundle), "--slug", "hello")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    assert "created hello" in made.output and "program" in made.output  # type: ignore[attr-defined]
    assert "warning:" in made.output  # type: ignore[attr-defined]

    out = tmp_path / "hello.zip"
    exported = podium(host, "bundle", "export", "hello", "-o", str(out))
    assert exported.exit_code == 0, exported.output  # type: ignore[attr-defined]
    assert "competition.yaml" in zipfile.ZipFile(io.BytesIO(out.read_bytes())).namelist()


def test_import_a_zip_and_a_refusal_is_one_error_line(
    podium: Callable[..., object], host: Caller, alice: Caller, tmp_path: Path
) -> None:
    good = tmp_path / "prices.zip"
    good.write_bytes(podium_bundle())
    made = podium(host, "bundle", "import", str(good), "--slug", "prices")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    bad = tmp_path / "bad.zip"
    bad.write_bytes(make_zip({"readme.txt": "nothing"}))
    refused = podium(host, "bundle", "import", str(bad))
    assert refused.exit_code == 2
    assert "competition.yaml" in refused.output  # type: ignore[attr-defined]
    # Not a host of it: the export is refused, no file is left.
    out = tmp_path / "stolen.zip"
    stolen = podium(alice, "bundle", "export", "prices", "-o", str(out))
    assert stolen.exit_code == 2 and not out.exists()


def test_import_start_now_then_end_a_phase_from_the_host_cli(
    podium: Callable[..., object], host: Caller, tmp_path: Path
) -> None:
    # CodaLab's compute-pi runs in 2013: --start-now opens its first phase now.
    bundle = tmp_path / "pi.zip"
    bundle.write_bytes(make_zip(codalab_files()))
    made = podium(host, "bundle", "import", str(bundle), "--slug", "pi", "--start-now")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    assert "--start-now: every date moved by" in made.output  # type: ignore[attr-defined]
    assert "2013-" not in made.output.split("warning:")[0]  # type: ignore[attr-defined]
    opened = podium(host, "competitions", "phase", "pi", "final", "--open-ended")
    assert opened.exit_code == 0, opened.output  # type: ignore[attr-defined]
    assert "to open-ended (upcoming)" in opened.output  # type: ignore[attr-defined]
    ended = podium(host, "competitions", "phase", "pi", "final", "--end", "2099-01-01")
    assert "to 2099-01-01T23:59:59Z" in ended.output  # type: ignore[attr-defined]
    zero = podium(host, "competitions", "phase", "pi", "development", "--daily-limit", "0")
    assert "0 a day" in zero.output  # type: ignore[attr-defined]
    wrong = podium(host, "competitions", "phase", "pi", "final", "--end", "2000-01-01")
    assert wrong.exit_code == 2  # type: ignore[attr-defined]
    assert "end must come after start" in wrong.output  # type: ignore[attr-defined]
