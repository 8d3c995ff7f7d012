"""``podium backup`` / ``podium restore`` (issue 43): a backup taken while 200 uploads arrive
restores into an empty install with the same users, files, chain and boards, checked with the
verifier; on SQLite with local files, and on PostgreSQL with moto's S3 (files and backups in
buckets); a restore into an install that holds anything is refused."""

import os
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url

from app.auth.service import create_user
from app.config import Settings
from app.db import make_engine, make_session_factory, unit_of_work
from app.ledger.boards import expected_board, replay
from app.ledger.verify import check, from_url, parse_board
from app.main import create_app
from app.models import LedgerEntry, Role, Submission, User
from app.storage import open_stored
from tests.asgi_client import TestClient
from tests.cli.inprocess import run_main
from tests.databases import migrated, server_sql
from tests.helpers import API, PERFECT, ParkedQueue, predictions, ready_competition, submit
from tests.storage.moto_store import MotoS3

pytestmark = pytest.mark.slow

SECRET = "s" * 40
USERS = 20
UPLOADS = 200


@pytest.fixture
def moto() -> Iterator[MotoS3]:
    server = MotoS3()
    server.start()
    try:
        yield server
    finally:
        httpx.post(f"{server.url}/moto-api/reset", timeout=10)
        server.stop()


@pytest.fixture
def target_url(fresh_database_url: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of the same kind to restore into (PostgreSQL: migrated, as `podium
    migrate` leaves a new install)."""
    parsed = make_url(fresh_database_url)
    if parsed.get_backend_name() == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored' / 'podium.db'}"
        return
    server = parsed.set(database="postgres").render_as_string(hide_password=False)
    name = f"podium_restore_{uuid.uuid4().hex[:10]}"
    server_sql(server, f'CREATE DATABASE "{name}"')
    url = parsed.set(database=name).render_as_string(hide_password=False)
    migrated(url)
    try:
        yield url
    finally:
        server_sql(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _settings(url: str, data: Path, moto: MotoS3 | None, bucket: str) -> Settings:
    s3: dict[str, Any] = {}
    if moto is not None:
        s3 = {
            "storage": "s3",
            "s3_endpoint_url": moto.url,
            "s3_bucket": bucket,
            "s3_access_key_id": "testing",
            "s3_secret_access_key": "testing",
        }
    return Settings(
        env="test",
        database_url=url,
        data_dir=data,
        secret_key=SECRET,
        scoring_backend="eager",
        uploads_per_minute=10_000,
        **s3,
    )


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    env.update(
        PODIUM_DATABASE_URL=settings.database_url,
        PODIUM_DATA_DIR=str(settings.data_dir),
        PODIUM_SECRET_KEY=SECRET,
        PODIUM_STORAGE=settings.storage,
        PODIUM_S3_BUCKET=settings.s3_bucket,
    )
    if settings.storage == "s3":
        env.update(
            PODIUM_S3_ENDPOINT_URL=str(settings.s3_endpoint_url),
            PODIUM_S3_ACCESS_KEY_ID="testing",
            PODIUM_S3_SECRET_ACCESS_KEY="testing",
        )
    return env


def _verified(client: TestClient) -> Any:
    def get(url: str) -> tuple[int, str]:
        parts = urlsplit(url)
        response = client.get(parts.path + (f"?{parts.query}" if parts.query else ""))
        return response.status_code, response.text

    material = from_url("http://testserver/c/churn", get=get)
    report = check(material)
    assert report.ok, report.problems
    return material


def test_a_backup_taken_while_uploads_arrive_restores_the_same_install(
    fresh_database_url, target_url, tmp_path, request
):
    postgres = make_url(fresh_database_url).get_backend_name() == "postgresql"
    moto = request.getfixturevalue("moto") if postgres else None
    source = _settings(fresh_database_url, tmp_path / "source", moto, "podium-source")
    target = _settings(target_url, tmp_path / "target", moto, "podium-target")
    backups = "s3://podium-backups/nightly" if postgres else str(tmp_path / "backups")
    if moto is not None:
        from app.storage.s3 import client_for

        for bucket in ("podium-source", "podium-target", "podium-backups"):
            client_for(source).create_bucket(Bucket=bucket)

    engine = make_engine(source.database_url)
    factory = make_session_factory(engine)
    headers = {}
    with unit_of_work(factory) as session:
        for i, role in [(0, Role.organiser)] + [(i, Role.participant) for i in range(1, USERS + 1)]:
            name = "host" if i == 0 else f"user{i}"
            headers[name] = {
                "Authorization": f"Bearer {create_user(session, name=name, role=role, secret_key=SECRET)[1]}"
            }
    with TestClient(create_app(source, session_factory=factory)) as client:
        # No score intervals: the bootstraps would be most of the test's time, and nothing here.
        ready_competition(
            client, headers["host"], daily_submission_limit=UPLOADS, score_intervals=False
        )
        done = threading.Semaphore(0)
        backed_up = threading.Event()

        def upload(n: int) -> int:
            if n >= UPLOADS * 3 // 4:
                backed_up.wait(timeout=300)  # the last quarter after the backup, whatever its pace
            user = f"user{n % USERS + 1}"
            body = predictions(a=0.9, b=0.1, c=n % 7 / 10, d=0.2, e=0.7, f=0.3)
            status = submit(client, headers[user], body).status_code
            done.release()
            return status

        with ThreadPoolExecutor(max_workers=6) as pool:
            futures = [pool.submit(upload, n) for n in range(UPLOADS)]
            for _ in range(UPLOADS // 4):
                done.acquire()  # a quarter in: the backup starts while the rest arrive
            taken = run_main("backup", "--to", backups, "--keep", "2", env=_env(source))
            backed_up.set()
            codes = [f.result() for f in futures]
        assert taken.returncode == 0, taken.stdout + taken.stderr
        assert codes == [202] * UPLOADS
        source_record = _verified(client)
        source_board = client.get(f"{API}/competitions/churn/leaderboard.csv").text
    with factory() as session:
        source_users = set(session.scalars(select(User.name)))
    engine.dispose()

    restored = run_main("restore", backups, env=_env(target))
    assert restored.returncode == 0, restored.stdout + restored.stderr
    engine = make_engine(target.database_url)
    factory = make_session_factory(engine)
    with factory() as session:
        # The snapshot's head, before the restored server scores what was queued in it.
        head = session.scalar(select(LedgerEntry.seq).order_by(LedgerEntry.seq.desc()))
        assert set(session.scalars(select(User.name))) == source_users
        submissions = session.scalars(select(Submission)).all()
        assert submissions and len(submissions) <= UPLOADS
        for submission in submissions:  # every file there, at the references rewritten
            with open_stored(submission.path, settings=target) as stored:
                assert stored.read() is not None
    assert head is not None and 0 < head <= len(source_record.entries)
    # Nothing scored yet on the restored install: its board is the source's board as of the
    # snapshot, which the source's own chain, cut at the snapshot's head, says team by team.
    with TestClient(
        create_app(target, session_factory=factory, scoring_queue=ParkedQueue())
    ) as client:
        restored_board = client.get(f"{API}/competitions/churn/leaderboard.csv").text
    at_snapshot = replay({e["seq"]: e for e in source_record.entries[:head]})
    expected = expected_board(at_snapshot, "main", "public", "roc_auc", maximize=True)
    shown = {row["team"]: float(row["score"]) for row in parse_board(restored_board)}
    assert shown == {at_snapshot.team_name[team]: score for team, score in expected.items()}
    assert shown  # the snapshot held scored uploads
    with TestClient(create_app(target, session_factory=factory)) as client:
        record = _verified(client)  # the chain, its signatures, the boards from its scores
        # The same server key, and the source's chain up to the snapshot, unchanged.
        assert record.header["public_key"] == source_record.header["public_key"]
        assert record.entries[:head] == source_record.entries[:head]
        # The restored install serves and records on: a new upload joins its chain.
        assert submit(client, headers["user1"], PERFECT).status_code == 202
        _verified(client)
        if head == len(source_record.entries):
            assert client.get(f"{API}/competitions/churn/leaderboard.csv").text == source_board
    engine.dispose()

    # Into an install that now holds a competition: refused, nothing touched.
    again = run_main("restore", backups, env=_env(target))
    assert again.returncode == 2
    assert "this install is not empty" in again.stderr


def test_a_quiet_backup_restores_an_identical_board(tmp_path):
    source = _settings(
        f"sqlite:///{tmp_path / 'a' / 'podium.db'}", tmp_path / "a" / "data", None, ""
    )
    target = _settings(
        f"sqlite:///{tmp_path / 'b' / 'podium.db'}", tmp_path / "b" / "data", None, ""
    )
    migrated(source.database_url)
    engine = make_engine(source.database_url)
    factory = make_session_factory(engine)
    with unit_of_work(factory) as session:
        host = create_user(session, name="host", role=Role.organiser, secret_key=SECRET)[1]
        alice = create_user(session, name="alice", role=Role.participant, secret_key=SECRET)[1]
    with TestClient(create_app(source, session_factory=factory)) as client:
        ready_competition(client, {"Authorization": f"Bearer {host}"})
        submit(client, {"Authorization": f"Bearer {alice}"}, PERFECT)
        boards = [
            client.get(f"{API}/competitions/churn/leaderboard.csv", headers=h).text
            for h in ({}, {"Authorization": f"Bearer {host}"})
        ]
    engine.dispose()
    taken = run_main("backup", "--to", str(tmp_path / "backups"), env=_env(source))
    assert taken.returncode == 0, taken.stderr
    (folder,) = (tmp_path / "backups").iterdir()
    assert {p.name for p in folder.iterdir()} == {
        "database.sqlite3",
        "files",
        "manifest.json",
        "settings.json",
    }
    assert SECRET not in (folder / "settings.json").read_text()
    assert (folder / "files" / "ledger" / "ed25519.key").is_file()
    # A damaged backup is refused before anything is written.
    stored = next(p for p in (folder / "files" / "submissions").rglob("*") if p.is_file())
    good = stored.read_bytes()
    stored.write_bytes(b"x" + good)
    damaged = run_main("restore", str(folder), env=_env(target))
    assert damaged.returncode == 2 and "does not match its checksum" in damaged.stderr
    assert not Path(tmp_path / "b" / "podium.db").exists()
    stored.write_bytes(good)
    restored = run_main("restore", str(folder), env=_env(target))
    assert restored.returncode == 0, restored.stderr
    engine = make_engine(target.database_url)
    with TestClient(create_app(target, session_factory=make_session_factory(engine))) as client:
        assert [
            client.get(f"{API}/competitions/churn/leaderboard.csv", headers=h).text
            for h in ({}, {"Authorization": f"Bearer {host}"})
        ] == boards
        _verified(client)
    engine.dispose()
