"""Bombs and abuse against a real server process (uvicorn, SQLite, the scoring thread): every
attack of issue 8, built on the fly and streamed (never whole in memory), must be refused for its
reason while other requests are answered, and the server stays healthy.

Submissions are parsed in the server here (the child-process threshold is set out of reach), the
process a bomb would blow up. How fast each is refused and the server's peak memory meanwhile
are figures, not assertions: ``bench/bench_abuse.py`` runs these attacks and prints them.
"""

import gzip
import select
import socket
import struct
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.helpers import API
from tests.jobs.test_server_while_scoring import running_server

MB = 1 << 20
GIB = 1 << 30
KEY_ROWS = 1000
UPLOAD_LIMIT = 32 * MB
REFUSAL_DEADLINE = 120  # seconds: a hang guard, not a figure (the bench prints those)


# --- the server -------------------------------------------------------------------------------


@contextmanager
def target_server(tmp: Path) -> Iterator[tuple[httpx.Client, int, dict, dict]]:  # type: ignore[type-arg]
    """A server with competition "target" (a 1,000-row key); (client, pid, host, alice)."""
    with running_server(
        tmp,
        max_upload_bytes=str(UPLOAD_LIMIT),
        scoring_in_child_bytes=str(1 << 50),
        uploads_per_minute="1000",
    ) as (client, pid, (host, alice)):
        body = {
            "slug": "target",
            "title": "Target",
            "metric": {"name": "roc_auc"},
            "daily_submission_limit": 1000,
        }
        assert client.post(f"{API}/competitions", json=body, headers=host).status_code == 201
        key = "id,target,Usage\n" + "".join(
            f"r{i:04d},{i % 2},{'Public' if i % 3 else 'Private'}\n" for i in range(KEY_ROWS)
        )
        response = client.put(
            f"{API}/competitions/target/answer-key",
            files={"file": ("key.csv", key.encode(), "text/csv")},
            headers=host,
        )
        assert response.status_code == 201, response.text
        yield client, pid, host, alice


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[httpx.Client, int, dict, dict]]:  # type: ignore[type-arg]
    with target_server(tmp_path_factory.mktemp("abuse")) as running:
        yield running


# --- building attacks, streamed ------------------------------------------------------------------


def _deflated(head: bytes, row: bytes, total: int) -> tuple[bytes, int, int]:
    """(raw deflate stream, CRC-32, unpacked size) of ``head`` and ``row`` repeated to ``total``.

    One 1 MiB block is compressed once and ended with a full flush, which resets the compressor,
    so the same compressed bytes stand for every repetition: building a 1 GiB bomb costs its CRC.
    """
    block = row * (MB // len(row))
    repeats = total // len(block)
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    middle = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(head)
    for _ in range(repeats):
        crc = zlib.crc32(block, crc)
    stream = first + middle * repeats + compressor.flush()
    return stream, crc, len(head) + repeats * len(block)


def _gzip(path: Path, head: bytes, row: bytes, total: int) -> Path:
    stream, crc, size = _deflated(head, row, total)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    path.write_bytes(header + stream + struct.pack("<II", crc, size & 0xFFFFFFFF))
    return path


def _zip(path: Path, head: bytes, row: bytes, total: int, *, declared: int | None = None) -> Path:
    """A zip64 archive of one deflated member; ``declared`` makes it lie about its size."""
    stream, crc, size = _deflated(head, row, total)
    size = size if declared is None else declared
    name = b"submission.csv"
    sizes = struct.pack("<HHQQ", 0x0001, 16, size, len(stream))
    local = struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), 20
    )
    central = struct.pack(
        "<IHHHHHHIIIHHHHHII",
        *(0x02014B50, 45, 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), 20),
        *(0, 0, 0, 0, 0),
    )
    central += name + sizes
    offset = len(local) + len(name) + len(sizes) + len(stream)
    end64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1, 1, len(central), offset)
    locator = struct.pack("<IIQI", 0x07064B50, 0, offset + len(central), 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), offset, 0)
    path.write_bytes(local + name + sizes + stream + central + end64 + locator + end)
    return path


def _upload(client: httpx.Client, headers: dict, path: Path) -> httpx.Response:  # type: ignore[type-arg]
    with open(path, "rb") as fh:  # httpx streams an open file
        return client.post(
            f"{API}/competitions/target/submissions",
            files={"file": (path.name, fh, "application/octet-stream")},
            headers=headers,
        )


def refused(server, path: Path) -> str:  # type: ignore[no-untyped-def]
    """Upload ``path``; the reason it was refused for. Meanwhile other requests are answered."""
    client, _pid, _host, alice = server
    started = time.monotonic()
    response = _upload(client, alice, path)
    other = client.get(f"{API}/competitions", headers=alice)  # while the job runs
    assert other.status_code == 200
    if response.status_code == 422:
        reason = response.json()["detail"]
    else:
        assert response.status_code == 202, response.text
        url = f"{API}/submissions/{response.json()['id']}"
        while (view := client.get(url, headers=alice).json())["status"] in ("queued", "scoring"):
            assert client.get("/healthz").status_code == 200
            assert time.monotonic() - started < REFUSAL_DEADLINE, f"never refused: {view}"
            time.sleep(0.05)
        assert view["status"] == "failed", view
        reason = view["error"]
    assert len(reason) <= 2000
    return reason


# --- the attacks, built where the tests and bench/bench_abuse.py both find them ----------------


def ragged_gzip_bomb(tmp: Path) -> Path:
    return _gzip(tmp / "ragged.csv.gz", b"id,target\n", b"r00,cat,x\n", GIB)


def valid_gzip_bomb(tmp: Path) -> Path:
    return _gzip(tmp / "valid.csv.gz", b"id,target\n", b"r0001,0.5\n", GIB)


def long_rows_gzip_bomb(tmp: Path) -> Path:
    return _gzip(tmp / "long.csv.gz", b"id,target\n", b"r0001," + b"5" * 4000 + b"\n", GIB)


def zip_bomb(tmp: Path) -> Path:
    return _zip(tmp / "bomb.zip", b"id,target\n", b"r0001,0.5\n", GIB)


def lying_zip_bomb(tmp: Path) -> Path:
    return _zip(tmp / "liar.zip", b"id,target\n", b"r0001,0.5\n", GIB, declared=1000)


def wide_header(tmp: Path) -> Path:
    path = tmp / "wide.csv"
    path.write_bytes(b",".join(b"c%06d" % i for i in range(130_000)) + b"\nr0001,1\n")
    return path


def long_first_line(tmp: Path) -> Path:
    path = tmp / "longhead.csv"
    path.write_bytes(b"id" + b"x" * 200_000 + b",target\nr0001,1\n")
    return path


def megabyte_ids(tmp: Path) -> Path:
    path = tmp / "ids.csv.gz"
    with gzip.open(path, "wb") as out:  # written row by row, never whole
        out.write(b"id,target\n")
        for i in range(20):
            out.write(b"%02d" % i + b"z" * (3 * MB) + b",0.5\n")
    return path


ATTACKS = (
    ragged_gzip_bomb,
    valid_gzip_bomb,
    long_rows_gzip_bomb,
    zip_bomb,
    lying_zip_bomb,
    wide_header,
    long_first_line,
    megabyte_ids,
)


def test_a_gzip_bomb_of_ragged_rows_is_refused(server, tmp_path):
    bomb = ragged_gzip_bomb(tmp_path)
    assert bomb.stat().st_size < 8 * MB
    reason = refused(server, bomb)
    assert "rows" in reason and ("limit" in reason or "wrong number of fields" in reason)


def test_a_gzip_bomb_of_valid_rows_is_refused_at_the_row_limit(server, tmp_path):
    reason = refused(server, valid_gzip_bomb(tmp_path))
    assert "limit" in reason and "1,000 rows" in reason


def test_a_gzip_bomb_of_long_rows_is_refused_at_the_byte_budget(server, tmp_path):
    reason = refused(server, long_rows_gzip_bomb(tmp_path))
    assert "more than the limit of" in reason and "bytes" in reason


def test_a_zip_bomb_is_refused_without_being_unpacked(server, tmp_path):
    bomb = zip_bomb(tmp_path)
    with zipfile.ZipFile(bomb) as archive:  # a well-formed archive, honest about its size
        assert archive.infolist()[0].file_size >= GIB - MB
    assert "without being unpacked" in refused(server, bomb)


def test_a_zip_bomb_that_lies_about_its_size_is_cut_where_it_lies(server, tmp_path):
    reason = refused(server, lying_zip_bomb(tmp_path))
    assert "damaged" in reason or "limit" in reason


def test_a_header_of_130000_columns_is_refused_at_once(server, tmp_path):
    assert "130,000 columns" in refused(server, wide_header(tmp_path))


def test_a_first_line_longer_than_128_kb_is_a_reason_not_a_500(server, tmp_path):
    assert "header" in refused(server, long_first_line(tmp_path))


def test_ids_of_megabytes_store_a_short_error(server, tmp_path):
    reason = refused(server, megabyte_ids(tmp_path))
    assert "limit" in reason and len(reason) < 500


# --- before the body ---------------------------------------------------------------------------


def _raw_upload(server, headers: dict[str, str], body: Iterator[bytes]) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Send an upload by hand; (the status answered, body bytes sent before the answer)."""
    client, *_ = server
    port = client.base_url.port
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        head = [f"POST {API}/competitions/target/submissions HTTP/1.1", "Host: 127.0.0.1"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        for piece in body:
            if select.select([sock], [], [], 0)[0]:
                break  # the server has answered (or closed): stop sending
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
        answer = b""
        while b"\r\n" not in answer:
            data = sock.recv(65536)
            assert data, f"the connection closed without an answer after {sent} bytes"
            answer += data
    return int(answer.split(b" ", 2)[1]), sent


def _endless(chunk: int = 64 * 1024) -> Iterator[bytes]:
    block = b"x" * chunk
    while True:
        yield block


def test_a_bad_token_is_refused_before_the_body_is_read(server):
    headers = {
        "Authorization": "Bearer not-a-token",
        "Content-Type": "multipart/form-data; boundary=b",
        "Content-Length": str(UPLOAD_LIMIT),
    }
    status, sent = _raw_upload(server, headers, _endless())
    assert status == 401 and sent < UPLOAD_LIMIT // 4, sent


def test_a_declared_3_gb_upload_is_413_before_the_body_is_read(server):
    _, _, _, alice = server
    headers = {
        **alice,
        "Content-Type": "multipart/form-data; boundary=b",
        "Content-Length": str(3 * GIB),
    }
    status, sent = _raw_upload(server, headers, _endless())
    assert status == 413 and sent < UPLOAD_LIMIT // 4, sent


def chunked_upload(server) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """A chunked upload with no declared length, endless; (status, body bytes sent)."""
    _, _, _, alice = server
    headers = {
        **alice,
        "Content-Type": "multipart/form-data; boundary=b",
        "Transfer-Encoding": "chunked",
    }
    part = b'--b\r\nContent-Disposition: form-data; name="file"; filename="s.csv"\r\n\r\n'

    def chunked() -> Iterator[bytes]:
        for piece in (part, *[b"r0001,0.5\n" * 6553] * 100_000):
            yield b"%x\r\n%s\r\n" % (len(piece), piece)

    return _raw_upload(server, headers, chunked())


def test_a_chunked_upload_is_cut_at_the_limit_while_read(server):
    status, sent = chunked_upload(server)
    assert status == 413 and sent < 2 * UPLOAD_LIMIT, sent


def test_the_server_is_healthy_after_every_attack(server):
    client, _, _, alice = server
    assert client.get("/healthz").json() == {"status": "ok"}
    good = "id,target\n" + "".join(f"r{i:04d},{(i % 2) * 0.8}\n" for i in range(KEY_ROWS))
    response = client.post(
        f"{API}/competitions/target/submissions",
        files={"file": ("good.csv", good.encode(), "text/csv")},
        headers=alice,
    )
    assert response.status_code == 202
    url = f"{API}/submissions/{response.json()['id']}"
    deadline = time.monotonic() + REFUSAL_DEADLINE  # a hang guard
    while (view := client.get(url, headers=alice).json())["status"] in ("queued", "scoring"):
        assert time.monotonic() < deadline, f"never scored: {view}"
        time.sleep(0.05)
    assert view["status"] == "scored" and view["public_score"] == 1.0
