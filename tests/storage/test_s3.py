"""PODIUM_STORAGE=s3 against moto's S3 server: the whole flow, outages answered 503, uploads
streamed in parts, and scorers that fetch what they parse from the store."""

import hashlib
import io
import shutil
import time

import pytest
from celery.contrib.testing.worker import start_worker
from sqlalchemy import func, select

from app.errors import NotFound, PayloadTooLarge
from app.jobs.celery_app import make_celery
from app.jobs.score import score_submission
from app.main import create_app
from app.models import AnswerKey, Competition, Submission
from app.storage import delete_blob, list_blobs, local_file, open_blob, save_blob
from tests.asgi_client import TestClient
from tests.databases import migrated
from tests.helpers import (
    API,
    KEY,
    PERFECT,
    ParkedQueue,
    create_competition,
    csv_bytes,
    ready_competition,
    submit,
    upload_key,
)
from tests.jobs.test_jobs import _headers
from tests.storage.moto_store import BUCKET, PART, keys, store

TRAIN = b"id,feature\n" + b"".join(f"r{i},{i * 0.25}\n".encode() for i in range(2000))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_whole_flow_keeps_its_files_in_the_bucket(
    client, host, alice, settings, session_factory
):
    create_competition(client, host.headers)
    assert upload_key(client, host.headers).status_code == 201
    accepted = submit(client, alice.headers, PERFECT)
    assert accepted.status_code == 202, accepted.text
    submission_id = accepted.json()["id"]

    view = client.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["public_score"] == 1.0
    board = client.get(f"{API}/competitions/churn/leaderboard", headers=alice.headers).json()
    assert [(row["team"], row["score"]) for row in board["rows"]] == [("alice", 1.0)]

    download = client.get(f"{API}/submissions/{submission_id}/file", headers=alice.headers)
    assert download.status_code == 200 and download.content == PERFECT
    assert download.headers["content-length"] == str(len(PERFECT))

    put = client.put(
        f"{API}/competitions/churn/files/train.csv", content=TRAIN, headers=host.headers
    )
    assert put.status_code == 201, put.text
    fetched = client.get(f"{API}/competitions/churn/files/train.csv", headers=alice.headers)
    assert fetched.status_code == 200 and fetched.content == TRAIN

    # The bucket mirrors the data directory's layout; the database names the objects.
    with session_factory() as session:
        cid = session.scalar(select(Competition.id))
    stored = keys(settings)
    assert f"answer-keys/{cid}/{_sha(KEY)}.upload" in stored
    assert any(k.endswith(f"/{_sha(PERFECT)}.upload") for k in keys(settings, "submissions/"))
    assert len(keys(settings, f"blobs/datafiles/{cid}/")) == 1
    with session_factory() as session:
        key_ref = session.scalar(select(AnswerKey.path))
        submission_ref = session.scalar(select(Submission.path))
    assert key_ref == f"s3://{BUCKET}/answer-keys/{cid}/{_sha(KEY)}.upload"
    assert submission_ref.startswith(f"s3://{BUCKET}/submissions/{cid}/")
    # Nothing is kept in the data directory but the scorer's cache.
    assert not (settings.data_dir / "submissions").exists()
    assert not (settings.data_dir / "answer-keys").exists()
    assert not (settings.data_dir / "blobs").exists()


def test_a_store_outage_answers_503_accepts_nothing_and_recovers(
    client, host, alice, settings, session_factory, moto_s3
):
    ready_competition(client, host.headers)
    client.put(f"{API}/competitions/churn/files/train.csv", content=TRAIN, headers=host.headers)
    moto_s3.stop()

    refused = submit(client, alice.headers, PERFECT)
    assert refused.status_code == 503, refused.text
    assert refused.headers["retry-after"].isdigit()
    assert refused.json()["code"] == "unavailable"
    assert refused.json()["reason"] == "storage_unreachable"
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 0
    for response in (
        client.get(f"{API}/competitions/churn/files/train.csv", headers=alice.headers),
        client.put(f"{API}/competitions/churn/files/b.csv", content=TRAIN, headers=host.headers),
        upload_key(client, host.headers, content=KEY + b"g,1,Public\n"),
    ):
        assert response.status_code == 503, response.text
        assert "retry-after" in response.headers
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["checks"]["storage"].startswith("unreachable")
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(AnswerKey)) == 1

    moto_s3.start()  # the same port: the service finds the store again by itself
    accepted = submit(client, alice.headers, PERFECT)
    assert accepted.status_code == 202, accepted.text
    view = client.get(f"{API}/submissions/{accepted.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "scored"
    assert client.get("/readyz").status_code == 200


def test_a_refused_upload_leaves_no_object_behind(client, host, alice, settings):
    ready_competition(client, host.headers)
    refused = submit(client, alice.headers, b"id,prediction\na,1\n")
    assert refused.status_code == 422
    assert keys(settings, "submissions/") == []
    download = client.get(
        f"{API}/submissions/{refused.json()['submission_id']}/file", headers=alice.headers
    )
    assert download.status_code == 404


MAE = b"""
def score(solution, submission, row_id_column_name, **params):
    return float((solution["y"] - submission["y"]).abs().mean())
"""
CUSTOM_KEY = csv_bytes(["id", "y", "Usage"], ["a", 1, "Public"], ["b", 2, "Private"])


def test_a_custom_metric_lives_in_the_bucket_and_is_fetched_to_score(
    client, host, alice, settings, session_factory
):
    create_competition(client, host.headers, "own", metric={"name": "custom", "params": {}})
    assert upload_key(client, host.headers, "own", CUSTOM_KEY).status_code == 201
    shutil.rmtree(settings.data_dir / "store-cache")  # checking the metric fetches the key
    metric = client.put(
        f"{API}/competitions/own/custom-metric",
        files={"file": ("metric.py", MAE, "text/x-python")},
        data={"direction": "minimize"},
        headers=host.headers,
    )
    assert metric.status_code == 200, metric.text
    with session_factory() as session:
        cid = session.scalar(select(Competition.id))
        assert session.scalar(select(Competition.custom_metric_path)) == (
            f"s3://{BUCKET}/metrics/{cid}/{_sha(MAE)}.py"
        )
    shutil.rmtree(settings.data_dir / "store-cache")  # scoring fetches the key and the metric
    accepted = submit(client, alice.headers, csv_bytes(["id", "y"], ["a", 2], ["b", 2]), "own")
    assert accepted.status_code == 202, accepted.text
    view = client.get(f"{API}/submissions/{accepted.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["public_score"] == 1.0


class _WatchedSource(io.RawIOBase):
    """A large upload that, as it is read, asks the store how much of it has arrived there."""

    def __init__(self, size: int, settings) -> None:  # type: ignore[no-untyped-def]
        self.size, self.read_so_far, self.settings = size, 0, settings
        self.most_in_flight = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = min(n if n >= 0 else self.size, self.size - self.read_so_far)
        self.read_so_far += n
        client = store(self.settings)
        arrived = 0
        for upload in client.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []):
            parts = client.list_parts(Bucket=BUCKET, Key=upload["Key"], UploadId=upload["UploadId"])
            arrived += sum(part["Size"] for part in parts.get("Parts", []))
        self.most_in_flight = max(self.most_in_flight, self.read_so_far - arrived)
        return bytes([self.read_so_far % 251]) * n


def test_a_large_upload_goes_up_in_parts_never_held_whole(settings):
    size = 8 * PART + 123
    source = _WatchedSource(size, settings)
    blob = save_blob(source, key="datafiles/1/big", settings=settings, max_bytes=size)  # type: ignore[arg-type]
    assert blob.size == size
    head = store(settings).head_object(Bucket=BUCKET, Key="blobs/datafiles/1/big")
    assert head["ContentLength"] == size
    assert head["ETag"].strip('"').endswith("-9")  # S3's mark of a 9-part upload
    # Read but not yet in the store, at any moment: the part being filled and the one being sent.
    assert source.most_in_flight <= 2 * PART + (1 << 20)
    assert store(settings).list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []


def test_an_upload_past_its_limit_is_aborted_and_leaves_nothing(settings):
    source = io.BytesIO(b"x" * (3 * PART))
    with pytest.raises(PayloadTooLarge):
        save_blob(source, key="datafiles/1/too-big", settings=settings, max_bytes=2 * PART + 1)
    assert keys(settings, "blobs/") == []
    assert store(settings).list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []


def test_a_worker_with_an_empty_cache_scores_from_the_store(
    settings, session_factory, tmp_path, host, alice
):
    parked = ParkedQueue()
    app = create_app(settings, session_factory=session_factory, scoring_queue=parked)
    with TestClient(app) as client:
        ready_competition(client, host.headers)
        submission_id = submit(client, alice.headers, PERFECT).json()["id"]
    assert parked.ids == [submission_id]

    # Another machine: its own data directory, nothing cached, only the bucket in common.
    worker = settings.model_copy(update={"data_dir": tmp_path / "worker"})
    score_submission(session_factory, submission_id, worker)
    with session_factory() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None and submission.status.value == "scored"
    cached = sorted(p.name for p in (tmp_path / "worker" / "store-cache").iterdir())
    assert cached == sorted([f"{_sha(KEY)}.upload", f"{_sha(PERFECT)}.upload"])


def test_a_worker_puts_a_submission_back_while_the_store_is_down(
    settings, session_factory, tmp_path, moto_s3, host, alice
):
    parked = ParkedQueue()
    app = create_app(settings, session_factory=session_factory, scoring_queue=parked)
    with TestClient(app) as client:
        ready_competition(client, host.headers)
        submission_id = submit(client, alice.headers, PERFECT).json()["id"]
    worker = settings.model_copy(update={"data_dir": tmp_path / "worker"})

    moto_s3.stop()
    score_submission(session_factory, submission_id, worker)
    with session_factory() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None
        # Back in the queue, no attempt used up: the store's outage is nobody's fault.
        assert submission.status.value == "queued" and submission.attempts == 0

    moto_s3.start()
    score_submission(session_factory, submission_id, worker)
    with session_factory() as session:
        assert session.get(Submission, submission_id).status.value == "scored"  # type: ignore[union-attr]


def test_the_cache_reuses_a_fetched_file(settings):
    data = b"id,target\na,1\n"
    blob_ref = f"s3://{BUCKET}/answer-keys/9/{_sha(data)}.upload"
    store(settings).put_object(Bucket=BUCKET, Key=blob_ref.split("/", 3)[3], Body=data)
    first = local_file(blob_ref, settings=settings)
    assert first.read_bytes() == data
    store(settings).delete_object(Bucket=BUCKET, Key=blob_ref.split("/", 3)[3])
    again = local_file(blob_ref, settings=settings)  # no second fetch: it would find nothing
    assert again == first and again.read_bytes() == data


def test_a_celery_worker_on_another_machine_scores_from_the_bucket(settings, tmp_path, redis_url):
    api = settings.model_copy(
        update={
            "database_url": f"sqlite:///{tmp_path}/celery.db",
            "scoring_backend": "celery",
            "celery_broker_url": redis_url,
        }
    )
    migrated(api.database_url)
    host, alice = _headers(api, "host", True), _headers(api, "alice")
    # The worker shares the database, the broker and the bucket; its data directory is its own.
    worker = make_celery(api.model_copy(update={"data_dir": tmp_path / "worker"}))
    with TestClient(create_app(api)) as client:
        ready_competition(client, host)
        submission_id = submit(client, alice, PERFECT).json()["id"]
        with start_worker(worker, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                view = client.get(f"{API}/submissions/{submission_id}", headers=alice).json()
                if view["status"] == "scored":
                    break
                time.sleep(0.1)
    assert view["status"] == "scored" and view["public_score"] == 1.0
    assert (tmp_path / "worker" / "store-cache" / f"{_sha(PERFECT)}.upload").exists()


@pytest.mark.parametrize("kind", ["local", "s3"])
def test_named_blobs_behave_the_same_on_both_backends(settings, kind):
    settings = settings.model_copy(update={"storage": kind})
    for nonce in ("n1", "n2"):
        save_blob(
            io.BytesIO(nonce.encode()),
            key=f"kaggle-uploads/7/{nonce}",
            settings=settings,
            max_bytes=10,
        )
    listed = list_blobs("kaggle-uploads/7", settings=settings)
    assert sorted(key for key, _modified in listed) == [
        "kaggle-uploads/7/n1",
        "kaggle-uploads/7/n2",
    ]
    assert all(modified > 0 for _key, modified in listed)
    with open_blob("kaggle-uploads/7/n2", settings=settings) as source:
        assert source.read() == b"n2"
    delete_blob("kaggle-uploads/7/n2", settings=settings)
    delete_blob("kaggle-uploads/7/n2", settings=settings)  # a missing one is fine
    with pytest.raises(NotFound):
        open_blob("kaggle-uploads/7/n2", settings=settings)
    assert list_blobs("kaggle-uploads/8", settings=settings) == []
