"""A participant's code as uploaded: a ``.py`` script, a ``.ipynb`` notebook, or a ``.zip`` holding
``main.py`` or exactly one notebook at its root. Checked at upload (a 4xx naming the problem) and
unpacked for a run, every budget enforced while reading: the upload's size, the zip's entries,
their unpacked size, names that would escape the folder, links, encrypted entries.
"""

import io
import json
import os
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

CodeKind = Literal["script", "notebook"]
ENTRY_SCRIPT = "main.py"
MAX_ZIP_ENTRIES = 1000
MAX_UNPACKED_BYTES = 256 * 1024**2  # a zip's files together, as written out for the run
MAX_NAME_CHARS = 255
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,200}$")
_CHUNK = 1 << 20


class InvalidCode(ValueError):
    """The upload cannot be run; the message tells the participant what to fix."""


@dataclass(frozen=True)
class Entry:
    """What to run: a script or a notebook, by its path inside the code folder."""

    kind: CodeKind
    path: str


def check_code(filename: str, data: bytes, *, max_bytes: int) -> Entry:
    """Check an upload without running it; return what a run would start. Raises
    :class:`InvalidCode` naming the problem."""
    return _read(filename, data, max_bytes=max_bytes, dest=None)


def unpack_code(filename: str, data: bytes, dest: Path, *, max_bytes: int) -> Entry:
    """Write the code's files into the empty folder ``dest`` (readable by anyone: the jail's
    user reads them) and return what to run."""
    return _read(filename, data, max_bytes=max_bytes, dest=dest)


def _read(filename: str, data: bytes, *, max_bytes: int, dest: Path | None) -> Entry:
    if len(data) > max_bytes:
        raise InvalidCode(
            f"the code is {len(data)} bytes; a code submission may be at most {max_bytes} bytes"
        )
    suffix = PurePosixPath(filename.lower()).suffix
    if suffix == ".py":
        name = _own_name(filename, ENTRY_SCRIPT)
        _check_script(data, name)
        _write(dest, name, data)
        return Entry("script", name)
    if suffix == ".ipynb":
        name = _own_name(filename, "notebook.ipynb")
        _check_notebook(data, name)
        _write(dest, name, data)
        return Entry("notebook", name)
    if suffix == ".zip":
        return _read_zip(data, dest)
    raise InvalidCode(
        f"'{filename[:100]}' is not code this phase runs: send a Python script (.py), a Jupyter "
        "notebook (.ipynb) or a .zip with main.py or one notebook at its root"
    )


def _own_name(filename: str, default: str) -> str:
    """The upload's own file name where it is a plain one (tracebacks then name the file the
    participant knows), else ``default``."""
    name = PurePosixPath(filename.replace("\\", "/")).name
    return name if _SAFE_NAME.match(name) else default


def _check_script(data: bytes, name: str) -> None:
    if b"\x00" in data:
        raise InvalidCode(f"{name} contains NUL bytes; it is not a Python script")


def _check_notebook(data: bytes, name: str) -> None:
    # Imported for a notebook only: nbformat and its JSON-schema validator cost a tenth of a
    # second at every start of a server, worker or command.
    import nbformat

    try:
        text = data.decode("utf-8-sig")
        notebook = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call]
        nbformat.validate(notebook)
    except UnicodeDecodeError:
        raise InvalidCode(f"{name} is not UTF-8 text; a notebook is a JSON file") from None
    except (json.JSONDecodeError, nbformat.reader.NotJSONError):
        raise InvalidCode(f"{name} is not a Jupyter notebook: it is not JSON") from None
    except nbformat.ValidationError as exc:
        raise InvalidCode(f"{name} is not a valid Jupyter notebook: {exc.message[:300]}") from None
    except Exception as exc:  # nbformat raises assorted errors for other malformed documents
        raise InvalidCode(f"{name} is not a Jupyter notebook: {str(exc)[:300]}") from None


def _write(dest: Path | None, name: str, data: bytes) -> None:
    if dest is None:
        return
    path = dest / name
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    path.write_bytes(data)
    path.chmod(0o644)


def _read_zip(data: bytes, dest: Path | None) -> Entry:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise InvalidCode("the .zip file cannot be read: it is not a zip archive") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            raise InvalidCode(
                f"the .zip holds {len(infos)} entries; at most {MAX_ZIP_ENTRIES} are allowed"
            )
        files: dict[str, zipfile.ZipInfo] = {}
        declared = 0
        for info in infos:
            name = _member_name(info)
            if info.is_dir():
                continue
            if name in files:
                raise InvalidCode(f"the .zip holds '{name}' twice")
            declared += info.file_size
            if declared > MAX_UNPACKED_BYTES:
                raise InvalidCode(
                    f"the .zip's files unpack to more than {MAX_UNPACKED_BYTES} bytes"
                )
            files[name] = info
        _refuse_file_as_folder(files, {_member_name(i).rstrip("/") for i in infos if i.is_dir()})
        entry = _zip_entry(files)
        if entry.kind == "notebook":
            _check_notebook(_member_bytes(archive, files[entry.path]), entry.path)
        if dest is not None:
            budget = [MAX_UNPACKED_BYTES]
            for name, info in files.items():
                _extract(archive, info, dest / name, budget)
    return entry


def _refuse_file_as_folder(files: dict[str, zipfile.ZipInfo], folders: set[str]) -> None:
    """A file ``a`` and an entry ``a/b`` cannot both be unpacked: the participant's zip is
    refused naming both, before anything is written (else the second one fails the run as if
    it were the platform's fault)."""
    for name in files:
        parts = name.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in files:
                raise InvalidCode(
                    f"the .zip holds '{parent}' as a file and '{name}' inside it; a file "
                    "cannot also be a folder"
                )
        if name in folders:
            raise InvalidCode(f"the .zip holds '{name}' as both a file and a folder")


def _member_name(info: zipfile.ZipInfo) -> str:
    raw = info.filename
    if info.flag_bits & 0x1:
        raise InvalidCode(f"'{raw[:100]}' in the .zip is encrypted; send it unencrypted")
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise InvalidCode(f"'{raw[:100]}' in the .zip is a symbolic link; links are not allowed")
    # Many zips carry no file type (only permissions): those are plain files.
    if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise InvalidCode(f"'{raw[:100]}' in the .zip is not a regular file or folder")
    path = PurePosixPath(raw)
    if (
        "\x00" in raw
        or "\\" in raw
        or path.is_absolute()
        or any(part in ("..", "") for part in raw.rstrip("/").split("/"))
        or (path.parts and ":" in path.parts[0])
        or len(raw) > 4 * MAX_NAME_CHARS
        or any(len(part) > MAX_NAME_CHARS for part in path.parts)
    ):
        raise InvalidCode(f"'{raw[:100]}' in the .zip is not a plain relative path")
    return str(path)


def _zip_entry(files: dict[str, zipfile.ZipInfo]) -> Entry:
    if ENTRY_SCRIPT in files:
        return Entry("script", ENTRY_SCRIPT)
    notebooks = sorted(n for n in files if "/" not in n and n.lower().endswith(".ipynb"))
    if len(notebooks) == 1:
        return Entry("notebook", notebooks[0])
    if len(notebooks) > 1:
        raise InvalidCode(
            f"the .zip has {len(notebooks)} notebooks at its root ({', '.join(notebooks[:5])}); "
            "keep exactly one, or add a main.py to run"
        )
    nested = sorted(
        n for n in files if n.endswith("/" + ENTRY_SCRIPT) or n.lower().endswith(".ipynb")
    )
    hint = f" (found {nested[0]}: zip the folder's contents, not the folder)" if nested else ""
    raise InvalidCode(f"the .zip has no main.py and no notebook at its root{hint}")


def _member_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    out = io.BytesIO()
    _copy(archive, info, out, [MAX_UNPACKED_BYTES])
    return out.getvalue()


def _extract(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, budget: list[int]
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    # O_EXCL and no following: nothing written before can redirect this file elsewhere.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        _copy(archive, info, out, budget)


def _copy(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    out: io.BytesIO | io.BufferedWriter,
    budget: list[int],
) -> None:
    """Decompress one member, counting what really comes out (not what its header declares)."""
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                budget[0] -= len(chunk)
                if budget[0] < 0:
                    raise InvalidCode(
                        f"the .zip's files unpack to more than {MAX_UNPACKED_BYTES} bytes"
                    )
                out.write(chunk)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        EOFError,
        zlib.error,
    ) as exc:
        raise InvalidCode(f"'{info.filename[:100]}' in the .zip cannot be read: {exc}") from None
