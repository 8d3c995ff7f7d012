"""Write tests/data/bad/: malformed submissions, each with the reason it must be refused for.

Run ``python tests/data/make_bad_corpus.py`` after changing this script and commit its output
with it; the files are never edited by hand. The output is deterministic (fixed timestamps in the
archives), so running it again on an unchanged script changes nothing.

``bad/manifest.json`` maps every file to the answer key and metric it is checked against, the
``kind`` of error it must raise and a fragment its message must contain. ``stage`` says which
layer refuses it: ``"intake"`` (an :class:`IntakeError` from reading the submission) or
``"metric"`` (the file reads fine but the metric refuses its values, e.g. out of range).
"""

import bz2
import codecs
import gzip
import io
import json
import lzma
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent / "bad"
STAMP = (2020, 1, 1, 0, 0, 0)

KEYS = {
    "binary": {
        "file": "keys/binary.csv",
        "metric": "roc_auc",
        "params": {},
        "rows": [
            ("r01", 0),
            ("r02", 1),
            ("r03", 0),
            ("r04", 1),
            ("r05", 1),
            ("r06", 0),
            ("r07", 1),
            ("r08", 0),
        ],
        "header": ("id", "target"),
    },
    "probability": {
        "file": "keys/binary.csv",
        "metric": "log_loss_binary",
        "params": {"eps": "auto"},
    },
    "labels": {
        "file": "keys/labels.csv",
        "metric": "macro_f1",
        "params": {},
        "rows": [
            ("a1", "cat"),
            ("a2", "dog"),
            ("a3", "bird"),
            ("a4", "cat"),
            ("a5", "dog"),
            ("a6", "NA"),
        ],
        "header": ("row_id", "label"),
    },
    "two_columns": {
        "file": "keys/two_columns.csv",
        "metric": "mean_columnwise_roc_auc",
        "params": {},
        "rows": [("m1", 0, 1), ("m2", 1, 0), ("m3", 0, 1), ("m4", 1, 1), ("m5", 0, 0)],
        "header": ("id", "toxic", "spam"),
    },
}
SCORES = ["0.12", "0.91", "0.33", "0.77", "0.68", "0.05", "0.59", "0.41"]

manifest: dict[str, dict] = {}


def lines(*rows: str, end: str = "\n") -> bytes:
    return "".join(row + end for row in rows).encode()


def good_rows() -> list[str]:
    return [f"r{i + 1:02d},{score}" for i, score in enumerate(SCORES)]


def with_cell(row: int, value: str) -> list[str]:
    rows = good_rows()
    rows[row] = f"r{row + 1:02d},{value}"
    return rows


def add(
    name: str,
    content: bytes,
    kind: str,
    message: str,
    *,
    key: str = "binary",
    stage: str = "intake",
) -> None:
    assert name not in manifest, name
    (OUT / name).write_bytes(content)
    manifest[name] = {"key": key, "kind": kind, "message": message, "stage": stage}


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zipped(*members: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(
                zipfile.ZipInfo(name, date_time=STAMP), data, compress_type=zipfile.ZIP_DEFLATED
            )
    return buffer.getvalue()


def zip_declaring(size: int, data: bytes) -> bytes:
    """A one-member ZIP64 archive whose member claims to unpack to ``size`` bytes.

    That is what a zip bomb declares. One that really unpacked to gigabytes would be megabytes
    here; intake must refuse it from the declared size alone, before unpacking anything.
    """
    name = b"predictions.csv"
    packed = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = packed.compress(data) + packed.flush()
    crc = zlib.crc32(data)
    dos_time, dos_date = 0, (2020 - 1980) << 9 | 1 << 5 | 1
    extra = struct.pack("<HHQQ", 0x0001, 16, size, len(body))
    local = (
        struct.pack(
            "<IHHHHHIIIHH",
            0x04034B50,
            45,
            0,
            8,
            dos_time,
            dos_date,
            crc,
            0xFFFFFFFF,
            0xFFFFFFFF,
            len(name),
            len(extra),
        )
        + name
        + extra
    )
    central = (
        struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            45,
            45,
            0,
            8,
            dos_time,
            dos_date,
            crc,
            0xFFFFFFFF,
            0xFFFFFFFF,
            len(name),
            len(extra),
            0,
            0,
            0,
            0,
            0,
        )
        + name
        + extra
    )
    offset = len(local) + len(body)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), offset, 0)
    raw = local + body + central + end
    with zipfile.ZipFile(io.BytesIO(raw)) as check:
        assert check.infolist()[0].file_size == size
    return raw


def write_keys() -> None:
    (OUT / "keys").mkdir(parents=True)
    for spec in KEYS.values():
        if "rows" not in spec:
            continue
        rows = [",".join(str(v) for v in row) for row in spec["rows"]]
        (OUT / spec["file"]).write_bytes(lines(",".join(spec["header"]), *rows))


def encodings_and_content() -> None:
    # "file is empty": the service's upload layer says "the uploaded file is empty" itself.
    add("empty.csv", b"", "empty_file", "file is empty")
    add("only_blank_lines.csv", b"\n\n  \r\n\t\n", "empty_file", "file is empty")
    add("bom_only.csv", codecs.BOM_UTF8 + b"\r\n", "empty_file", "file is empty")
    add(
        "html_page.csv",
        lines("<!DOCTYPE html>", "<html><body>Not found</body></html>"),
        "not_csv",
        "the file looks like an HTML page, not CSV; expected a CSV file whose first line is the "
        "header id, target",
    )
    # A data frame written with to_json(orient="list"), and one record per line (JSON Lines).
    ids = [f"r{i + 1:02d}" for i in range(8)]
    as_json = json.dumps({"id": ids, "target": [float(v) for v in SCORES]}).encode()
    add("json_named_csv.csv", as_json + b"\n", "not_csv", "the file looks like JSON, not CSV")
    records = [json.dumps({"id": i, "target": float(v)}) for i, v in zip(ids, SCORES, strict=True)]
    add("json_lines.jsonl", lines(*records), "not_csv", "looks like JSON, not CSV")
    add("header_only.csv", lines("id,target"), "no_rows", "no data rows")
    add(
        "header_only_bom_crlf.csv",
        codecs.BOM_UTF8 + lines("id,target", end="\r\n"),
        "no_rows",
        "no data rows",
    )
    latin1 = lines("id,target", "r01,0.12", "r02,0.91").replace(b"r02", "r\xe902".encode("latin-1"))
    add("latin1_id.csv", latin1, "not_utf8", "line 3")
    add(
        "latin1_header.csv", "id,prédiction\nr01,0.5\n".encode("latin-1"), "not_utf8", "header line"
    )
    late = lines("id,target", *good_rows()[:6]) + "r07,0.5\nr08,0.4 é\n".encode("cp1252")
    add("cp1252_late_in_file.csv", late, "not_utf8", "line 9")
    add("utf16.csv", "id,target\nr01,0.5\n".encode("utf-16"), "not_utf8", "UTF-16")
    add(
        "nul_bytes.csv",
        b"id,target\nr01,0.5\x00\x00\x00\x00\nr02\x00,1\n",
        "not_text",
        "binary data",
    )
    add("png_named_csv.csv", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "not_text", "PNG image")
    add("parquet_named_csv.csv", b"PAR1" + bytes(200) + b"PAR1", "not_text", "Parquet")
    add("xls_named_csv.csv", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512), "not_text", "Excel")
    add("pdf_named_csv.csv", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "not_text", "PDF")
    xlsx = zipped(("[Content_Types].xml", b"<Types/>"), ("xl/workbook.xml", b"<workbook/>"))
    add("xlsx_named_csv.csv", xlsx, "not_text", "Excel workbook (.xlsx), not a CSV file; export")
    # A workbook cut short (its directory at the end is gone): still an Excel file, not a zip.
    sheet = zipped(
        ("[Content_Types].xml", b"<Types/>" * 40),
        ("xl/workbook.xml", b"<workbook/>" * 40),
        ("xl/worksheets/sheet1.xml", bytes(range(256)) * 8),
    )
    add(
        "xlsx_truncated.xlsx",
        sheet[: len(sheet) // 2],
        "not_text",
        "Excel workbook (.xlsx), damaged or cut short, not a CSV file; export the sheet as CSV",
    )
    # Written by hand or by another library: the workbook's parts without [Content_Types].xml.
    bare = zipped(("xl/workbook.xml", b"<workbook/>"), ("xl/worksheets/sheet1.xml", b"<ws/>"))
    add("xlsx_without_content_types.xlsx", bare, "not_text", "Excel workbook (.xlsx)")
    ods = zipped(
        ("mimetype", b"application/vnd.oasis.opendocument.spreadsheet"), ("content.xml", b"<x/>")
    )
    add("ods_spreadsheet.ods", ods, "not_text", "OpenDocument spreadsheet, not a CSV file")


def archives() -> None:
    body = lines("id,target", *good_rows())
    add("bzip2.csv.bz2", bz2.compress(body), "unsupported_format", "bzip2")
    add("xz.csv.xz", lzma.compress(body), "unsupported_format", "xz")
    add(
        "zip_two_csvs.zip",
        zipped(("a.csv", body), ("b.csv", body)),
        "bad_archive",
        "exactly one CSV file; it holds 2",
    )
    add("zip_empty.zip", zipped(), "bad_archive", "it holds 0")
    add(
        "zip_in_zip.zip",
        zipped(("inner.zip", zipped(("p.csv", body)))),
        "bad_archive",
        "another archive",
    )
    add("zip_bomb.zip", zip_declaring(5 * 1024**3, body), "too_large", "more than the limit")
    varied = lines(
        "id,target", *[f"r{i:05d},{(i * 7919) % 10007 / 10007:.6f}" for i in range(4000)]
    )
    stream = gz(varied)
    add("gzip_truncated.csv.gz", stream[: len(stream) // 2], "bad_archive", "damaged or truncated")
    add("gzip_header_only.csv.gz", gz(lines("id,target")), "no_rows", "no data rows")
    add(
        "zip_with_nan.zip",
        zipped(("p.csv", lines("id,target", *with_cell(2, "nan")))),
        "nan_values",
        "line 4 (id 'r03')",
    )
    # Decided by content: a gzip stream called .zip, a zip called .csv.
    unknown = good_rows()[:-1] + ["zz9,0.5"]
    add("gzip_named_zip.zip", gz(lines("id,target", *unknown)), "unknown_ids", "'zz9'")
    add(
        "zip_named_csv.csv",
        zipped(("p.csv", lines("id,target", *good_rows()[1:]))),
        "missing_ids",
        "'r01'",
    )


def headers() -> None:
    rows = good_rows()
    add("no_header.csv", lines(*rows), "missing_header", "no header line")
    add(
        "header_case.csv", lines("ID,Target", *rows), "missing_columns", "case- and space-sensitive"
    )
    add("header_space.csv", lines("id, target", *rows), "missing_columns", "' target'")
    add(
        "missing_column.csv",
        lines("id", *[r.split(",")[0] for r in rows]),
        "missing_columns",
        "missing column(s) 'target'",
    )
    add(
        "extra_column.csv",
        lines("id,target,comment", *[r + ",ok" for r in rows]),
        "extra_columns",
        "unexpected column(s) 'comment'",
    )
    add(
        "repeated_column.csv",
        lines("id,target,target", *[r + ",1" for r in rows]),
        "bad_header",
        "repeats column(s) 'target'",
    )
    add(
        "empty_column_name.csv",
        lines("id,target,", *[r + "," for r in rows]),
        "bad_header",
        "empty column name",
    )
    add(
        "semicolon_separated.csv",
        lines("id;target", *[r.replace(",", ";") for r in rows]),
        "bad_header",
        "another separator",
    )
    add(
        "tab_separated.csv",
        lines("id\ttarget", *[r.replace(",", "\t") for r in rows]),
        "bad_header",
        "another separator",
    )
    add(
        "two_columns_missing_one.csv",
        lines("id,toxic", "m1,0.5", "m2,0.5", "m3,0.5"),
        "missing_columns",
        "'spam'",
        key="two_columns",
    )


def rows_and_ids() -> None:
    rows = good_rows()
    add(
        "ragged_extra_field.csv",
        lines("id,target", *rows[:2], "r03,0.33,x", *rows[3:]),
        "ragged_row",
        "line 4 has 3",
    )
    add(
        "ragged_short_row.csv",
        lines("id,target", *rows[:4], "r05", *rows[5:]),
        "ragged_row",
        "line 6 has 1",
    )
    add(
        "decimal_comma.csv",
        lines("id,target", *[r.replace(".", ",") for r in rows]),
        "ragged_row",
        "decimal comma",
    )
    add(
        "duplicate_ids.csv",
        lines("id,target", *rows[:3], "r03,0.4", *rows[4:]),
        "duplicate_ids",
        "1 id(s) appear more than once: 'r03' (lines 4, 5)",
    )
    add(
        "duplicate_ids_many.csv",
        lines("id,target", *rows, "", "r01,0.5", "r02,0.5", "r01,0.4", "r01,0.3"),
        "duplicate_ids",
        "2 id(s) appear more than once: 'r01' (lines 2, 11, 13; 4 times), 'r02' (lines 3, 12)",
    )
    add(
        "unknown_id.csv",
        lines("id,target", *rows[:-1], "zz9,0.41"),
        "unknown_ids",
        "1 id(s) not in the answer key: line 9 (id 'zz9')",
    )
    add(
        "missing_id.csv",
        lines("id,target", *rows[:-1]),
        "missing_ids",
        "1 id(s) of the answer key are missing: 'r08'",
    )
    add("extra_row.csv", lines("id,target", *rows, "r09,0.5"), "unknown_ids", "'r09'")
    add(
        "id_trailing_space.csv",
        lines("id,target", rows[0], "r02 ,0.91", *rows[2:]),
        "unknown_ids",
        "'r02 '",
    )
    add("id_wrong_case.csv", lines("id,target", "R01,0.12", *rows[1:]), "unknown_ids", "'R01'")
    add(
        "ids_blank_line_offsets.csv",
        lines("id,target", *rows[:2], "", "", *rows[2:-1], "nope,0.3"),
        "unknown_ids",
        "line 11 (id 'nope')",
    )
    add(
        "labels_unknown_id.csv",
        lines("row_id,label", "a1,cat", "a2,dog", "a3,bird", "a4,cat", "a5,dog", "a7,NA"),
        "unknown_ids",
        "'a7'",
        key="labels",
    )


def cells() -> None:
    def sub(*rows: str) -> bytes:
        return lines("id,target", *rows)

    add("empty_prediction.csv", sub(*with_cell(2, "")), "empty_cells", "line 4 (id 'r03')")
    add(
        "non_numeric_word.csv",
        sub(*with_cell(1, "high")),
        "non_numeric",
        "line 3 (id 'r02', value 'high')",
    )
    add("na_literal.csv", sub(*with_cell(4, "NA")), "non_numeric", "value 'NA'")
    add("percent.csv", sub(*with_cell(0, "50%")), "non_numeric", "value '50%'")
    add("hex_number.csv", sub(*with_cell(3, "0x1F")), "non_numeric", "value '0x1F'")
    add("nan.csv", sub(*with_cell(5, "NaN")), "nan_values", "1 NaN value(s)")
    nan_and_empty = with_cell(2, "")
    nan_and_empty[5] = nan_and_empty[5].split(",")[0] + ",NaN"
    add(
        "nan_and_empty.csv",
        sub(*nan_and_empty),
        "empty_cells",
        "column 'target' has 1 empty cell(s) where a number is required: line 4 (id 'r03'); "
        "it also has 1 NaN value(s) (every prediction must be a finite number): line 7 (id 'r06')",
    )
    add("inf.csv", sub(*with_cell(6, "inf")), "infinite_values", "line 8 (id 'r07', value inf)")
    add("neg_inf.csv", sub(*with_cell(0, "-Infinity")), "infinite_values", "value -inf")
    many_nan = [f"r{i + 1:02d},nan" for i in range(8)]
    add("all_nan.csv", sub(*many_nan), "nan_values", "(and 3 more)")
    add(
        "empty_label.csv",
        lines("row_id,label", "a1,cat", "a2,", "a3,bird", "a4,cat", "a5,dog", "a6,NA"),
        "empty_cells",
        "line 3 (id 'a2')",
        key="labels",
    )
    add(
        "probability_out_of_range.csv",
        sub(*with_cell(3, "1.7")),
        "metric_input",
        "probabilities must lie in [0, 1]",
        key="probability",
        stage="metric",
    )


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    write_keys()
    encodings_and_content()
    archives()
    headers()
    rows_and_ids()
    cells()
    keys = {name: {k: spec[k] for k in ("file", "metric", "params")} for name, spec in KEYS.items()}
    document = {"keys": keys, "files": dict(sorted(manifest.items()))}
    (OUT / "manifest.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {len(manifest)} malformed files to {OUT}")


if __name__ == "__main__":
    main()
