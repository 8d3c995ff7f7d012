"""Checking an upload of code: what runs, and each way a zip or notebook is refused, by name."""

import stat
import zipfile
from pathlib import Path

import nbformat
import pytest

from app.coderun import code as code_module
from app.coderun.code import Entry, InvalidCode, check_code, unpack_code
from tests.coderun.conftest import make_zip

LIMIT = 20 * 1024**2


def _notebook() -> bytes:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("print(1)")]
    return nbformat.writes(notebook).encode()


def test_a_script_runs_under_its_own_name():
    assert check_code("solution.py", b"print(1)\n", max_bytes=LIMIT) == Entry(
        "script", "solution.py"
    )
    assert check_code("../../weird name$.py", b"x = 1\n", max_bytes=LIMIT) == Entry(
        "script", "main.py"
    )


def test_a_notebook_is_checked_as_a_notebook():
    assert check_code("a.ipynb", _notebook(), max_bytes=LIMIT) == Entry("notebook", "a.ipynb")
    with pytest.raises(InvalidCode, match="not JSON"):
        check_code("a.ipynb", b"print(1)", max_bytes=LIMIT)
    with pytest.raises(InvalidCode, match="not a valid Jupyter notebook|not a Jupyter notebook"):
        check_code(
            "a.ipynb",
            b'{"cells": 3, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}',
            max_bytes=LIMIT,
        )


def test_other_files_and_oversized_code_are_refused_by_name():
    with pytest.raises(InvalidCode, match=r"\.py.*\.ipynb.*\.zip"):
        check_code("predictions.csv", b"id,y\n", max_bytes=LIMIT)
    with pytest.raises(InvalidCode, match="at most 100 bytes"):
        check_code("main.py", b"#" * 101, max_bytes=100)
    with pytest.raises(InvalidCode, match="NUL"):
        check_code("main.py", b"print(1)\x00", max_bytes=LIMIT)


def test_a_zip_runs_main_py_else_its_one_notebook():
    both = make_zip({"main.py": "print(1)", "a.ipynb": _notebook()})
    assert check_code("c.zip", both, max_bytes=LIMIT) == Entry("script", "main.py")
    one = make_zip({"a.ipynb": _notebook(), "lib/util.py": "x = 1"})
    assert check_code("c.zip", one, max_bytes=LIMIT) == Entry("notebook", "a.ipynb")
    with pytest.raises(InvalidCode, match="2 notebooks"):
        check_code(
            "c.zip", make_zip({"a.ipynb": _notebook(), "b.ipynb": _notebook()}), max_bytes=LIMIT
        )
    with pytest.raises(InvalidCode, match="zip the folder's contents"):
        check_code("c.zip", make_zip({"project/main.py": "print(1)"}), max_bytes=LIMIT)
    with pytest.raises(InvalidCode, match="not a zip archive"):
        check_code("c.zip", b"PK\x03\x04 not really", max_bytes=LIMIT)


@pytest.mark.parametrize(
    "name",
    ["../evil.py", "/etc/evil.py", "a/../../evil.py", "C:/evil.py", "a\\..\\evil.py", "a//b.py"],
)
def test_a_zip_entry_that_would_escape_is_refused(name):
    with pytest.raises(InvalidCode, match="not a plain relative path"):
        check_code("c.zip", make_zip({"main.py": "print(1)", name: "x"}), max_bytes=LIMIT)


def _zip_with(info: zipfile.ZipInfo, content: bytes) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.py", "print(1)")
        archive.writestr(info, content)
    return buffer.getvalue()


def test_links_devices_and_encrypted_entries_are_refused():
    link = zipfile.ZipInfo("data.csv")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with pytest.raises(InvalidCode, match="symbolic link"):
        check_code("c.zip", _zip_with(link, b"/etc/passwd"), max_bytes=LIMIT)
    fifo = zipfile.ZipInfo("pipe")
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    with pytest.raises(InvalidCode, match="not a regular file"):
        check_code("c.zip", _zip_with(fifo, b""), max_bytes=LIMIT)
    # zipfile writes no encrypted entry: set the flag in the central directory by hand.
    plain = bytearray(make_zip({"main.py": "print(1)"}))
    central = plain.index(b"PK\x01\x02")
    plain[central + 8] |= 0x1
    with pytest.raises(InvalidCode, match="encrypted"):
        check_code("c.zip", bytes(plain), max_bytes=LIMIT)


def test_entry_counts_and_unpacked_sizes_are_bounded(monkeypatch, tmp_path):
    many = make_zip({f"f{i}.py": "" for i in range(code_module.MAX_ZIP_ENTRIES + 1)})
    with pytest.raises(InvalidCode, match="entries"):
        check_code("c.zip", many, max_bytes=LIMIT)
    monkeypatch.setattr(code_module, "MAX_UNPACKED_BYTES", 1000)
    # A bomb: 2 MB of zeros compress to a few KB.
    bomb = make_zip({"main.py": "print(1)", "zeros.bin": b"\0" * (2 * 1024**2)})
    assert len(bomb) < 10_000
    with pytest.raises(InvalidCode, match="unpack to more than 1000 bytes"):
        check_code("c.zip", bomb, max_bytes=LIMIT)


def test_a_zip_whose_header_understates_its_size_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(code_module, "MAX_UNPACKED_BYTES", 10_000)
    archive = bytearray(make_zip({"main.py": b"#" * 50_000}))
    # Rewrite both headers' uncompressed size to 10: the declared total passes the check.
    data = bytes(archive)
    with zipfile.ZipFile(__import__("io").BytesIO(data)) as z:
        declared = z.getinfo("main.py").file_size
    archive = bytearray(data.replace(declared.to_bytes(4, "little"), (10).to_bytes(4, "little")))
    with pytest.raises(InvalidCode):
        unpack_code("c.zip", bytes(archive), tmp_path / "code", max_bytes=LIMIT)


def test_unpacking_writes_files_anyone_may_read(tmp_path):
    dest = tmp_path / "code"
    dest.mkdir()
    archive = make_zip({"main.py": "print(1)", "pkg/util.py": "x = 1"})
    assert unpack_code("c.zip", archive, dest, max_bytes=LIMIT) == Entry("script", "main.py")
    assert (dest / "pkg" / "util.py").read_text() == "x = 1"
    for path in (dest / "main.py", dest / "pkg" / "util.py"):
        assert path.stat().st_mode & 0o777 == 0o644
    assert Path(dest / "pkg").stat().st_mode & 0o005 == 0o005


def test_data_file_names_the_layout_cannot_hold_are_refused_before_any_run(tmp_path):
    from app.coderun.limits import CodeLimits
    from app.coderun.runner import InputFile, run_code

    code = tmp_path / "main.py"
    code.write_text("pass\n")
    for name in ("../answer_key.csv", "a/b.csv", "..hidden", ".env"):
        with pytest.raises(ValueError, match="data file names"):
            run_code(
                code=code,
                filename="main.py",
                slug="demo",
                inputs=[InputFile(name, tmp_path / "x.csv")],
                limits=CodeLimits(),
                output_dir=tmp_path,
                max_output_bytes=1000,
                max_code_bytes=1000,
            )
