"""Intake: what it accepts, what it refuses at which limit, the answer-key cache and line numbers."""

import gzip
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from app.metrics import get_metric
from app.scoring import intake_cache
from app.scoring.intake import (
    IntakeError,
    IntakeLimits,
    check_upload,
    read_answer_key,
    read_header,
    read_submission,
)
from app.scoring.intake_cache import load_cached_key
from app.scoring.intake_source import line_numbers, sniff

ROOT = Path(__file__).resolve().parents[2]
AUC = get_metric("roc_auc")
NO_PARAMS = AUC.parse_params(None)
KEY = b"id,target\na,0\nb,1\nc,0\nd,1\n"
SHUFFLED = b"id,target\nd,0.9\nb,0.7\na,0.2\nc,0.1\n"
ALIGNED = np.array([0.2, 0.7, 0.1, 0.9])


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _zip(*members: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture
def key(tmp_path):
    return read_answer_key(_write(tmp_path, "key.csv", KEY), metric=AUC, params=NO_PARAMS)


def _read(tmp_path: Path, name: str, data: bytes, key, **kwargs) -> np.ndarray:  # type: ignore[no-untyped-def]
    return read_submission(_write(tmp_path, name, data), key=key, metric=AUC, **kwargs)


# --- what is accepted ---------------------------------------------------------------------------


def test_a_bom_and_crlf_line_endings_are_accepted(tmp_path, key):
    data = b"\xef\xbb\xbf" + SHUFFLED.replace(b"\n", b"\r\n")
    np.testing.assert_array_equal(_read(tmp_path, "s.csv", data, key), ALIGNED)


def test_blank_lines_and_a_missing_final_newline_are_accepted(tmp_path, key):
    data = b"id,target\n\nd,0.9\r\n\r\nb,0.7\na,0.2\nc,0.1"
    np.testing.assert_array_equal(_read(tmp_path, "s.csv", data, key), ALIGNED)


@pytest.mark.parametrize(
    "name, data",
    [
        ("plain.zip", SHUFFLED),  # a plain CSV, whatever its name says
        # mtime=0: the bytes are in the test's id, which every xdist worker must collect alike.
        ("gzipped.csv", gzip.compress(SHUFFLED, mtime=0)),
        ("gzipped.csv.gz", gzip.compress(SHUFFLED, mtime=0)),
        ("zipped.csv", _zip(("predictions.csv", SHUFFLED))),
        ("zipped.zip", _zip(("any name.txt", SHUFFLED))),
        (
            "folders.zip",
            _zip(("out/", b""), ("out/p.csv", SHUFFLED), ("__MACOSX/out/._p.csv", b"x")),
        ),
    ],
)
def test_csv_gzip_and_zip_are_told_apart_by_content_not_name(tmp_path, key, name, data):
    np.testing.assert_array_equal(_read(tmp_path, name, data, key), ALIGNED)


def test_text_cells_are_taken_literally_never_as_missing(tmp_path):
    accuracy = get_metric("accuracy")
    key_path = _write(tmp_path, "k.csv", b"id,label\n1,NA\n2,None\n3,null\n4,nan\n")
    key = read_answer_key(key_path, metric=accuracy, params=accuracy.parse_params(None))
    sub = _write(tmp_path, "s.csv", b"id,label\n4,nan\n3,null\n2,None\n1,NA\n")
    got = read_submission(sub, key=key, metric=accuracy)
    assert got.tolist() == ["NA", "None", "null", "nan"]
    assert key.y_true.tolist() == ["NA", "None", "null", "nan"]


def test_ids_that_look_like_numbers_stay_strings(tmp_path):
    key_path = _write(tmp_path, "k.csv", b"id,target\n007,0\n7,1\n7.0,0\n1e3,1\n")
    key = read_answer_key(key_path, metric=AUC, params=NO_PARAMS)
    assert key.ids.to_pylist() == ["007", "7", "7.0", "1e3"]
    got = _read(tmp_path, "s.csv", b"id,target\n1e3,0.4\n7.0,0.3\n7,0.2\n007,0.1\n", key)
    np.testing.assert_array_equal(got, [0.1, 0.2, 0.3, 0.4])


# --- limits -------------------------------------------------------------------------------------


def test_too_many_rows_is_refused(tmp_path, key):
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "s.csv", SHUFFLED, key, limits=IntakeLimits(max_rows=3))
    assert caught.value.kind == "too_many_rows" and "4 rows" in caught.value.message


def test_a_gzip_bomb_stops_at_the_decompressed_limit(tmp_path, key):
    bomb = gzip.compress(b"id,target\n" + b"a" * 50_000_000, compresslevel=9)
    assert len(bomb) < 100_000
    with pytest.raises(IntakeError) as caught:
        _read(
            tmp_path,
            "bomb.csv.gz",
            bomb,
            key,
            limits=IntakeLimits(max_decompressed_bytes=1_000_000),
        )
    assert (
        caught.value.kind == "too_large"
        and "refused without being unpacked" in caught.value.message
    )


def test_a_zip_bomb_is_refused_from_its_declared_size(tmp_path, key):
    bomb = _zip(("p.csv", b"id,target\n" + b"0" * 20_000_000))
    with pytest.raises(IntakeError) as caught:
        _read(
            tmp_path, "bomb.zip", bomb, key, limits=IntakeLimits(max_decompressed_bytes=1_000_000)
        )
    assert caught.value.kind == "too_large"


def test_a_plain_file_over_the_size_limit_is_refused(tmp_path, key):
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "s.csv", SHUFFLED, key, limits=IntakeLimits(max_decompressed_bytes=10))
    assert caught.value.kind == "too_large"


# --- quick upload checks ------------------------------------------------------------------------


def test_read_header_looks_inside_archives(tmp_path):
    path = _write(tmp_path, "s.zip", _zip(("p.csv", b"\xef\xbb\xbfid,target\r\na,1\r\n")))
    assert read_header(path) == ["id", "target"]


def test_check_upload_refuses_a_wrong_header_without_parsing_the_rows(tmp_path, key):
    with pytest.raises(IntakeError) as caught:
        check_upload(_write(tmp_path, "s.csv", b"id,score\na,1\nb,2,3,4\n"), key=key)
    assert caught.value.kind == "missing_columns" and "'target'" in caught.value.message
    check_upload(_write(tmp_path, "ok.csv.gz", gzip.compress(SHUFFLED)), key=key)


# --- answer keys ----------------------------------------------------------------------------------


def test_duplicate_ids_in_the_answer_key_are_named(tmp_path):
    path = _write(tmp_path, "k.csv", b"id,target\na,0\nb,1\na,1\nc,0\n")
    with pytest.raises(IntakeError) as caught:
        read_answer_key(path, metric=AUC, params=NO_PARAMS)
    assert caught.value.kind == "duplicate_ids" and "'a'" in caught.value.message


def test_the_key_cache_parses_once_then_loads_the_same_table(tmp_path, monkeypatch):
    source = _write(
        tmp_path, "k.csv", b"id,target,Usage\na,0,Public\nb,1,Private\nc,0,Public\nd,1,Private\n"
    )
    cache = tmp_path / "cache"
    first = load_cached_key(source, cache, metric=AUC, params=NO_PARAMS)

    def no_parsing(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the cached key was parsed again")

    monkeypatch.setattr(intake_cache, "read_answer_key", no_parsing)
    again = load_cached_key(source, cache, metric=AUC, params=NO_PARAMS)
    assert again.ids.to_pylist() == first.ids.to_pylist()
    np.testing.assert_array_equal(again.y_true, first.y_true)
    np.testing.assert_array_equal(again.usage, first.usage)
    np.testing.assert_array_equal(again.index.hashes, first.index.hashes)
    sub = _write(tmp_path, "s.csv", SHUFFLED)
    np.testing.assert_array_equal(read_submission(sub, key=again, metric=AUC), ALIGNED)


def test_the_key_cache_is_keyed_by_content_metric_and_id_column(tmp_path):
    cache = tmp_path / "cache"
    source = _write(tmp_path, "k.csv", b"id,label\na,x\nb,y\n")
    accuracy, macro_f1 = get_metric("accuracy"), get_metric("macro_f1")
    no_params = accuracy.parse_params(None)
    assert load_cached_key(source, cache, metric=accuracy, params=no_params).y_true.tolist() == [
        "x",
        "y",
    ]
    load_cached_key(source, cache, metric=macro_f1, params=no_params)
    by_label = load_cached_key(source, cache, metric=accuracy, params=no_params, id_column="label")
    assert by_label.ids.to_pylist() == ["x", "y"] and by_label.y_true.tolist() == ["a", "b"]
    source.write_bytes(b"id,label\na,z\nb,y\n")  # a new version of the key at the same path
    assert load_cached_key(source, cache, metric=accuracy, params=no_params).y_true.tolist() == [
        "z",
        "y",
    ]
    assert len([p for p in cache.iterdir() if p.name.startswith("key-")]) == 4


def test_a_damaged_cache_entry_is_rebuilt(tmp_path):
    source = _write(tmp_path, "k.csv", KEY)
    cache = tmp_path / "cache"
    load_cached_key(source, cache, metric=AUC, params=NO_PARAMS)
    (entry,) = [p for p in cache.iterdir() if p.name.startswith("key-")]
    (entry / "key.arrow").write_bytes(b"garbage")
    key = load_cached_key(source, cache, metric=AUC, params=NO_PARAMS)
    assert key.ids.to_pylist() == ["a", "b", "c", "d"]


def test_intake_never_imports_pandas(tmp_path):
    key_path = _write(tmp_path, "k.csv", KEY)
    sub_path = _write(tmp_path, "s.csv", SHUFFLED)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from app.metrics import get_metric\n"
        "from app.scoring.intake import read_submission\n"
        "from app.scoring.intake_cache import load_cached_key\n"
        "m = get_metric('roc_auc'); p = m.parse_params(None)\n"
        f"args = (Path({str(key_path)!r}), Path({str(tmp_path / 'c')!r}))\n"
        "for _ in range(2):\n"
        "    key = load_cached_key(*args, metric=m, params=p)\n"
        f"    read_submission(Path({str(sub_path)!r}), key=key, metric=m)\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# --- line numbers ------------------------------------------------------------------------------


def test_line_numbers_count_the_blank_lines_the_parser_skips(tmp_path):
    data = b"id,target\r\n\r\na,1\r\n\n\nb,2\n\rc,3\nd,4"
    source = sniff(_write(tmp_path, "s.csv", data), limits=IntakeLimits())
    assert line_numbers(source, np.array([0, 1, 3]), limits=IntakeLimits()) == {0: 3, 1: 6, 3: 8}


def test_line_numbers_across_chunk_boundaries(tmp_path, monkeypatch):
    from app.scoring import intake_source

    monkeypatch.setattr(intake_source, "_CHUNK", 7)
    rows = [f"r{i},{i}" for i in range(40)]
    data = ("id,target\n" + "\n\n".join(rows) + "\n").encode()
    source = sniff(_write(tmp_path, "s.csv", data), limits=IntakeLimits())
    limits = IntakeLimits()
    assert line_numbers(source, np.array([0, 1, 39]), limits=limits) == {0: 2, 1: 4, 39: 80}


def test_the_usage_column_must_name_a_board(tmp_path):
    path = _write(
        tmp_path, "k.csv", b"id,target,Usage\na,0,Public\nb,1,public\nc,0,Private\nd,1,\n"
    )
    with pytest.raises(IntakeError) as caught:
        read_answer_key(path, metric=AUC, params=NO_PARAMS)
    assert caught.value.kind == "bad_usage"
    assert (
        "2 row(s) hold '', 'public'" in caught.value.message and "'b', 'd'" in caught.value.message
    )


# --- files a newcomer sends by mistake: each named for what it is and where -----------------


@pytest.mark.parametrize(
    "data",
    [
        b'{"id": ["a", "b", "c", "d"], "target": [0.1, 0.2, 0.3, 0.4]}\n',  # to_json(orient=list)
        b'[{"id": "a", "target": 0.1}, {"id": "b", "target": 0.2}]',
        b'{\n  "id": {"0": "a"},\n  "target": {"0": 0.1}\n}\n',  # pretty-printed
        b'\xef\xbb\xbf  {"id": "a", "target": 0.1}\n{"id": "b", "target": 0.2}\n',  # JSON Lines
    ],
)
def test_a_json_file_is_named_as_json_with_the_header_expected(tmp_path, key, data):
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "sub.csv", data, key)
    assert caught.value.kind == "not_csv"
    assert caught.value.message.startswith("the file looks like JSON, not CSV")
    assert "header id, target" in caught.value.message
    assert '{"id"' not in caught.value.message  # no fragments quoted as "columns"


def test_json_inside_a_zip_names_the_member(tmp_path, key):
    data = _zip(("preds.json", b'[{"id": "a", "target": 0.1}]'))
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "sub.zip", data, key)
    assert caught.value.kind == "not_csv"
    assert "'preds.json' inside the .zip archive looks like JSON" in caught.value.message


def test_a_csv_whose_header_is_merely_odd_is_not_called_json(tmp_path, key):
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "sub.csv", b"id,prediction\na,0.1\n", key)
    assert caught.value.kind == "missing_columns"
    assert "JSON" not in caught.value.message


def test_an_excel_workbook_is_named_whatever_its_name_and_even_cut_short(tmp_path, key):
    workbook = _zip(
        ("[Content_Types].xml", b"<Types/>" * 50),
        ("xl/workbook.xml", b"<workbook/>" * 50),
        ("xl/worksheets/sheet1.xml", bytes(range(256)) * 8),
    )
    for name, data, damaged in (
        ("sub.xlsx", workbook, False),
        ("sub.csv", workbook, False),
        ("cut.xlsx", workbook[: len(workbook) // 2], True),
    ):
        with pytest.raises(IntakeError) as caught:
            _read(tmp_path, name, data, key)
        message = caught.value.message
        assert caught.value.kind == "not_text", message
        assert message.startswith("the file is an Excel workbook (.xlsx)"), message
        assert "export the sheet as CSV" in message and "damaged zip" not in message
        assert ("damaged or cut short" in message) is damaged


def test_a_broken_zip_that_is_no_office_file_says_so_and_how_to_send_a_csv(tmp_path, key):
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "sub.xlsx", b"PK\x03\x04" + b"not really" * 10, key)
    assert caught.value.kind == "bad_archive"
    assert "cannot be opened as one" in caught.value.message
    assert "export the sheet as CSV" in caught.value.message


def test_empty_cells_and_nan_in_one_column_are_both_named_with_their_lines(tmp_path, key):
    data = b"id,target\na,0.1\n\nb,NaN\nc,\nd,nan\n"
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "sub.csv", data, key)
    assert caught.value.kind == "empty_cells"
    assert caught.value.message == (
        "column 'target' has 1 empty cell(s) where a number is required: line 5 (id 'c'); it "
        "also has 2 NaN value(s) (every prediction must be a finite number): line 4 (id 'b'), "
        "line 6 (id 'd')"
    )


def test_duplicate_ids_are_named_with_the_lines_they_are_on(tmp_path, key):
    data = b"id,target\na,0.1\nb,0.2\n\nb,0.3\na,0.4\nc,0.5\nd,0.6\na,0.7\na,0.8\n"
    with pytest.raises(IntakeError) as caught:
        _read(tmp_path, "sub.csv", data, key)
    assert caught.value.kind == "duplicate_ids"
    assert caught.value.message.startswith(
        "2 id(s) appear more than once: 'a' (lines 2, 6, 9; 4 times), 'b' (lines 3, 5)"
    )
