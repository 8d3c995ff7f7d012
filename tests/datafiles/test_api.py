import hashlib
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.models import AuditEntry, DataFile
from tests.helpers import API, KEY, create_competition, upload_key

TRAIN = b"id,feature,target\n" + b"".join(f"r{i},{i * 0.5},{i % 2}\n".encode() for i in range(5000))


def files_url(slug: str = "churn", name: str = "") -> str:
    return f"{API}/competitions/{slug}/files" + (f"/{name}" if name else "")


def test_host_puts_a_raw_body_and_a_participant_downloads_it(client, host, alice, settings):
    create_competition(client, host.headers)
    response = client.put(files_url(name="train.csv"), content=TRAIN, headers=host.headers)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["name"] == "train.csv"
    assert body["size_bytes"] == len(TRAIN)
    assert body["sha256"] == hashlib.sha256(TRAIN).hexdigest()

    listed = client.get(files_url(), headers=alice.headers).json()
    assert [(f["name"], f["size_bytes"]) for f in listed] == [("train.csv", len(TRAIN))]
    download = client.get(files_url(name="train.csv"), headers=alice.headers)
    assert download.status_code == 200
    assert download.content == TRAIN
    assert download.headers["content-length"] == str(len(TRAIN))
    assert download.headers["etag"] == f'"{body["sha256"]}"'
    assert "train.csv" in download.headers["content-disposition"]


def test_multipart_upload_is_accepted_too(client, host, alice):
    create_competition(client, host.headers)
    response = client.put(
        files_url(name="test.csv"),
        files={"file": ("whatever.csv", b"id\na\nb\n", "text/csv")},
        headers=host.headers,
    )
    assert response.status_code == 201, response.text
    assert client.get(files_url(name="test.csv"), headers=alice.headers).content == b"id\na\nb\n"


def test_a_second_put_replaces_the_file_and_is_audited(client, host, alice, session_factory):
    create_competition(client, host.headers)
    assert (
        client.put(files_url(name="a.csv"), content=b"x\n1\n", headers=host.headers).status_code
        == 201
    )
    again = client.put(files_url(name="a.csv"), content=b"x\n2\n", headers=host.headers)
    assert again.status_code == 200
    assert client.get(files_url(name="a.csv"), headers=alice.headers).content == b"x\n2\n"
    with session_factory() as session:
        assert len(session.scalars(select(DataFile)).all()) == 1
        actions = session.scalars(select(AuditEntry.action)).all()
    assert actions.count("data_file_upload") == 2


def test_host_deletes_a_file_and_its_bytes(client, host, alice, settings, session_factory):
    create_competition(client, host.headers)
    client.put(files_url(name="a.csv"), content=b"x\n1\n", headers=host.headers)
    with session_factory() as session:
        key = session.scalar(select(DataFile.storage_key))
    stored = settings.data_dir / "blobs" / key
    assert stored.is_file()
    assert client.delete(files_url(name="a.csv"), headers=alice.headers).status_code == 403
    assert client.delete(files_url(name="a.csv"), headers=host.headers).status_code == 204
    assert client.get(files_url(name="a.csv"), headers=alice.headers).status_code == 404
    assert client.get(files_url(), headers=alice.headers).json() == []
    assert not stored.exists()


def test_participants_cannot_publish_files(client, host, alice, session_factory):
    create_competition(client, host.headers)
    response = client.put(files_url(name="a.csv"), content=b"x\n", headers=alice.headers)
    assert response.status_code == 403
    with session_factory() as session:
        assert session.scalars(select(DataFile)).all() == []


def test_files_open_to_participants_with_the_competition(client, host, alice):
    start = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    create_competition(client, host.headers, start=start)
    client.put(files_url(name="a.csv"), content=b"x\n", headers=host.headers)
    assert client.get(files_url(), headers=host.headers).status_code == 200
    for url in (files_url(), files_url(name="a.csv")):
        response = client.get(url, headers=alice.headers)
        assert response.status_code == 403
        assert "opens" in response.json()["detail"]


def test_bad_names_are_refused_before_anything_is_stored(client, host, settings):
    create_competition(client, host.headers)
    for name in (".hidden", "a..b", "a b", "x" * 201, "-rf", "a;b"):
        response = client.put(files_url(name=name), content=b"x\n", headers=host.headers)
        assert response.status_code == 422, (name, response.status_code)
    # Paths that the URL layer resolves or splits never reach a file name at all.
    for name in ("..", "%2E%2E", "..%2F..%2Fetc%2Fpasswd", "a/b"):
        response = client.put(files_url(name=name), content=b"x", headers=host.headers)
        assert response.status_code in (404, 405, 422), (name, response.status_code)
    assert not (settings.data_dir / "blobs").exists()


def test_an_answer_key_is_never_published_as_data(client, host):
    create_competition(client, host.headers)
    assert upload_key(client, host.headers).status_code == 201
    response = client.put(files_url(name="solution.csv"), content=KEY, headers=host.headers)
    assert response.status_code == 422
    assert "answer key" in response.json()["detail"]


def test_the_size_cap_applies_while_streaming_and_by_declared_length(client, host, settings):
    settings.max_data_file_bytes = 1000
    create_competition(client, host.headers)

    def body():  # no Content-Length: the limit is enforced while reading
        for _ in range(10):
            yield b"x" * 500

    response = client.put(files_url(name="big.csv"), content=body(), headers=host.headers)
    assert response.status_code == 413
    declared = client.put(files_url(name="big.csv"), content=b"y" * 1001, headers=host.headers)
    assert declared.status_code == 413
    assert client.get(files_url(), headers=host.headers).json() == []


def test_unknown_competition_or_file_is_404(client, host, alice):
    assert client.get(files_url("nope"), headers=alice.headers).status_code == 404
    create_competition(client, host.headers)
    assert client.get(files_url(name="none.csv"), headers=alice.headers).status_code == 404
    assert client.get(files_url(), headers={"Authorization": "Bearer wrong"}).status_code == 401
