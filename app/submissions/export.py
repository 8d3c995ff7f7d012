"""Host downloads of a phase's submissions: every submission with every column's public and
private value as CSV, and the submitted files as a zip streamed while it is written.

Hosts only (the routes take the hosted-competition dependency). The zip is written member by
member into a pipe that is drained after every chunk, so neither the archive nor a file is ever
held whole in memory.
"""

import csv
import io
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from app.config import Settings
from app.errors import AppError
from app.evaluation.columns import columns_for, stored_values
from app.leaderboard.spreadsheet import safe_row
from app.models import Competition, Phase, Score, Submission
from app.storage import CHUNK, open_stored

BASE_COLUMNS = [
    "id",
    "team",
    "user",
    "phase",
    "created_at",
    "status",
    "late",
    "baseline",
    "hidden",
    "description",
    "filename",
    "error",
]


def _phase_submissions(session: Session, phase: Phase) -> list[Submission]:
    return list(
        session.scalars(
            select(Submission)
            .where(Submission.phase_id == phase.id)
            .options(joinedload(Submission.team), joinedload(Submission.user))
            .order_by(Submission.id)
        )
    )


def submissions_csv(session: Session, *, competition: Competition, phase: Phase) -> bytes:
    """Every submission of the phase: who, when, status, and each column public and private
    against the phase's board key (hidden columns included: this is the hosts' file)."""
    columns = columns_for(competition, phase)
    submissions = _phase_submissions(session, phase)
    key = phase.board_key
    scores: dict[int, Score] = {}
    if key is not None and submissions:
        scores = {
            s.submission_id: s
            for s in session.scalars(select(Score).where(Score.answer_key_id == key.id))
        }
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        BASE_COLUMNS + [f"{c.key}_{split}" for c in columns for split in ("public", "private")]
    )
    for s in submissions:
        score = scores.get(s.id)
        values: dict[str, dict[str, float | None]] = {}
        if score is not None:
            values = stored_values(
                score.columns,
                ranking_key=columns[0].key,
                score=score.score,
                public=score.public_score,
                private=score.private_score,
            )
        cells: list[Any] = [
            s.id,
            s.team.name,
            s.user.name,
            phase.name,
            s.created_at.isoformat(),
            s.status.value,
            s.late,
            s.baseline,
            s.hidden,
            s.description,
            s.filename,
            s.error or "",
        ]
        for column in columns:
            for split in ("public", "private"):
                value = values.get(column.key, {}).get(split)
                cells.append("" if value is None else repr(value))
        writer.writerow(safe_row(cells))
    return out.getvalue().encode()


class _Pipe(io.RawIOBase):
    """A write-only stream whose bytes are taken out as they come (zipfile writes an
    unseekable stream with data descriptors)."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._chunks.append(bytes(data))
        return len(data)

    def drain(self) -> bytes:
        out = b"".join(self._chunks)
        self._chunks.clear()
        return out


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def member_name(submission: Submission) -> str:
    """A flat, safe name inside the zip: the id, the team and the uploaded name, with anything
    that could make a path (slashes, dots first, control characters) replaced."""
    team = _UNSAFE.sub("_", submission.team.name).strip("._") or "team"
    filename = _UNSAFE.sub("_", submission.filename).strip("._") or "submission"
    return f"{submission.id:07d}_{team[:60]}_{filename[:100]}"


def submissions_zip(session: Session, *, phase: Phase, settings: Settings) -> Iterator[bytes]:
    """The phase's stored submission files as a zip, yielded as it is written. Submissions
    whose file was refused at upload (not kept) are listed in ``MISSING.txt``. The list is read now, while
    the request's session is open; the files are read as the response is sent."""
    stored = [
        (member_name(s), s.path, _gone(s)) for s in _phase_submissions(session, phase) if s.path
    ]
    return _zipped(stored, settings)


def _gone(submission: Submission) -> str:
    """Why a submission's file may not be there, said now (the session is gone by then)."""
    if submission.refunded and submission.status.value == "failed":
        return "refused at upload, its file not kept"
    return "its stored file is missing"


def _zipped(stored: list[tuple[str, str, str]], settings: Settings) -> Iterator[bytes]:
    """The files as a zip; one whose stored copy cannot be opened (a refused upload's, never
    kept) is listed in ``MISSING.txt`` at the end instead of breaking the archive."""
    pipe = _Pipe()
    missing: list[str] = []
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, ref, reason in stored:
            try:
                source = open_stored(ref, settings=settings)
            except (AppError, OSError):
                missing.append(f"{name}: {reason}")
                continue
            with source, archive.open(name, "w", force_zip64=True) as member:
                while chunk := source.read(CHUNK):
                    member.write(chunk)
                    yield pipe.drain()
            yield pipe.drain()
        if missing:
            archive.writestr("MISSING.txt", "".join(f"{m}\n" for m in missing))
    yield pipe.drain()
