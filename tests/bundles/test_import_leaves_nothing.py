"""An import that does not end in a competition leaves no file in storage, whatever the bundle's
kind: a dry run, a store that refuses a file half-way, and the request's commit failing after
the import itself went through (the files were stored before the rows that name them)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from app.errors import StorageUnavailable
from tests.asgi_client import TestClient
from tests.bundles.builders import codabench_files, codalab_files, evalai_files, make_zip
from tests.bundles.test_import_api import import_bundle, podium_bundle, slugs
from tests.conftest import Caller

KINDS: dict[str, Callable[[], bytes]] = {
    "evalai": lambda: make_zip(evalai_files()),
    "codabench": lambda: make_zip(codabench_files()),
    "codalab": lambda: make_zip(codalab_files()),
    "catalogue": podium_bundle,
}


def _files(settings: Any) -> set[Path]:
    """The stored files. Not ``key-cache/``: a parsed key kept by its content's hash for the
    scorer, made by every key check (a refused key upload's too), never referred to by a row."""
    root = Path(settings.data_dir)
    return {p for p in root.rglob("*") if p.is_file() and p.parts[len(root.parts)] != "key-cache"}


@pytest.fixture(params=sorted(KINDS))
def bundle(request: pytest.FixtureRequest) -> bytes:
    return KINDS[request.param]()


def test_a_dry_run_stores_nothing(
    client: TestClient, host: Caller, settings: Any, bundle: bytes
) -> None:
    before = _files(settings)
    response = import_bundle(client, host, bundle, slug="dry", dry_run=True)
    assert response.status_code == 201, response.text
    assert response.json()["dry_run"] is True
    assert _files(settings) == before and "dry" not in slugs(client, host)
    # The control: the same bundle imported for real stores its files.
    assert import_bundle(client, host, bundle, slug="kept").status_code == 201
    assert _files(settings) > before


def test_a_store_failing_half_way_leaves_nothing(
    client: TestClient,
    host: Caller,
    settings: Any,
    bundle: bytes,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every kind stores at least two files; the second is refused, after the first was kept."""
    import app.competitions.bundles as bundles
    import app.competitions.service as service

    calls: list[str] = []

    def refusing(real):  # type: ignore[no-untyped-def]
        def store(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(kwargs["prefix"])
            if len(calls) == 2:
                raise StorageUnavailable()
            return real(*args, **kwargs)

        return store

    monkeypatch.setattr(bundles, "store_stream", refusing(bundles.store_stream))
    monkeypatch.setattr(service, "store_stream", refusing(service.store_stream))
    before = _files(settings)
    response = import_bundle(client, host, bundle, slug="half")
    assert response.status_code == 503, response.text
    assert len(calls) == 2  # one file was stored before the refusal
    assert _files(settings) == before and "half" not in slugs(client, host)


def test_a_failed_commit_after_the_import_leaves_nothing(
    client: TestClient, host: Caller, settings: Any, bundle: bytes, session_factory: Any
) -> None:
    before = _files(settings)
    stored_at_commit: list[set[Path]] = []

    def fail(session: Any) -> None:
        if session.in_nested_transaction():
            return  # the import's own savepoint: the request's commit is the one that fails
        stored_at_commit.append(_files(settings) - before)
        raise OperationalError("COMMIT", {}, Exception("the server closed the connection"))

    event.listen(session_factory, "before_commit", fail)
    try:
        response = import_bundle(client, host, bundle, slug="lost")
    finally:
        event.remove(session_factory, "before_commit", fail)
    assert response.status_code == 503, response.text
    assert stored_at_commit and stored_at_commit[-1], "the import stored nothing to undo"
    assert _files(settings) == before and "lost" not in slugs(client, host)
