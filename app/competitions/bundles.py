"""Competition bundles in and out of the database (issue 25).

Import: the bundle is read by ``app.bundles`` into its one model, turned into the same body
``POST /api/v1/competitions`` takes (its pages as Markdown sections of the description), and
made through :func:`create_competition`; each phase's
reference data becomes its answer key through :func:`upload_answer_key` (catalogue columns), or,
for a phase an imported scoring program scores, a published answer key holding the reference data
as one zip (what the program finds in ``input/ref``) and one stored zip of the program named by
``Phase.scorer``. A Python 2 program is refused, named by file and line. It all happens in a
savepoint: any failure (or a dry run) rolls every row back and removes every blob stored on the
way, so a refused bundle creates nothing.

Export: the competition as that same model, written by ``app.bundles``' Codabench v2 exporter,
with every submission and its scores added for archiving when asked.
"""

import io
import json
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, BinaryIO

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.auth.service import user_named
from app.bundles import (
    BundleError,
    BundleFile,
    Column,
    Competition,
    Computed,
    EntryField,
    Ingestion,
    Limits,
    MetricRef,
    Page,
    Phase,
    Program,
    Split,
    export_codabench,
    read_bundle,
    to_api_body,
)
from app.bundles.export import slugify_file
from app.bundles.markdown import description_markdown
from app.bundles.scan import scan_program
from app.competitions.schemas import CompetitionCreate, CompetitionImported
from app.competitions.service import create_competition, to_public, upload_answer_key
from app.config import Settings
from app.errors import Conflict, Forbidden, PayloadTooLarge, Unprocessable
from app.evaluation.columns import column_defs, columns_for
from app.evaluation.metric import is_custom, is_program
from app.ledger.facts import key_published
from app.models import AnswerKey, Submission, User
from app.models import Competition as CompetitionRow
from app.models import Phase as PhaseRow
from app.scoring.columns import Column as ResolvedColumn
from app.storage import StoredFile, open_stored, remove_stored, store_stream
from app.storage.base import CHUNK

# A stored zip's entries carry this time, so the same files always make the same bytes (and the
# same checksum: an export imported again gives the same answer key).
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def read_upload(source: BinaryIO, *, max_bytes: int) -> bytes:
    """The uploaded bundle's bytes, refused past ``max_bytes`` while they are read."""
    out = bytearray()
    while chunk := source.read(CHUNK):
        out += chunk
        if len(out) > max_bytes:
            raise PayloadTooLarge(f"the bundle is larger than the {max_bytes:,}-byte limit")
    return bytes(out)


def owner_for(session: Session, *, caller: User, name: str | None) -> User:
    """Who owns the import: the caller, or the organiser a site admin names."""
    if name is None or name == caller.name:
        return caller
    if not caller.is_admin:
        raise Forbidden("only a site admin may import a competition for another organiser")
    owner = user_named(session, name)
    if not owner.is_organiser:
        raise Unprocessable(f"'{name}' is not an organiser", extra={"field": "owner"})
    return owner


def import_bundle(
    session: Session,
    *,
    bundle: bytes,
    name: str,
    owner: User,
    settings: Settings,
    slug: str | None = None,
    dry_run: bool = False,
) -> CompetitionImported:
    """Make the competition a bundle describes (a draft, for its hosts to check and publish),
    or with ``dry_run`` say what would be made and keep nothing."""
    model = read_bundle(
        bundle, limits=Limits(max_total_bytes=settings.bundle_max_unpacked_bytes), name=name
    )
    body = to_api_body(model, slug=slug)
    body["status"] = "draft"
    body["description"] = description_markdown(model)
    try:
        data = CompetitionCreate.model_validate(body)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise BundleError(str(error["msg"]), file=name, field=field) from None
    _refuse_python2(model.phases)
    warnings = list(model.warnings)
    stored: list[str] = []
    savepoint = session.begin_nested()
    try:
        competition = create_competition(session, data=data, owner=owner)
        for index, (phase, row) in enumerate(zip(model.phases, competition.phases, strict=True)):
            if phase.scorer is not None or is_program(competition):
                _store_program(session, competition, phase, row, owner, settings, stored)
                if phase.scorer is None:
                    warnings.append(
                        f"phase '{phase.name}' has no scoring program of its own while its "
                        "columns are written by one; it takes no submissions"
                    )
            elif phase.answer_key:
                stored.append(_upload_key(session, competition, phase, row, index, owner, settings))
            else:
                warnings.append(
                    f"phase '{phase.name}' has no reference data: upload its answer key before "
                    "it takes submissions"
                )
        session.flush()
        session.refresh(competition, ["phases", "answer_keys"])
        report = CompetitionImported(
            **to_public(competition).model_dump(),
            warnings=list(dict.fromkeys(warnings)),
            dry_run=dry_run,
        )
        if dry_run:
            savepoint.rollback()
            _remove(stored, settings)
        else:
            savepoint.commit()
    except BaseException:
        if savepoint.is_active:
            savepoint.rollback()
        _remove(stored, settings)
        raise
    return report


def _upload_key(
    session: Session,
    competition: CompetitionRow,
    phase: Phase,
    row: PhaseRow,
    index: int,
    owner: User,
    settings: Settings,
) -> str:
    where = f"phases[{index}].reference_data"
    if len(phase.answer_key) != 1:
        names = ", ".join(f.path for f in phase.answer_key[:5])
        raise BundleError(
            f"phase '{phase.name}' is scored by catalogue metrics, which read one answer key "
            f"file, not {len(phase.answer_key)} ({names})",
            field=where,
        )
    (key_file,) = phase.answer_key
    try:
        key = upload_answer_key(
            session,
            competition=competition,
            phase=row,
            source=io.BytesIO(key_file.data),
            uploader=owner,
            settings=settings,
            pause=False,
        )
    except Unprocessable as exc:
        raise BundleError(exc.detail, file=key_file.path, field=where) from None
    return key.path


def _refuse_python2(phases: Sequence[Phase]) -> None:
    """A Python 2 program cannot run on the scorer runtime (Python 3): the import is refused,
    naming the file and the line, so the host converts it (2to3) and imports again."""
    for index, phase in enumerate(phases):
        program = phase.scorer
        if program is None or not program.python2:
            continue
        report = scan_program({f.path: f.data for f in program.files}, label="the program")
        where = report.python2[0] if report.python2 else "a Python 2 construct"
        raise BundleError(
            f"the scoring program of phase '{phase.name}' is Python 2 ({where}); Podium runs "
            "Python 3 only: convert it (for example with 2to3) and import the bundle again",
            file=where.split(" line ", 1)[0] if report.python2 else None,
            field=f"phases[{index}].scoring_program",
        )


def _zip(files: Sequence[BundleFile], folder: str = "") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for f in sorted(files, key=lambda f: f.path):
            info = zipfile.ZipInfo(f"{folder}{f.path}", date_time=_ZIP_TIME)
            archive.writestr(info, f.data, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _store_program(
    session: Session,
    competition: CompetitionRow,
    phase: Phase,
    row: PhaseRow,
    owner: User,
    settings: Settings,
    stored: list[str],
) -> None:
    """The reference data as the phase's answer key (one zip of its files, published: it is what
    the program reads in ``input/ref``) and the program's files as one zip (``program/...``)
    that ``Phase.scorer`` names, both stored content-addressed beside the competition's keys."""
    program = phase.scorer
    ingestion = phase.ingestion if program is not None and program.kind != "evalai" else None
    # The ingestion program and its input data beside the program, in the same zip: a run needs
    # all three, and none of them is the answer key (the ingestion step must never see that).
    program_files = (
        [BundleFile(f"program/{f.path}", f.data) for f in program.files] if program else []
    )
    if ingestion is not None:
        program_files += [
            BundleFile(f"ingestion_program/{f.path}", f.data) for f in ingestion.files
        ]
        program_files += [BundleFile(f"input_data/{f.path}", f.data) for f in ingestion.input_data]
    blobs: list[StoredFile] = []
    for files, prefix in (
        (program_files, f"programs/{competition.id}"),
        (list(phase.answer_key), f"answer-keys/{competition.id}"),
    ):
        blob = store_stream(
            io.BytesIO(_zip(files)),
            prefix=prefix,
            settings=settings,
            max_bytes=settings.bundle_max_unpacked_bytes,
            suffix=".zip",
        )
        stored.append(blob.ref)  # removed again if the import fails or is a dry run
        blobs.append(blob)
    program_blob, key_blob = blobs
    key = AnswerKey(
        competition_id=competition.id,
        phase_id=row.id,
        version=1,
        path=key_blob.ref,
        sha256=key_blob.sha256,
        # Not a table: the program reads the files as they are.
        id_column="",
        target_columns=[],
        n_rows=len(phase.answer_key),
        n_public=0,
        n_private=0,
        uploaded_by_id=owner.id,
        published_at=datetime.now(UTC),
    )
    session.add(key)
    session.flush()
    key_published(session, competition_id=competition.id, phase=row.name, key=key)
    row.scorer = {
        "kind": program.kind if program else None,
        "ref": program_blob.ref,
        "sha256": program_blob.sha256,
        "command": program.command if program else None,
        "docker_image": program.docker_image if program else None,
        "python2": program.python2 if program else False,
        "program_phase": phase.program_phase,
        "execution_time_limit": phase.execution_time_limit,
        "splits": [
            {"key": s.key, "title": s.title, "visibility": s.visibility} for s in phase.splits
        ],
        "program": [{"path": f.path, "sha256": f.sha256} for f in program.files] if program else [],
        "reference": [{"path": f.path, "sha256": f.sha256} for f in phase.answer_key],
        "ingestion": None
        if ingestion is None
        else {
            "command": ingestion.command,
            "hide_log": ingestion.hide_log,
            "program": [{"path": f.path, "sha256": f.sha256} for f in ingestion.files],
            "input_data": [{"path": f.path, "sha256": f.sha256} for f in ingestion.input_data],
        },
    }


def _remove(refs: list[str], settings: Settings) -> None:
    for ref in refs:
        remove_stored(ref, settings=settings)


# --- export ---------------------------------------------------------------------------------


def export_bundle(
    session: Session, *, competition: CompetitionRow, settings: Settings, with_submissions: bool
) -> bytes:
    """The competition as a Codabench v2 bundle (a zip), Podium's ``podium:`` extension inside
    so that importing it gives the same competition back."""
    data = export_codabench(competition_model(competition, settings)).data
    if with_submissions:
        data = _add_submissions(session, competition, data, settings)
    return data


def competition_model(competition: CompetitionRow, settings: Settings) -> Competition:
    if is_custom(competition):
        raise Conflict(
            f"'{competition.slug}' scores with an uploaded metric file, which a bundle cannot "
            "carry yet; it cannot be exported"
        )
    columns = _columns(column_defs(competition), columns_for(competition))
    phases = tuple(_phase(competition, row, settings) for row in competition.phases)
    kinds = [p.scorer.kind for p in phases if p.scorer is not None]
    return Competition(
        title=competition.title,
        slug=competition.slug,
        description=Page(title="Overview", content=competition.description, format="markdown"),
        pages=(),
        columns=columns,
        ranking=columns[0].key,
        phases=phases,
        source_format=kinds[0] if kinds else "codabench",
        docker_image=next((p.scorer.docker_image for p in phases if p.scorer), None),
    )


def _columns(defs: list[dict[str, Any]], resolved: list[ResolvedColumn]) -> tuple[Column, ...]:
    out = []
    for raw, column in zip(defs, resolved, strict=True):
        metric = raw.get("metric")
        precision = raw.get("precision")
        out.append(
            Column(
                key=column.key,
                title=column.title,
                direction=column.direction,  # type: ignore[arg-type]
                precision=2 if precision is None else int(precision),
                hidden=column.hidden,
                source_key=column.source_key if column.program else None,
                metric=None
                if metric is None
                else MetricRef(
                    name=str(metric["name"]),
                    params=tuple(sorted((metric.get("params") or {}).items())),
                ),
                computed=Computed(column.op, column.of) if column.computed else None,  # type: ignore[arg-type]
            )
        )
    return tuple(out)


def _phase(competition: CompetitionRow, row: PhaseRow, settings: Settings) -> Phase:
    own = None
    if row.columns:
        own = _columns(column_defs(competition, row), columns_for(competition, row))
    fields = tuple(
        EntryField(
            key=f["key"],
            title=f.get("title") or f["key"],
            type=f.get("type", "text"),
            options=tuple(f.get("options") or ()),
            required=bool(f.get("required")),
            on_board=bool(f.get("on_board")),
        )
        for f in row.entry_fields or []
    )
    common: dict[str, Any] = {
        "name": row.name,
        "title": row.title,
        "start": row.start,
        "end": row.end,
        "daily_submission_limit": row.daily_submission_limit,
        "total_submission_limit": row.total_submission_limit,
        "board": row.board,
        "counts": row.counts,
        "final_selection_limit": row.final_selection_limit,
        "entry_fields": fields,
        "columns": own,
        "ranking": own[0].key if own else None,
    }
    if row.scorer is None:
        key = row.board_key
        answer_key = ()
        if key is not None:
            with open_stored(key.path, settings=settings) as stream:
                answer_key = (BundleFile("answer_key.csv", stream.read()),)
        return Phase(**common, answer_key=answer_key)
    return _program_phase(row, common, settings)


def _program_phase(row: PhaseRow, common: dict[str, Any], settings: Settings) -> Phase:
    scorer = row.scorer or {}
    with open_stored(scorer["ref"], settings=settings) as stream:
        archive = zipfile.ZipFile(io.BytesIO(stream.read()))
    with archive:
        program_files = tuple(
            BundleFile(f["path"], archive.read(f"program/{f['path']}")) for f in scorer["program"]
        )
        ingestion = None
        if scorer.get("ingestion"):
            spec = scorer["ingestion"]
            ingestion = Ingestion(
                command=spec["command"],
                files=tuple(
                    BundleFile(f["path"], archive.read(f"ingestion_program/{f['path']}"))
                    for f in spec["program"]
                ),
                input_data=tuple(
                    BundleFile(f["path"], archive.read(f"input_data/{f['path']}"))
                    for f in spec["input_data"]
                ),
                hide_log=bool(spec.get("hide_log")),
            )
        # Imported before the reference data became the phase's answer key: kept in this zip.
        reference = tuple(
            BundleFile(f["path"], archive.read(f"reference/{f['path']}"))
            for f in scorer["reference"]
            if f"reference/{f['path']}" in archive.namelist()
        )
    key = row.board_key
    if key is not None:
        reference = _reference_files(key.path, scorer, settings)
    program = None
    if scorer.get("kind"):
        program = Program(
            kind=scorer["kind"],
            files=program_files,
            command=scorer.get("command"),
            docker_image=scorer.get("docker_image"),
            python2=bool(scorer.get("python2")),
        )
    return Phase(
        **common,
        answer_key=reference,
        scorer=program,
        splits=tuple(Split(s["key"], s["title"], s["visibility"]) for s in scorer["splits"]),
        program_phase=scorer.get("program_phase"),
        execution_time_limit=scorer.get("execution_time_limit"),
        ingestion=ingestion,
    )


def _reference_files(
    ref: str, scorer: dict[str, Any], settings: Settings
) -> tuple[BundleFile, ...]:
    """The reference data a program phase's answer key holds (a zip of its files; a key a host
    uploaded later as one file is that file, under the imported name)."""
    with open_stored(ref, settings=settings) as stream:
        data = stream.read()
    if not zipfile.is_zipfile(io.BytesIO(data)):
        names = [f["path"] for f in scorer.get("reference") or ()]
        return (BundleFile(names[0] if len(names) == 1 else "answer_key", data),)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return tuple(
            BundleFile(info.filename, archive.read(info))
            for info in archive.infolist()
            if not info.is_dir()
        )


def _add_submissions(
    session: Session, competition: CompetitionRow, data: bytes, settings: Settings
) -> bytes:
    """Every submission's file under ``submissions/`` and ``submissions/index.json`` listing
    each with its team, phase and every score it was given (for archiving; importers ignore it)."""
    rows = session.scalars(
        select(Submission)
        .where(Submission.competition_id == competition.id)
        .options(
            selectinload(Submission.scores),
            selectinload(Submission.team),
            selectinload(Submission.phase),
        )
        .order_by(Submission.id)
    ).all()
    out = io.BytesIO(data)
    index = []
    with zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for sub in rows:
            entry: dict[str, Any] = {
                "id": sub.id,
                "phase": sub.phase.name,
                "team": sub.team.name,
                "filename": sub.filename,
                "sha256": sub.sha256,
                "status": str(sub.status.value if hasattr(sub.status, "value") else sub.status),
                "created_at": sub.created_at.isoformat(),
                "baseline": sub.baseline,
                "scores": [
                    {
                        "answer_key_id": s.answer_key_id,
                        "score": s.score,
                        "public": s.public_score,
                        "private": s.private_score,
                        "columns": s.columns,
                    }
                    for s in sub.scores
                ],
                "file": None,
            }
            if sub.path:
                path = f"submissions/{sub.id}-{slugify_file(sub.filename) or 'submission'}"
                with open_stored(sub.path, settings=settings) as stream:
                    archive.writestr(path, stream.read())
                entry["file"] = path
            index.append(entry)
        archive.writestr("submissions/index.json", json.dumps(index, indent=1))
    return out.getvalue()
