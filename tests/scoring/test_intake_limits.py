"""Every intake budget is enforced while the file is read, and every refusal names the problem
in a message of bounded length (issue 8: bounded work for any upload)."""

import gzip
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.metrics import get_metric
from app.scoring.intake import (
    IntakeError,
    IntakeLimits,
    check_upload,
    read_answer_key,
    read_header,
    read_submission,
    submission_limits,
)
from app.scoring.intake_errors import LONGEST_QUOTED, MAX_MESSAGE
from app.scoring.intake_source import LimitedReader, _has_long_line

AUC = get_metric("roc_auc")
RMSE = get_metric("rmse")
NO_PARAMS = AUC.parse_params(None)


def _key(tmp_path: Path, n: int = 10):  # type: ignore[no-untyped-def]
    rows = "".join(f"r{i:03d},{i % 2}\n" for i in range(n))
    path = tmp_path / "key.csv"
    path.write_text("id,target\n" + rows)
    return read_answer_key(path, metric=AUC, params=NO_PARAMS)


def _gzip_file(path: Path, pieces: Iterator[bytes]) -> Path:
    """Write a gzip stream piece by piece: a bomb never exists uncompressed, in memory or on disk."""
    with gzip.open(path, "wb", compresslevel=1) as out:
        for piece in pieces:
            out.write(piece)
    return path


def _repeat(head: bytes, body: bytes, total: int) -> Iterator[bytes]:
    yield head
    block = body * max(1, (1 << 20) // len(body))
    for _ in range(total // len(block)):
        yield block


def _refusal(call) -> IntakeError:  # type: ignore[no-untyped-def]
    with pytest.raises(IntakeError) as caught:
        call()
    assert len(caught.value.message) <= MAX_MESSAGE
    return caught.value


def test_a_gzip_bomb_is_refused_at_the_submissions_byte_budget(tmp_path):
    key = _key(tmp_path)
    bomb = _gzip_file(
        tmp_path / "bomb.gz", _repeat(b"id,target\n", b"r001,0." + b"5" * 2000 + b"\n", 256 << 20)
    )
    budget = submission_limits(key).max_decompressed_bytes
    assert budget < 2 << 20  # ten rows of ids and numbers need far less than 256 MB
    error = _refusal(lambda: read_submission(bomb, key=key, metric=AUC))
    assert error.kind == "too_large" and f"{budget:,}" in error.message
    assert "10 rows" in error.message


def test_a_zip_member_too_large_is_refused_before_unpacking(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("sub.csv", "w", force_zip64=True) as member:
            for piece in _repeat(b"id,target\n", b"r001,0.5\n", 64 << 20):
                member.write(piece)
    limits = IntakeLimits(max_decompressed_bytes=1 << 20)
    error = _refusal(lambda: read_header(path, limits=limits))
    assert error.kind == "too_large" and "without being unpacked" in error.message


def test_a_stream_that_lies_about_its_size_is_cut_at_the_limit():
    class Endless:
        def read(self, size: int) -> bytes:
            return b"a,1\n" * (size // 4)

    reader = LimitedReader(Endless(), limits=IntakeLimits(max_decompressed_bytes=1 << 20), what="x")  # type: ignore[arg-type]
    with pytest.raises(IntakeError) as caught:
        while reader.read(1 << 16):
            pass
    assert caught.value.kind == "too_large" and reader.count <= (1 << 20) + (1 << 16)


def test_too_many_rows_are_refused_while_read_not_after(tmp_path):
    key = _key(tmp_path, 10)
    path = _gzip_file(tmp_path / "rows.gz", _repeat(b"id,target\n", b"x,1\n", 64 << 20))
    limits = submission_limits(key)
    reader_limit = limits.max_lines
    error = _refusal(lambda: read_submission(path, key=key, metric=AUC))
    assert error.kind == "too_many_rows" and f"{reader_limit:,} lines" in error.message


def test_the_configured_row_limit_is_a_line_limit_for_answer_keys(tmp_path):
    path = tmp_path / "key.csv"
    path.write_text("id,target\n" + "".join(f"r{i},{i % 2}\n" for i in range(5000)))
    error = _refusal(
        lambda: read_answer_key(
            path, metric=AUC, params=NO_PARAMS, limits=IntakeLimits(max_rows=100)
        )
    )
    assert error.kind == "too_many_rows" and "limit of 100" in error.message


def test_a_few_extra_rows_are_named_as_unknown_ids_not_as_too_many(tmp_path):
    key = _key(tmp_path, 10)
    path = tmp_path / "sub.csv"
    path.write_text("id,target\n" + "".join(f"r{i:03d},0.5\n" for i in range(12)))
    error = _refusal(lambda: read_submission(path, key=key, metric=AUC))
    assert error.kind == "unknown_ids" and "'r010'" in error.message


def test_a_first_line_beyond_the_csv_field_limit_is_a_4xx_reason_not_a_crash(tmp_path):
    # 200 KB in one field: Python's csv module refuses fields over 128 KB.
    path = tmp_path / "wide.csv"
    path.write_bytes(b"id" + b"x" * 200_000 + b",target\nr1,1\n")
    error = _refusal(lambda: read_header(path))
    assert error.kind == "bad_header" and "field" in error.message


def test_a_header_line_over_the_line_limit_is_refused(tmp_path):
    path = tmp_path / "long.csv"
    path.write_bytes(b"id," + b"y" * 5000 + b"\nr1,1\n")
    error = _refusal(lambda: read_header(path, limits=IntakeLimits(max_line_bytes=1000)))
    assert error.kind == "line_too_long" and "1,000 bytes" in error.message


@pytest.mark.parametrize("compressed", [True, False])
def test_a_data_line_over_the_line_limit_is_refused_while_read(tmp_path, monkeypatch, compressed):
    from app.scoring import intake_parse

    monkeypatch.setattr(intake_parse, "SCAN_ABOVE", 0)  # a plain file this small is not scanned
    key = _key(tmp_path, 10)
    rows = [f"r{i:03d},0.5\n".encode() for i in range(10)]
    rows[6] = b"r006," + b"9" * 5000 + b"\n"
    data = b"id,target\n" + b"".join(rows)
    path = tmp_path / "sub.csv"
    path.write_bytes(gzip.compress(data) if compressed else data)
    limits = IntakeLimits(max_line_bytes=1000)
    error = _refusal(lambda: read_submission(path, key=key, metric=AUC, limits=limits))
    assert error.kind == "line_too_long" and "1,000 bytes" in error.message


def test_a_large_plain_file_is_scanned_for_its_lines_before_it_is_parsed(tmp_path, monkeypatch):
    from app.scoring import intake_parse

    key = _key(tmp_path, 10)
    monkeypatch.setattr(intake_parse, "SCAN_ABOVE", 1000)
    parsed = []
    monkeypatch.setattr(intake_parse.pacsv, "read_csv", lambda *a, **k: parsed.append(a))
    path = tmp_path / "sub.csv"
    path.write_bytes(b"id,target\n" + b"x,1\n" * 100_000)
    error = _refusal(lambda: read_submission(path, key=key, metric=AUC))
    assert error.kind == "too_many_rows" and not parsed


def test_the_long_line_check_agrees_with_a_plain_scan():
    rng = random.Random(7)
    for _ in range(300):
        parts = [b"x" * rng.choice([0, 1, 5, 40, 99, 100, 101, 150, 300]) for _ in range(30)]
        data = b"\n" + b"\n".join(parts) + b"\n"
        first, last = data.find(b"\n"), data.rfind(b"\n")
        longest = max(len(p) for p in parts)
        assert _has_long_line(data, first, last, 100) == (longest > 100), [len(p) for p in parts]


def test_a_header_wider_than_the_key_could_need_is_refused_unparsed(tmp_path):
    key = _key(tmp_path)
    path = tmp_path / "wide.csv"
    path.write_bytes(",".join(f"c{i}" for i in range(130_000)).encode() + b"\nr1,1\n")
    error = _refusal(lambda: check_upload(path, key=key))
    assert error.kind == "too_many_columns" and "130,000 columns" in error.message


def test_an_answer_key_header_is_bounded_by_the_column_limit(tmp_path):
    path = tmp_path / "key.csv"
    path.write_bytes(b"id," + b",".join(b"t%d" % i for i in range(50)) + b"\n")
    error = _refusal(lambda: read_header(path, limits=IntakeLimits(max_columns=20)))
    assert error.kind == "too_many_columns"


def test_repeated_names_in_a_wide_header_are_found(tmp_path):
    names = [f"c{i}" for i in range(9000)] + ["c17", "c4000"]
    path = tmp_path / "key.csv"
    path.write_bytes(",".join(names).encode() + b"\n")
    error = _refusal(lambda: read_header(path))
    assert error.kind == "bad_header" and "'c17', 'c4000'" in error.message


def test_ragged_rows_are_counted_not_listed_and_the_first_five_named(tmp_path):
    path = _gzip_file(
        tmp_path / "ragged.gz", _repeat(b"id,target\nr000,0.5\n", b"r00,cat,x\n", 8 << 20)
    )
    wide = IntakeLimits(max_decompressed_bytes=1 << 30, max_rows=50_000_000)
    # Read as a key (no key-derived budget): millions of bad rows, a bounded message.
    error = _refusal(lambda: read_answer_key(path, metric=AUC, params=NO_PARAMS, limits=wide))
    assert error.kind == "ragged_row" and "at least 1,000 row(s)" in error.message
    assert error.message.count("has 3") == 5 and "more)" in error.message


def test_non_numeric_cells_are_counted_and_the_first_five_named(tmp_path):
    key = _key(tmp_path, 2000)
    path = tmp_path / "sub.csv"
    path.write_text("id,target\n" + "".join(f"r{i:03d},oops{i}\n" for i in range(2000)))
    error = _refusal(lambda: read_submission(path, key=key, metric=AUC))
    assert error.kind == "non_numeric" and "has at least 2,000 non-numeric cell(s)" in error.message
    assert "'oops0'" in error.message and "'oops4'" in error.message
    assert "'oops5'" not in error.message


def test_long_ids_are_cut_in_messages_and_lists_say_how_many_more(tmp_path):
    key = _key(tmp_path, 20)
    long_ids = [f"{i:02d}" + "z" * 2000 for i in range(20)]
    path = tmp_path / "sub.csv"
    path.write_text("id,target\n" + "".join(f"{i},0.5\n" for i in long_ids))
    error = _refusal(lambda: read_submission(path, key=key, metric=AUC))
    assert error.kind == "unknown_ids"
    assert "…" in error.message and "z" * (LONGEST_QUOTED + 1) not in error.message
    assert "(and 15 more)" in error.message
    assert len(error.message) < 2000


def test_every_message_has_a_ceiling():
    assert len(IntakeError("x" * 10_000_000).message) == MAX_MESSAGE


def test_a_zip_holding_something_else_names_its_member(tmp_path):
    key = _key(tmp_path)
    path = tmp_path / "sub.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("notes.txt", "hello\nworld\n")
    error = _refusal(lambda: check_upload(path, key=key))
    assert "'notes.txt', which is not a CSV file" in error.message


def test_a_zip_of_several_files_names_them(tmp_path):
    path = tmp_path / "sub.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(7):
            zf.writestr(f"part{i}.csv", "id,target\n")
    error = _refusal(lambda: read_header(path))
    assert "'part0.csv'" in error.message and "(and 2 more)" in error.message


def test_a_valid_file_within_every_budget_is_read(tmp_path):
    key = _key(tmp_path, 10)
    path = tmp_path / "sub.csv"
    path.write_bytes(
        gzip.compress(b"id,target\n" + b"".join(b"r%03d,0.5\n" % i for i in range(10)))
    )
    predictions = read_submission(path, key=key, metric=AUC)
    assert predictions.shape == (10,) and np.all(predictions == 0.5)
