"""A bundle's files, read under a budget: a zip (zips inside it too) or a directory, into memory.

Bundles are hostile input. An entry that would escape its folder (``../``, an absolute path, a
drive letter) or is a symlink is refused; the number of entries, the bytes uncompressed and how
deep zips nest are counted against one budget *while* reading, so a zip bomb stops at the first
chunk past the limit, not after it was inflated. ``__MACOSX/`` and ``.DS_Store`` are dropped, as
every platform does.
"""

from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.bundles.errors import BundleError

CHUNK = 1 << 16
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Limits:
    max_total_bytes: int = 512 << 20
    max_entries: int = 20_000
    max_depth: int = 3  # a zip inside a zip inside the bundle is depth 2


class Budget:
    """What is left to read, shared by a bundle and every zip found inside it."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bytes_left = limits.max_total_bytes
        self.entries_left = limits.max_entries
        # What was read other than as written, for the import's warnings.
        self.notes: list[str] = []

    def take_entries(self, n: int, origin: str) -> None:
        self.entries_left -= n
        if self.entries_left < 0:
            raise BundleError(
                f"holds more than {self.limits.max_entries} entries in all", file=origin
            )

    def take_bytes(self, n: int, origin: str) -> None:
        self.bytes_left -= n
        if self.bytes_left < 0:
            raise BundleError(
                f"uncompresses to more than {self.limits.max_total_bytes} bytes in all",
                file=origin,
            )


def _ignored(path: str) -> bool:
    parts = path.split("/")
    return (
        parts[0] == "__MACOSX"
        or parts[-1] in (".DS_Store", "Thumbs.db")
        or (parts[-1].startswith("._"))
    )


def clean_path(name: str, *, origin: str) -> str:
    """``name`` as a relative path with ``/`` separators, or a BundleError if it escapes."""
    name = name.replace("\\", "/")
    if name.startswith("/") or _DRIVE.match(name):
        raise BundleError(f"entry {name!r} has an absolute path", file=origin)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BundleError(f"entry {name!r} escapes its folder", file=origin)
    return "/".join(parts)


@dataclass(frozen=True)
class Tree:
    """Files by relative path, with where they came from (for messages) and the shared budget."""

    files: Mapping[str, bytes]
    origin: str
    budget: Budget
    depth: int = 0

    def _clean(self, path: str, field: str | None) -> str:
        try:
            return clean_path(path, origin=self.origin)
        except BundleError as exc:
            # A path written in the config: name the field that wrote it.
            raise BundleError(
                f"{path!r} points outside the bundle", file=self.origin, field=field
            ) from exc

    def get(self, path: str, *, field: str | None = None) -> bytes | None:
        return self.files.get(self._clean(path, field))

    def is_dir(self, path: str, *, field: str | None = None) -> bool:
        prefix = self._clean(path, field) + "/"
        return prefix != "/" and any(p.startswith(prefix) for p in self.files)

    def subtree(self, path: str) -> Tree:
        prefix = clean_path(path, origin=self.origin)
        if not prefix:
            return self
        prefix += "/"
        return Tree(
            files={p[len(prefix) :]: d for p, d in self.files.items() if p.startswith(prefix)},
            origin=f"{self.origin}/{prefix[:-1]}",
            budget=self.budget,
            depth=self.depth,
        )

    def exists(self, path: str, *, field: str | None = None) -> bool:
        return self.get(path, field=field) is not None or self.is_dir(path, field=field)

    def member(self, path: str, *, field: str) -> Tree:
        """A data member named by the config: a zip (opened, counted one level deeper) or a
        directory (``evaluation_script/`` given as a folder, as EvalAI-Starters does)."""
        if not isinstance(path, str) or not path.strip():
            raise BundleError(
                "must name a file or folder of the bundle", file=self.origin, field=field
            )
        data = self.get(path, field=field)
        if data is not None:
            if not zipfile.is_zipfile(io.BytesIO(data)):
                raise BundleError(f"{path!r} is not a zip file", file=self.origin, field=field)
            return read_zip(
                data,
                budget=self.budget,
                origin=f"{self.origin}/{self._clean(path, field)}",
                depth=self.depth + 1,
            )
        if self.is_dir(path):
            return self.subtree(path)
        # EvalAI-Starters: the YAML says evaluation_script.zip, the repository holds the folder.
        if path.endswith(".zip") and self.is_dir(path[:-4]):
            return self.subtree(path[:-4])
        raise BundleError(f"{path!r} is not in the bundle", file=self.origin, field=field)

    def unwrap(self, markers: Iterable[str]) -> Tree:
        """Descend into one wrapping folder when the markers are not at the root but are in it
        (the host zipped the folder rather than its contents)."""
        markers = tuple(markers)
        if any(m in self.files for m in markers):
            return self
        tops = {p.split("/", 1)[0] for p in self.files}
        if len(tops) == 1:
            (top,) = tops
            inner = self.subtree(top)
            if any(m in inner.files for m in markers):
                return inner
        return self

    def python_files(self) -> dict[str, bytes]:
        return {p: d for p, d in self.files.items() if p.endswith(".py")}


def read_zip(data: bytes, *, budget: Budget, origin: str, depth: int = 0) -> Tree:
    if depth > budget.limits.max_depth:
        raise BundleError(f"zips nest deeper than {budget.limits.max_depth} levels", file=origin)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"is not a readable zip file ({exc})", file=origin) from None
    with archive:
        infos = archive.infolist()
        budget.take_entries(len(infos), origin)
        files: dict[str, bytes] = {}
        for info in infos:
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise BundleError(f"entry {info.filename!r} is a symbolic link", file=origin)
            path = clean_path(info.filename, origin=origin)
            if info.is_dir() or not path or _ignored(path):
                continue
            if path in files:
                # Python's zipfile (Codabench's unpacker) extracts both, the later one last:
                # that one is what the platform ran (Codabench's own competition_15.zip).
                budget.notes.append(
                    f"{origin}: entry {path!r} appears twice; the later one is used, as "
                    "unzipping it leaves it"
                )
            # The header's size is a claim; it is checked first (a cheap early stop) and the
            # bytes actually inflated are counted as they come.
            if info.file_size > budget.bytes_left:
                budget.take_bytes(info.file_size, origin)
            files[path] = _read_entry(archive, info, budget, origin)
        folders = {clean_path(i.filename, origin=origin) for i in infos if i.is_dir()}
    _refuse_file_as_folder(files, folders, origin)
    return Tree(files=files, origin=origin, budget=budget, depth=depth)


def _refuse_file_as_folder(files: Mapping[str, bytes], folders: set[str], origin: str) -> None:
    """A file ``a`` beside an entry ``a/b`` (or a folder entry ``a/``) cannot both be written
    out: whichever comes second fails where the files are laid out for a run. Refused here,
    naming both, so a bundle is a 422 and a submission the participant's own failure."""
    for path in sorted(files):
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in files:
                raise BundleError(
                    f"entry {path!r} is inside {parent!r}, which is also a file: a zip cannot "
                    "hold both",
                    file=origin,
                )
        if path in folders:
            raise BundleError(
                f"entry {path!r} is both a file and a folder: a zip cannot hold both", file=origin
            )


def _read_entry(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget, origin: str
) -> bytes:
    out: list[bytes] = []
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(CHUNK):
                budget.take_bytes(len(chunk), origin)
                out.append(chunk)
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError) as exc:
        # Encrypted entries, unknown compression methods and corrupt data all land here.
        raise BundleError(f"entry {info.filename!r} cannot be read ({exc})", file=origin) from None
    return b"".join(out)


def read_directory(root: Path, *, budget: Budget) -> Tree:
    origin = root.name or str(root)
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            if os.path.islink(os.path.join(dirpath, name)):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                raise BundleError(f"entry {rel!r} is a symbolic link", file=origin)
        budget.take_entries(len(filenames), origin)
        for name in filenames:
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            if _ignored(rel):
                continue
            with open(full, "rb") as stream:
                out = bytearray()
                while chunk := stream.read(CHUNK):
                    budget.take_bytes(len(chunk), origin)
                    out += chunk
            files[rel] = bytes(out)
        dirnames[:] = [d for d in dirnames if not (d == "__MACOSX" or d == ".git")]
    return Tree(files=files, origin=origin, budget=budget)


def open_bundle(
    source: Path | bytes, *, limits: Limits | None = None, name: str = "bundle.zip"
) -> Tree:
    """A bundle given as a zip's bytes, a ``.zip`` path or a directory."""
    budget = Budget(limits or Limits())
    if isinstance(source, bytes):
        return read_zip(source, budget=budget, origin=name)
    if source.is_dir():
        return read_directory(source, budget=budget)
    size = source.stat().st_size
    # A compressed file larger than everything it may hold is refused before it is read.
    if size > budget.limits.max_total_bytes:
        raise BundleError(f"is larger than {budget.limits.max_total_bytes} bytes", file=source.name)
    return read_zip(source.read_bytes(), budget=budget, origin=source.name)


def unzip_submission(
    data: bytes, *, limits: Limits | None = None, name: str = "submission"
) -> dict[str, bytes] | None:
    """A submission's files if it is a zip (as Codabench unzips results into ``input/res``),
    else None. Same rules as a bundle."""
    if not zipfile.is_zipfile(io.BytesIO(data)):
        return None
    tree = read_zip(data, budget=Budget(limits or Limits()), origin=name)
    return dict(tree.files)
