"""Competition bundles in and out of the database (issue 25).

Import: the bundle is read by ``app.bundles`` into its one model, turned into the same body
``POST /api/v1/competitions`` takes (its pages as Markdown sections of the description), and
made through :func:`create_competition`; each phase's
reference data becomes its answer key through :func:`upload_answer_key` (catalogue columns), or,
for a phase an imported scoring program scores, a published answer key holding the reference data
as one zip (what the program finds in ``input/ref``) and one stored zip of the program named by
``Phase.scorer``. A Python 2 program is refused, named by file and line. It all happens in a
savepoint: any failure (or a dry run) rolls every row back and removes every blob stored on the
way, so a refused bundle creates nothing; so does the request's commit failing afterwards.

Export: the competition as that same model, written by ``app.bundles``' Codabench v2 exporter,
with every submission and its scores added for archiving when asked.
"""

import hashlib
import io
import json
import logging
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, BinaryIO

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, object_session, selectinload

from app.auth.service import user_named
from app.bundles import (
    BundleError,
    BundleFile,
    Column,
    Competition,
    Computed,
    DataFile,
    EntryField,
    Ingestion,
    Limits,
    MetricRef,
    Page,
    Phase,
    Program,
    Split,
    Task,
    export_codabench,
    read_bundle,
    to_api_body,
)
from app.bundles.as_came import as_came
from app.bundles.export import slugify_file
from app.bundles.markdown import as_markdown, description_markdown
from app.bundles.scan import scan_program
from app.competitions.schemas import MAX_RULES, CompetitionCreate, CompetitionImported
from app.competitions.service import create_competition, to_public, upload_answer_key
from app.config import Settings
from app.datafiles.service import put_file
from app.db import after_rollback
from app.errors import AppError, Conflict, Forbidden, PayloadTooLarge, Unprocessable
from app.evaluation.columns import column_defs, columns_for
from app.evaluation.metric import is_custom, is_program
from app.http.messages import sentence
from app.ledger.facts import key_published
from app.models import AnswerKey, Submission, User
from app.models import Competition as CompetitionRow
from app.models import DataFile as DataFileRow
from app.models import Phase as PhaseRow
from app.scoring.columns import Column as ResolvedColumn
from app.scoring.columns import resolve_columns
from app.storage import (
    StoredFile,
    delete_blob,
    open_blob,
    open_stored,
    remove_stored,
    store_stream,
)
from app.storage.base import CHUNK

# A stored zip's entries carry this time, so the same files always make the same bytes (and the
# same checksum: an export imported again gives the same answer key).
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)

log = logging.getLogger(__name__)


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
    start_now: bool = False,
) -> CompetitionImported:
    """Make the competition a bundle describes (a draft, for its hosts to check and publish),
    or with ``dry_run`` say what would be made and keep nothing. Its dates stay as they came
    (a past competition publishes as ended) unless ``start_now`` moves them all by one offset
    so that its first phase opens now."""
    model = read_bundle(
        bundle, limits=Limits(max_total_bytes=settings.bundle_max_unpacked_bytes), name=name
    )
    model = as_came(model, now=datetime.now(UTC), slug=slug or model.slug, start_now=start_now)
    body = to_api_body(model, slug=slug)
    body["status"] = "draft"
    # The platform's terms page is the competition's rules (accepted before joining; not repeated
    # in the description), and its approval of each entrant the registration mode.
    terms = model.page("terms")
    if terms is not None and terms.content.strip():
        body["rules"] = as_markdown(terms)[:MAX_RULES]
        model = replace(model, pages=tuple(p for p in model.pages if p.kind != "terms"))
    body["description"] = description_markdown(model)
    body["registration"] = model.registration
    body["benchmark"] = model.benchmark
    body["board_every_submission"] = model.benchmark and model.board_every_submission
    try:
        data = CompetitionCreate.model_validate(body)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise BundleError(sentence(error), file=name, field=field) from None
    _refuse_python2(model.phases)
    warnings = list(model.warnings)
    stored: list[str] = []
    blobs: list[str] = []  # data files' blobs, removed again like ``stored``
    origin = model.origin or {
        "format": model.source_format,
        "file": name,
        "sha256": hashlib.sha256(bundle).hexdigest(),
        "imported_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
    }
    savepoint = session.begin_nested()
    try:
        competition = create_competition(session, data=data, owner=owner)
        competition.origin = origin
        for index, (phase, row) in enumerate(zip(model.phases, competition.phases, strict=True)):
            if phase.tasks:
                _store_tasks(session, competition, phase, row, owner, settings, stored)
            elif phase.scorer is not None or is_program(competition):
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
        for datafile in model.data_files:
            row, _ = put_file(
                session,
                competition=competition,
                name=datafile.name,
                source=io.BytesIO(datafile.data),
                user=owner,
                settings=settings,
                visibility=datafile.visibility,
            )
            blobs.append(row.storage_key)
        session.flush()
        session.refresh(competition, ["phases", "answer_keys"])
        report = CompetitionImported(
            **to_public(competition).model_dump(),
            warnings=list(dict.fromkeys(warnings)),
            dry_run=dry_run,
            origin=origin,
        )
        if dry_run:
            savepoint.rollback()
            _remove(stored, settings, blobs)
        else:
            savepoint.commit()
            # The request's commit is still to come: if it fails, nothing refers to the files.
            after_rollback(session, lambda: _remove(stored, settings))
    except BaseException:
        if savepoint.is_active:
            savepoint.rollback()
        _remove(stored, settings, blobs)
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
    """A Python 2 program the reader could not convert (app.bundles.py2) cannot run on the
    scorer runtime (Python 3): the import is refused, naming the file and the line."""
    programs = [(i, p, p.scorer) for i, p in enumerate(phases)]
    programs += [(i, p, t.scorer) for i, p in enumerate(phases) for t in p.tasks]
    for index, phase, program in programs:
        if program is None or not program.python2:
            continue
        report = scan_program({f.path: f.data for f in program.files}, label="the program")
        where = report.python2[0] if report.python2 else "a Python 2 construct"
        raise BundleError(
            f"the scoring program of phase '{phase.name}' is Python 2 ({where}) and could not be "
            "converted at import (it does not parse as Python 2); Podium runs Python 3 only: fix "
            "or convert it and import the bundle again",
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
    row.scorer = _stored_scorer(competition, phase, settings, stored)
    _publish_key(session, competition, row, list(phase.answer_key), owner, settings, stored)


def _stored_scorer(
    competition: CompetitionRow, phase: Phase, settings: Settings, stored: list[str]
) -> dict[str, Any]:
    """The phase's program stored as one zip, and the ``scorer`` that names it."""
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
    program_blob = _store_zip(program_files, f"programs/{competition.id}", settings, stored)
    return {
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


def _store_zip(
    files: Sequence[BundleFile], prefix: str, settings: Settings, stored: list[str]
) -> StoredFile:
    blob = store_stream(
        io.BytesIO(_zip(files)),
        prefix=prefix,
        settings=settings,
        max_bytes=settings.bundle_max_unpacked_bytes,
        suffix=".zip",
    )
    stored.append(blob.ref)  # removed again if the import fails or is a dry run
    return blob


def _publish_key(
    session: Session,
    competition: CompetitionRow,
    row: PhaseRow,
    files: list[BundleFile],
    owner: User,
    settings: Settings,
    stored: list[str],
) -> None:
    """A program phase's first key version, published: its reference files as one zip."""
    key_blob = _store_zip(files, f"answer-keys/{competition.id}", settings, stored)
    key = AnswerKey(
        competition_id=competition.id,
        phase_id=row.id,
        version=1,
        path=key_blob.ref,
        sha256=key_blob.sha256,
        # Not a table: the program reads the files as they are.
        id_column="",
        target_columns=[],
        n_rows=len(files),
        n_public=0,
        n_private=0,
        uploaded_by_id=owner.id,
        published_at=datetime.now(UTC),
    )
    session.add(key)
    session.flush()
    key_published(session, competition_id=competition.id, phase=row, key=key)


def _store_tasks(
    session: Session,
    competition: CompetitionRow,
    phase: Phase,
    row: PhaseRow,
    owner: User,
    settings: Settings,
    stored: list[str],
) -> None:
    """A multi-task phase: each task's program stored as a single-task phase's is (its
    ``scorer`` kept on the task), and one answer key holding every task's reference data under
    ``{task}/`` (a new version replaces them together: a board compares like with like)."""
    scorers = {
        # A task its catalogue metrics score has no program (an export of one came back).
        task.key: None
        if task.scorer is None and all(c.metric or c.computed for c in task.columns)
        else _stored_scorer(
            competition,
            replace(
                phase,
                tasks=(),
                scorer=task.scorer,
                answer_key=task.answer_key,
                ingestion=task.ingestion,
            ),
            settings,
            stored,
        )
        for task in phase.tasks
    }
    files = [BundleFile(f"{t.key}/{f.path}", f.data) for t in phase.tasks for f in t.answer_key]
    _publish_key(session, competition, row, files, owner, settings, stored)
    row.scorer = None
    row.tasks = [{**t, "scorer": scorers.get(str(t["key"]))} for t in row.tasks or ()]


def _remove(refs: list[str], settings: Settings, blobs: Sequence[str] = ()) -> None:
    """Remove each file, the others all the same when one fails (a store down keeps its file;
    the error that undid the import is the one to answer)."""
    for ref in refs:
        try:
            remove_stored(ref, settings=settings)
        except Exception:  # noqa: BLE001 - best effort, named in the log
            log.warning("an import undone left its stored file %s behind", ref, exc_info=True)
    for key in blobs:
        try:
            delete_blob(key, settings=settings)
        except Exception:  # noqa: BLE001 - best effort, named in the log
            log.warning("an import undone left its stored blob %s behind", key, exc_info=True)


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
    missing: list[str] = []
    phases = tuple(_phase(competition, row, settings, missing) for row in competition.phases)
    kinds = [p.scorer.kind for p in phases if p.scorer is not None]
    return Competition(
        title=competition.title,
        slug=competition.slug,
        description=Page(title="Overview", content=competition.description, format="markdown"),
        # The rules travel as the bundle's terms page; an invitation-only competition as one
        # whose hosts approve each entrant (a bundle has no allow list).
        pages=(Page(title="Rules", content=competition.rules, format="markdown", kind="terms"),)
        if competition.rules.strip()
        else (),
        registration="open" if competition.registration == "open" else "approval",
        benchmark=competition.benchmark,
        board_every_submission=competition.board_every_submission,
        columns=columns,
        ranking=columns[0].key,
        phases=phases,
        source_format=kinds[0] if kinds else "codabench",
        docker_image=next((p.scorer.docker_image for p in phases if p.scorer), None),
        data_files=_data_files(competition, settings, missing),
        origin=competition.origin,
        missing=tuple(missing),
    )


def _data_files(
    competition: CompetitionRow, settings: Settings, missing: list[str]
) -> tuple[DataFile, ...]:
    """The competition's data files with their visibility; one whose stored copy is gone is
    listed in ``missing`` (and so in the bundle), the rest exported whole."""
    session = object_session(competition)
    if session is None:
        return ()
    rows = session.scalars(
        select(DataFileRow)
        .where(DataFileRow.competition_id == competition.id)
        .order_by(DataFileRow.name)
    ).all()
    out = []
    for row in rows:
        data = _read_or_none(lambda row=row: open_blob(row.storage_key, settings=settings))
        if data is None:
            missing.append(f"data file {row.name!r} ({row.visibility})")
            continue
        out.append(DataFile(name=row.name, data=data, visibility=row.visibility))  # type: ignore[arg-type]
    return tuple(out)


def _read_or_none(opener: Callable[[], BinaryIO]) -> bytes | None:
    """A stored file's bytes, or None when its copy is gone or cannot be read now."""
    try:
        with opener() as stream:
            return stream.read()
    except (AppError, OSError):
        return None


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
                precision=None if precision is None else int(precision),
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


def _phase(
    competition: CompetitionRow, row: PhaseRow, settings: Settings, missing: list[str]
) -> Phase:
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
        "migrate": None
        if not row.migrate
        else (str(row.migrate["from"]), str(row.migrate.get("take", "selected"))),
    }
    if row.tasks:
        return _task_phase(competition, row, common, settings, missing)
    if row.scorer is None:
        key = row.board_key
        answer_key = ()
        if key is not None:
            data = _read_or_none(lambda: open_stored(key.path, settings=settings))
            if data is None:
                missing.append(f"phase {row.name!r}: answer key version {key.version}")
            else:
                answer_key = (BundleFile("answer_key.csv", data),)
        return Phase(**common, answer_key=answer_key)
    return _program_phase(row, common, settings)


def _task_phase(
    competition: CompetitionRow,
    row: PhaseRow,
    common: dict[str, Any],
    settings: Settings,
    missing: list[str],
) -> Phase:
    """A multi-task phase: its aggregates as its columns, each task its columns, program and
    the reference data its key holds under ``{task}/``."""
    aggregates = [dict(c) for c in row.columns or ()]
    resolved = {c.key: c for c in columns_for(competition, row)}
    own = _columns(aggregates, [resolved[str(c["key"])] for c in aggregates]) or None
    key = row.board_key
    data = None
    if key is not None:
        data = _read_or_none(lambda: open_stored(key.path, settings=settings))
        if data is None:
            missing.append(f"phase {row.name!r}: answer key version {key.version}")
    tasks = []
    for task in row.tasks or ():
        name = str(task["key"])
        defs = [dict(c) for c in task["columns"]]
        program, ingestion = None, None
        if task.get("scorer"):
            stored = _program_phase(row, common, settings, task["scorer"])
            program, ingestion = stored.scorer, stored.ingestion
        reference: tuple[BundleFile, ...] = ()
        if data is not None:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                # Under "{task}/" (imported), or a host's "{task}.csv" at the top.
                reference = tuple(
                    BundleFile(info.filename.removeprefix(f"{name}/"), archive.read(info))
                    for info in archive.infolist()
                    if not info.is_dir()
                    and (
                        info.filename.startswith(f"{name}/")
                        or ("/" not in info.filename and info.filename.split(".")[0] == name)
                    )
                )
        tasks.append(
            Task(
                key=name,
                title=str(task.get("title") or name),
                columns=_columns(defs, resolve_columns(defs)),
                answer_key=reference,
                scorer=program,
                ingestion=ingestion,
            )
        )
    return Phase(
        **{**common, "columns": own, "ranking": own[0].key if own else None},
        tasks=tuple(tasks),
    )


def _program_phase(
    row: PhaseRow,
    common: dict[str, Any],
    settings: Settings,
    scorer: dict[str, Any] | None = None,
) -> Phase:
    """A program phase (or, with ``scorer``, one task's program, its reference data aside)."""
    task = scorer is not None
    scorer = scorer or row.scorer or {}
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
    if key is not None and not task:
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
    missing: list[str] = []
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
            ref = sub.path
            content = (
                _read_or_none(lambda ref=ref: open_stored(ref, settings=settings)) if ref else None
            )
            if content is not None:
                path = f"submissions/{sub.id}-{slugify_file(sub.filename) or 'submission'}"
                archive.writestr(path, content)
                entry["file"] = path
            else:
                # A file refused at upload is not kept; another may have gone missing since.
                entry["missing"] = missing_reason(sub)
                missing.append(f"submission {sub.id} ({sub.filename}): {entry['missing']}")
            index.append(entry)
        archive.writestr("submissions/index.json", json.dumps(index, indent=1))
        if missing:
            archive.writestr("submissions/MISSING.txt", "".join(f"{m}\n" for m in missing))
    return out.getvalue()


def missing_reason(submission: Submission) -> str:
    if (
        submission.refunded
        and str(getattr(submission.status, "value", submission.status)) == "failed"
    ):
        return "refused at upload, its file not kept"
    return "its stored file is missing"
