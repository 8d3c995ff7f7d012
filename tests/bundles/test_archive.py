"""The bounded bundle reader: what escapes is refused, what is too big stops while it is read."""

import io
import os
import struct
import zipfile
from pathlib import Path

import pytest

from app.bundles.archive import CHUNK, Budget, Limits, open_bundle, read_zip
from app.bundles.errors import BundleError
from tests.bundles.builders import make_zip, symlink_zip


def test_entries_are_read_with_slash_paths_and_macosx_junk_dropped() -> None:
    tree = open_bundle(make_zip({"a/b.txt": "x", "c.txt": "y"}, macosx=True))
    assert dict(tree.files) == {"a/b.txt": b"x", "c.txt": b"y"}


@pytest.mark.parametrize(
    "name", ["../evil.py", "a/../../evil.py", "/etc/passwd", "C:/win.ini", "..\\evil.py"]
)
def test_an_entry_that_escapes_is_refused(name: str) -> None:
    with pytest.raises(BundleError, match="absolute path|escapes its folder") as caught:
        open_bundle(make_zip({name: "x"}), name="hostile.zip")
    assert caught.value.file == "hostile.zip"


def test_a_symlink_entry_is_refused() -> None:
    with pytest.raises(BundleError, match="symbolic link"):
        open_bundle(symlink_zip("scoring_program/ref", "/etc/passwd"))


def test_a_symlink_in_a_directory_bundle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "competition.yaml").write_text("title: x\n")
    os.symlink("/etc/passwd", tmp_path / "terms.md")
    with pytest.raises(BundleError, match="symbolic link"):
        open_bundle(tmp_path)


def test_too_many_entries_are_refused_before_any_is_read() -> None:
    data = make_zip({f"f{i}.txt": "x" for i in range(20)})
    with pytest.raises(BundleError, match="more than 10 entries"):
        open_bundle(data, limits=Limits(max_entries=10))


def test_a_zip_bomb_stops_at_the_first_chunk_past_the_budget() -> None:
    # 64 MiB of zeros compress to about 64 KiB; the budget is 1 MiB.
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("bomb.bin", "w", force_zip64=True) as stream:
            for _ in range(64):
                stream.write(bytes(1 << 20))
    budget = Budget(Limits(max_total_bytes=1 << 20))
    with pytest.raises(BundleError, match="uncompresses to more than"):
        read_zip(out.getvalue(), budget=budget, origin="bomb.zip")
    # Refused on the header's claim, before a byte was inflated.
    assert budget.bytes_left == (1 << 20) - (64 << 20)


def test_a_header_that_understates_the_size_inflates_no_more_than_it_claims() -> None:
    data = bytearray(make_zip({"big.bin": bytes(64 * CHUNK)}))
    struct.pack_into("<I", data, 22, 10)  # the local header's uncompressed size
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 10)  # and the central directory's
    budget = Budget(Limits(max_total_bytes=4 * CHUNK))
    with pytest.raises(BundleError, match="cannot be read"):
        read_zip(bytes(data), budget=budget, origin="liar.zip")
    assert budget.bytes_left >= 4 * CHUNK - 10


def test_zips_nested_deeper_than_the_limit_are_refused() -> None:
    inner = make_zip({"x.txt": "x"})
    for _ in range(3):
        inner = make_zip({"inner.zip": inner})
    tree = open_bundle(inner, limits=Limits(max_depth=2))
    level1 = tree.member("inner.zip", field="data")
    level2 = level1.member("inner.zip", field="data")
    with pytest.raises(BundleError, match="nest deeper"):
        level2.member("inner.zip", field="data")


def test_nested_zips_share_one_budget() -> None:
    inner = make_zip({"data.bin": bytes(600_000)})
    tree = open_bundle(
        make_zip({"a.zip": inner, "b.zip": inner}), limits=Limits(max_total_bytes=1_000_000)
    )
    tree.member("a.zip", field="a")
    with pytest.raises(BundleError, match="uncompresses to more than"):
        tree.member("b.zip", field="b")


def test_an_entry_given_twice_is_read_as_unzipping_leaves_it_the_later_one_named() -> None:
    # Codabench's own tests/test_files/competitions/competition_15.zip holds
    # scoring_program/data_converter.py twice; Codabench unzips it (the later copy stays).
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive, pytest.warns(UserWarning):
        archive.writestr("metadata", "command: a")
        archive.writestr("metadata", "command: b")
    tree = open_bundle(out.getvalue(), name="twice.zip")
    assert tree.files["metadata"] == b"command: b"
    assert tree.budget.notes == [
        "twice.zip: entry 'metadata' appears twice; the later one is used, as unzipping it leaves it"
    ]


def test_not_a_zip_is_named() -> None:
    with pytest.raises(BundleError, match="not a readable zip") as caught:
        open_bundle(b"this is not a zip", name="upload.zip")
    assert caught.value.status_code == 422


def test_a_wrapping_folder_is_unwrapped_only_when_it_holds_the_marker() -> None:
    tree = open_bundle(make_zip({"competition.yaml": "x", "pages/a.md": "y"}, wrap="my_bundle"))
    inner = tree.unwrap(["competition.yaml"])
    assert "competition.yaml" in inner.files
    assert inner.origin == "bundle.zip/my_bundle"
    other = open_bundle(make_zip({"notes.txt": "x"}, wrap="folder"))
    assert other.unwrap(["competition.yaml"]) is other


def test_evaluation_script_zip_falls_back_to_the_folder_of_that_name() -> None:
    tree = open_bundle(make_zip({"evaluation_script/__init__.py": "", "challenge_config.yaml": ""}))
    assert "__init__.py" in tree.member("evaluation_script.zip", field="evaluation_script").files


def test_a_member_that_is_not_there_is_named() -> None:
    tree = open_bundle(make_zip({"competition.yaml": ""}))
    with pytest.raises(BundleError, match="'program.zip' is not in the bundle") as caught:
        tree.member("program.zip", field="phases.1.scoring_program")
    assert caught.value.field == "phases.1.scoring_program"
