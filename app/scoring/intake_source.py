"""Where a CSV's bytes come from: a plain file, a gzip stream or the one member of a zip archive.

The format is decided by the first bytes, never by the file name. Every file, compressed or not,
is read as a stream through :class:`LimitedReader`, which enforces the budget while it reads:
bytes (after decompression), lines and the length of any one line. An archive bomb, a file of
a billion tiny rows or one endless line is therefore refused after at most its budget of bytes,
and nothing is ever unpacked to disk. The slow diagnostics (where is the first byte that is not
UTF-8, which line holds data row 1234) live here too; they run only once a file has already
been found wrong.
"""

import codecs
import gzip
import io
import os
import re
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

import numpy as np

from app.scoring.intake_errors import IntakeError, first_few

HEAD_BYTES = 1 << 20  # how much of a file the quick checks look at
_CHUNK = 1 << 22

_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
# Formats people upload by mistake, and what to tell them.
_OTHER_MAGICS = (
    (b"BZh", "unsupported_format", "compressed with bzip2"),
    (b"\xfd7zXZ\x00", "unsupported_format", "compressed with xz"),
    (b"\x28\xb5\x2f\xfd", "unsupported_format", "compressed with zstd"),
    (b"7z\xbc\xaf\x27\x1c", "unsupported_format", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "unsupported_format", "a RAR archive"),
    (b"PAR1", "not_text", "a Parquet file"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "not_text", "an old Excel (.xls) workbook"),
    (b"%PDF", "not_text", "a PDF document"),
    (b"\x89PNG", "not_text", "a PNG image"),
    (b"\xff\xd8\xff", "not_text", "a JPEG image"),
    (b"\x93NUMPY", "not_text", "a NumPy .npy file"),
    (b"\x80\x04\x95", "not_text", "a Python pickle"),
)
ACCEPTED = "a .csv file, a gzip-compressed .csv.gz, or a .zip holding exactly one CSV file"
EXPORT_CSV = "export the sheet as CSV (Save As › 'CSV UTF-8') and send that"
# Office documents are zip archives; their members say which program wrote them.
_OFFICE_MEMBERS = (
    (b"xl/", "an Excel workbook (.xlsx)"),
    (b"word/", "a Word document (.docx)"),
    (b"ppt/", "a PowerPoint presentation (.pptx)"),
    (b"mimetypeapplication/vnd.oasis.opendocument.spreadsheet", "an OpenDocument spreadsheet"),
    (b"mimetypeapplication/vnd.oasis.opendocument", "an OpenDocument file"),
    (b"[Content_Types].xml", "an Excel or other Office document"),
)
# Text that is plainly another format than CSV, by its first characters.
_JSON_START = re.compile(rb'(\{\s*("|\}|$)|\[\s*(\{|\[|"|-?\d|\]|true|false|null|$))')


@dataclass(frozen=True)
class IntakeLimits:
    """How much a file may hold; the service fills these from its settings.

    ``why`` finishes the sentence "more than …" in the messages when a limit is not the
    configured one but derived from the answer key (see :func:`for_submission`).
    """

    max_rows: int = 50_000_000
    max_decompressed_bytes: int = 4 * 1024 * 1024 * 1024
    max_line_bytes: int = 1 << 20
    max_columns: int = 10_000
    why: str = ""

    @property
    def max_lines(self) -> int:
        """Line breaks a file may hold: a header, the rows and some blank lines."""
        return self.max_rows + 1 + min(self.max_rows // 10 + 100, 100_000)


DEFAULT_LIMITS = IntakeLimits()


@dataclass(frozen=True)
class Source:
    """An opened upload: the path, how its content is stored and, for plain files, its size."""

    path: Path
    container: str  # "plain", "gzip" or "zip"
    member: str | None = None  # the CSV's name inside a zip


def sniff(path: Path, *, limits: IntakeLimits) -> Source:
    """Decide the container from the first bytes and check what can be checked without reading on."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            magic = fh.read(8)
    except OSError as exc:
        raise IntakeError(f"the file cannot be read: {exc.strerror}", kind="bad_csv") from None
    if size == 0:
        raise IntakeError("the file is empty", kind="empty_file")
    if magic.startswith(_GZIP_MAGIC):
        return Source(path, "gzip")
    if magic.startswith(_ZIP_MAGICS):
        return Source(path, "zip", _zip_member(path, limits=limits))
    for prefix, kind, what in _OTHER_MAGICS:
        if magic.startswith(prefix):
            raise IntakeError(f"the file is {what}, not a CSV file; send {ACCEPTED}", kind=kind)
    if size > limits.max_decompressed_bytes:
        why = f" ({limits.why})" if limits.why else ""
        raise IntakeError(
            f"the file holds {size:,} bytes, more than the limit of "
            f"{limits.max_decompressed_bytes:,}{why}",
            kind="too_large",
        )
    return Source(path, "plain")


def office_document(names: list[bytes]) -> str | None:
    """Which Office document a zip with these member names is ("an Excel workbook (.xlsx)"), or
    None. Members of an OpenDocument file come as ``mimetype`` followed by its content."""
    for prefix, what in _OFFICE_MEMBERS:
        if any(name.startswith(prefix) for name in names):
            return what
    return None


def _office_refusal(what: str, *, damaged: bool = False) -> IntakeError:
    state = ", damaged or cut short," if damaged else ","
    spreadsheet = "spreadsheet" in what or "Excel" in what
    hint = EXPORT_CSV if spreadsheet else f"send {ACCEPTED}"
    return IntakeError(f"the file is {what}{state} not a CSV file; {hint}", kind="not_text")


def _local_member_names(path: Path) -> list[bytes]:
    """The member names written in the local headers of a zip's first bytes: readable even when
    the archive is cut short or its directory is damaged."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    names = []
    for found in re.finditer(rb"PK\x03\x04", head):
        start = found.start()
        if start + 30 > len(head):
            break
        name_length = int.from_bytes(head[start + 26 : start + 28], "little")
        extra_length = int.from_bytes(head[start + 28 : start + 30], "little")
        name = head[start + 30 : start + 30 + name_length]
        if name == b"mimetype":  # stored uncompressed: its content follows the header
            content = start + 30 + name_length + extra_length
            name += head[content : content + 100]
        names.append(name)
    return names


def _zip_member(path: Path, *, limits: IntakeLimits) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            names = [info.filename.encode() for info in infos]
            kind = next((i for i in infos if i.filename == "mimetype" and i.file_size < 100), None)
            if kind is not None:  # OpenDocument: the member's content names the kind
                names.append(b"mimetype" + zf.read(kind))
    except (
        zipfile.BadZipFile,
        OSError,
        EOFError,
        zlib.error,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        what = office_document(_local_member_names(path))
        if what is not None:
            raise _office_refusal(what, damaged=True) from None
        raise IntakeError(
            f"the file starts like a .zip archive but cannot be opened as one ({exc}); send "
            f"{ACCEPTED}; from a spreadsheet program, {EXPORT_CSV}",
            kind="bad_archive",
        ) from None
    what = office_document(names)
    if what is not None:
        raise _office_refusal(what)
    # Folders and the resource forks macOS adds to every archive are not content.
    files = [
        info
        for info in infos
        if not info.is_dir()
        and not info.filename.startswith("__MACOSX/")
        and os.path.basename(info.filename) != ".DS_Store"
    ]
    if len(files) != 1:
        listed = first_few([i.filename for i in files]) or "nothing"
        raise IntakeError(
            f"the .zip archive must hold exactly one CSV file; it holds {len(files)}: {listed}",
            kind="bad_archive",
        )
    info = files[0]
    if info.flag_bits & 0x1:
        raise IntakeError(
            "the .zip archive is encrypted; send it without a password", kind="bad_archive"
        )
    if info.file_size > limits.max_decompressed_bytes:
        why = f" ({limits.why})" if limits.why else ""
        raise IntakeError(
            f"the CSV inside the .zip would unpack to {info.file_size:,} bytes, more than the "
            f"limit of {limits.max_decompressed_bytes:,}{why}; it was refused without being "
            "unpacked",
            kind="too_large",
        )
    return info.filename


class LimitedReader(io.RawIOBase):
    """A read-only stream that enforces ``limits`` on what it yields, as it yields it.

    It refuses more than ``max_decompressed_bytes`` in total, more than ``max_lines`` line
    breaks and any line longer than ``max_line_bytes``. pyarrow pulls from it block by block;
    once a limit is passed the read raises, and the error is remembered in ``error`` because
    pyarrow may wrap what a Python stream raises. The checks cost a ``bytes.count`` and a few
    ``bytes.find`` calls per block, far less than parsing the block.
    """

    def __init__(self, raw: BinaryIO, *, limits: IntakeLimits, what: str) -> None:
        self._raw = raw
        self._limits = limits
        self._what = what
        self.count = 0
        self.lines = 0
        self._run = 0  # bytes since the last line break
        self.error: IntakeError | None = None

    def readable(self) -> bool:
        return True

    def _fail(self, message: str, kind: str) -> None:
        why = f" ({self._limits.why})" if self._limits.why else ""
        self.error = IntakeError(message + why, kind=kind)
        raise self.error

    def read(self, size: int = -1) -> bytes:
        limits = self._limits
        try:
            data = self._raw.read(
                size if size is not None and size >= 0 else limits.max_decompressed_bytes + 1
            )
        except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
            self.error = IntakeError(
                f"the {self._what} is damaged or truncated: {exc}", kind="bad_archive"
            )
            raise self.error from None
        self.count += len(data)
        if self.count > limits.max_decompressed_bytes:
            self._fail(
                f"the {self._what} holds more than the limit of "
                f"{limits.max_decompressed_bytes:,} bytes"
                + ("; it was refused without being unpacked" if self._what != "file" else ""),
                "too_large",
            )
        self.lines += data.count(b"\n")
        if self.lines > limits.max_lines:
            self._fail(
                f"the {self._what} holds more than {limits.max_lines:,} lines, more than the "
                f"limit of {limits.max_rows:,} rows allows",
                "too_many_rows",
            )
        self._check_line_lengths(data)
        return data

    def _check_line_lengths(self, data: bytes) -> None:
        limit = self._limits.max_line_bytes
        first = data.find(b"\n")
        if first < 0:
            self._run += len(data)
        else:
            self._run += first
            if self._run <= limit:
                last = data.rfind(b"\n")
                if last - first > limit and _has_long_line(data, first, last, limit):
                    self._run = limit + 1
                else:
                    self._run = len(data) - last - 1
        if self._run > limit:
            self._fail(
                f"the {self._what} has a line longer than the limit of {limit:,} bytes",
                "line_too_long",
            )

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def _has_long_line(data: bytes, first: int, last: int, limit: int) -> bool:
    """Whether a line between the line breaks at ``first`` and ``last`` exceeds ``limit`` bytes.

    A line longer than ``limit`` covers at least one whole window of ``limit // 2`` bytes of a
    fixed grid, so only windows holding no line break at all (a C-speed ``find`` each) need an
    exact look.
    """
    step = max(limit // 2, 1)
    for start in range(first + 1, last - step + 1, step):
        if data.find(b"\n", start, start + step) < 0:
            before = data.rfind(b"\n", 0, start)
            after = data.find(b"\n", start + step)
            if after - before - 1 > limit:
                return True
    return False


@contextmanager
def open_stream(source: Source, *, limits: IntakeLimits) -> Iterator[LimitedReader]:
    """The CSV text of ``source`` as a byte stream, within ``limits``."""
    if source.container == "gzip":
        raw: BinaryIO = gzip.open(source.path, "rb")  # type: ignore[assignment]
        what = "gzip file"
    elif source.container == "zip":
        zf = zipfile.ZipFile(source.path)
        try:
            raw = cast(BinaryIO, zf.open(source.member or ""))
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
            zf.close()
            raise IntakeError(
                f"the .zip archive cannot be read: {exc}", kind="bad_archive"
            ) from None
        what = "CSV inside the .zip"
    else:
        raw = open(source.path, "rb")
        what = "file"
    reader = LimitedReader(raw, limits=limits, what=what)
    try:
        yield reader
    finally:
        reader.close()
        if source.container == "zip":
            zf.close()


def head_size(limits: IntakeLimits) -> int:
    """How much of a file :func:`read_head` reads: enough for the longest header line allowed."""
    return max(HEAD_BYTES, limits.max_line_bytes + 2)


def read_head(source: Source, *, limits: IntakeLimits) -> bytes:
    """The first :func:`head_size` bytes of the CSV text, checked for being text at all."""
    with open_stream(source, limits=limits) as stream:
        try:
            head = stream.read(head_size(limits))
        except IntakeError:
            raise
        except Exception as exc:  # noqa: BLE001 - a damaged stream says so in many ways
            raise IntakeError(f"the file cannot be read: {exc}", kind="bad_archive") from None
    if source.container != "plain":
        if head.startswith(_GZIP_MAGIC) or head.startswith(_ZIP_MAGICS):
            raise IntakeError(
                f"the archive holds another archive; send {ACCEPTED}", kind="bad_archive"
            )
    if not head.removeprefix(codecs.BOM_UTF8).strip():
        raise IntakeError("the file is empty", kind="empty_file")
    for prefix, kind, what in _OTHER_MAGICS:
        if head.startswith(prefix):
            raise IntakeError(f"the content is {what}, not a CSV file; send {ACCEPTED}", kind=kind)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise IntakeError(
            'the file is encoded as UTF-16; save it as UTF-8 ("CSV UTF-8" in spreadsheet programs)',
            kind="not_utf8",
        )
    if b"\x00" in head or _control_share(head) > 0.01:
        raise IntakeError(
            "the file is not a text CSV file (it holds binary data such as NUL bytes)",
            kind="not_text",
        )
    return head


def foreign_text(head: bytes) -> str | None:
    """What a text file is when its first characters show it is another format than CSV:
    "JSON", "an HTML page" or "XML"; None when it may be a CSV."""
    start = head.removeprefix(codecs.BOM_UTF8).lstrip()[:64]
    if _JSON_START.match(start):
        return "JSON"
    lowered = start.lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "an HTML page"
    if lowered.startswith(b"<?xml"):
        return "XML"
    return None


def _control_share(head: bytes) -> float:
    raw = np.frombuffer(head, dtype=np.uint8)
    control = (raw < 32) & (raw != 9) & (raw != 10) & (raw != 13) & (raw != 12)
    return float(np.count_nonzero(control)) / max(len(raw), 1)


def first_invalid_utf8(source: Source, *, limits: IntakeLimits) -> tuple[int, int] | None:
    """``(line, byte offset within the file)`` of the first byte that is not UTF-8, if any."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    lines_before = 0
    with open_stream(source, limits=limits) as stream:
        while True:
            chunk = stream.read(_CHUNK)
            final = not chunk
            try:
                decoder.decode(chunk, final=final)
            except UnicodeDecodeError as exc:
                # exc.start indexes into pending + chunk; pending holds at most 3 bytes.
                pending = len(exc.object) - len(chunk)
                bad = max(exc.start - pending, 0)
                line = lines_before + chunk.count(b"\n", 0, bad) + 1
                return line, offset + bad
            if final:
                return None
            lines_before += chunk.count(b"\n")
            offset += len(chunk)


def line_numbers(source: Source, rows: np.ndarray, *, limits: IntakeLimits) -> dict[int, int]:
    """Map data-row positions (0 = first row after the header) to 1-based physical line numbers.

    Blank lines are skipped by the CSV reader, so row ``i`` is not simply line ``i + 2``; this
    walks the file once, vectorised per chunk, and stops as soon as every wanted row is found.
    """
    wanted = np.unique(np.asarray(rows, dtype=np.int64))
    found: dict[int, int] = {}
    if wanted.size == 0:
        return found
    lines_done = 0  # physical lines completed so far
    nonempty_done = 0  # of which not blank (the first one is the header)
    pending = 0  # bytes of the current, unfinished line
    pending_first = -1  # its first byte (to tell a lone "\r" apart)
    with open_stream(source, limits=limits) as stream:
        while len(found) < wanted.size:
            chunk = stream.read(_CHUNK)
            data = np.frombuffer(chunk, dtype=np.uint8)
            if not chunk:
                ends = np.array([0], dtype=np.int64)
                lengths = np.array([pending], dtype=np.int64)
                lone_cr = np.array([pending == 1 and pending_first == 13])
                if pending == 0:
                    break
            else:
                newlines = np.flatnonzero(data == 10)
                if newlines.size == 0:
                    if pending == 0 and data.size:
                        pending_first = int(data[0])
                    pending += data.size
                    continue
                starts = np.concatenate(([0], newlines[:-1] + 1))
                lengths = newlines - starts
                lengths[0] += pending
                first_bytes = data[np.minimum(starts, data.size - 1)].astype(np.int64)
                if pending:
                    first_bytes[0] = pending_first
                lone_cr = (lengths == 1) & (first_bytes == 13)
                ends = newlines
            nonempty = (lengths > 0) & ~lone_cr
            row_of_line = nonempty_done + np.cumsum(nonempty) - 2  # header is non-empty #1
            hit = nonempty & np.isin(row_of_line, wanted)
            for position in np.flatnonzero(hit):
                found[int(row_of_line[position])] = lines_done + int(position) + 1
            lines_done += len(lengths)
            nonempty_done += int(np.count_nonzero(nonempty))
            if not chunk:
                break
            tail = data[int(ends[-1]) + 1 :]
            pending = tail.size
            pending_first = int(tail[0]) if tail.size else -1
    return found
