from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Path, Query, Request, Response, UploadFile, status
from sqlalchemy.orm import Session

from app.auth import hosts
from app.competitions import bundles, lifecycle, migration, phases, service
from app.competitions.schemas import (
    AnswerKeyPublic,
    Checklist,
    CompetitionCreate,
    CompetitionImported,
    CompetitionPublic,
    CompetitionUpdate,
    HostCreate,
    HostPublic,
    PhasePublic,
    PhaseUpdate,
    Status,
)
from app.config import Settings
from app.deps import (
    CompetitionDep,
    CurrentUser,
    HostedCompetitionDep,
    OptionalUser,
    OrganiserUser,
    SessionDep,
    SettingsDep,
)
from app.errors import error_responses
from app.http.headers import content_disposition
from app.leaderboard import service as leaderboard
from app.ledger import archive
from app.ledger import service as ledger
from app.ledger.signing import signer_for
from app.models import Competition, User
from app.pagination import PAGE_HEADERS, PageDep

# A phase named in a path: bounded like the names phases are given.
PhaseName = Annotated[str, Path(max_length=64)]

router = APIRouter(
    prefix="/competitions", tags=["competitions"], responses=error_responses(403, 404, 409)
)


@router.post(
    "",
    response_model=CompetitionPublic,
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(422),
)
def create_competition(
    data: CompetitionCreate,
    session: SessionDep,
    organiser: OrganiserUser,
    response: Response,
    dry_run: Annotated[bool, Query()] = False,
) -> CompetitionPublic:
    """Create a competition; with ``dry_run`` (200) every check runs and the answer is what
    would be made, but nothing is kept."""
    if dry_run:
        response.status_code = status.HTTP_200_OK
    return service.create_checked(session, data=data, owner=organiser, dry_run=dry_run)


@router.post(
    "/import",
    response_model=CompetitionImported,
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(413, 422),
)
def import_competition(
    file: UploadFile,
    session: SessionDep,
    organiser: OrganiserUser,
    settings: SettingsDep,
    slug: Annotated[str | None, Form(max_length=64)] = None,
    dry_run: Annotated[bool, Form()] = False,
    owner: Annotated[str | None, Form(max_length=64)] = None,
    start_now: Annotated[bool, Form()] = False,
) -> CompetitionImported:
    """A competition from an EvalAI, Codabench v2 or CodaLab v1.5 bundle (a zip), made as a
    draft; ``dry_run`` answers the same report and keeps nothing; ``owner`` (site admins) makes
    it another organiser's; ``start_now`` moves every date by one offset so that the first
    phase opens now (else past dates stay: it publishes as ended). 422 names the bundle's file
    and field at fault."""
    return bundles.import_bundle(
        session,
        bundle=bundles.read_upload(file.file, max_bytes=settings.bundle_max_bytes),
        name=(file.filename or "bundle.zip")[:200],
        owner=bundles.owner_for(session, caller=organiser, name=owner or None),
        settings=settings,
        slug=slug or None,
        dry_run=dry_run,
        start_now=start_now,
    )


@router.get("", response_model=list[CompetitionPublic], responses=PAGE_HEADERS)
def list_competitions(
    session: SessionDep, user: CurrentUser, page: PageDep, status: Status | None = None
) -> list[CompetitionPublic]:
    """The competitions the caller may see (a draft only by its hosts), newest first."""
    found = service.competitions_page(session, page=page, viewer=user, status=status)
    page.tell_total(found.total)
    return [service.to_public(c) for c in found.items]


@router.get("/{slug}", response_model=CompetitionPublic)
def get_competition(competition: CompetitionDep) -> CompetitionPublic:
    return service.to_public(competition)


@router.patch("/{slug}", response_model=CompetitionPublic)
def update_competition(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    data: CompetitionUpdate,
    session: SessionDep,
) -> CompetitionPublic:
    service.update_competition(session, competition=competition, data=data, actor=user)
    return service.to_public(competition)


@router.delete("/{slug}", status_code=status.HTTP_204_NO_CONTENT)
def delete_competition(
    user: CurrentUser, competition: CompetitionDep, session: SessionDep, settings: SettingsDep
) -> Response:
    """The owner or an admin deletes a competition without ranked submissions (else 409
    ``has_submissions``: archive it instead)."""
    lifecycle.delete(session, competition=competition, actor=user, settings=settings)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{slug}/checklist", response_model=Checklist)
def launch_checklist(competition: HostedCompetitionDep, settings: SettingsDep) -> Checklist:
    return lifecycle.checklist(competition, settings=settings)


@router.post("/{slug}/publish", response_model=CompetitionPublic)
def publish_competition(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    session: SessionDep,
    settings: SettingsDep,
) -> CompetitionPublic:
    """Publish a draft once every checklist item passes (else 409 ``not_ready`` and ``items``)."""
    lifecycle.publish(session, competition=competition, actor=user, settings=settings)
    return service.to_public(competition)


@router.post("/{slug}/archive", response_model=CompetitionPublic)
def archive_competition(
    user: CurrentUser, competition: CompetitionDep, session: SessionDep
) -> CompetitionPublic:
    """The owner or an admin closes a competition for good: read-only, boards kept."""
    lifecycle.archive(session, competition=competition, actor=user)
    return service.to_public(competition)


@router.put(
    "/{slug}/answer-key",
    response_model=AnswerKeyPublic,
    status_code=201,
    responses=error_responses(413),
)
def upload_answer_key(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    file: UploadFile,
    session: SessionDep,
    settings: SettingsDep,
) -> AnswerKeyPublic:
    """The key of the competition's only phase (409 naming the phase route when it has several)."""
    key = service.upload_answer_key(
        session,
        competition=competition,
        phase=phases.only_phase(competition, "answer-key"),
        source=file.file,
        uploader=user,
        settings=settings,
    )
    return AnswerKeyPublic.model_validate(key)


@router.put(
    "/{slug}/phases/{phase}/answer-key",
    response_model=AnswerKeyPublic,
    status_code=201,
    responses=error_responses(413),
)
def upload_phase_answer_key(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    phase: PhaseName,
    file: UploadFile,
    session: SessionDep,
    settings: SettingsDep,
) -> AnswerKeyPublic:
    """A phase's own answer key: same file rules, Usage split and versions as the legacy route."""
    key = service.upload_answer_key(
        session,
        competition=competition,
        phase=phases.get_phase(competition, phase),
        source=file.file,
        uploader=user,
        settings=settings,
    )
    return AnswerKeyPublic.model_validate(key)


@router.get("/{slug}/phases", response_model=list[PhasePublic])
def list_phases(competition: CompetitionDep) -> list[PhasePublic]:
    return [phases.to_public(p) for p in competition.phases]


@router.patch("/{slug}/phases/{phase}", response_model=PhasePublic)
def update_phase(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    phase: PhaseName,
    data: PhaseUpdate,
    session: SessionDep,
) -> PhasePublic:
    """A phase's title, dates, quotas, board and counting rule (audited)."""
    found = phases.get_phase(competition, phase)
    phases.update_phase(session, competition=competition, phase=found, data=data, actor=user)
    return phases.to_public(found)


@router.post("/{slug}/phases/{phase}/migrate", responses=error_responses(403, 404, 409))
def migrate_phase(
    request: Request,
    user: CurrentUser,
    competition: HostedCompetitionDep,
    phase: PhaseName,
    session: SessionDep,
) -> dict[str, Any]:
    """Carry the submissions the phase's ``migrate`` names into it now (it also runs by itself
    the first time the phase is reached after it opens); once per phase."""
    found = phases.get_phase(competition, phase)
    ids = migration.migrate_phase(
        session,
        competition=competition,
        phase=found,
        queue=request.app.state.scoring_queue,
        actor=user,
    )
    return {"phase": found.name, "migrated": len(ids), "submission_ids": ids}


@router.get("/{slug}/phases/{phase}/answer-key/versions", response_model=list[AnswerKeyPublic])
def list_phase_key_versions(
    competition: HostedCompetitionDep, phase: PhaseName
) -> list[AnswerKeyPublic]:
    found = phases.get_phase(competition, phase)
    return [AnswerKeyPublic.model_validate(k) for k in found.answer_keys]


@router.put(
    "/{slug}/custom-metric", response_model=CompetitionPublic, responses=error_responses(413)
)
def upload_custom_metric(
    user: CurrentUser,
    competition: HostedCompetitionDep,
    file: UploadFile,
    direction: Annotated[Literal["maximize", "minimize"], Form()],
    session: SessionDep,
    settings: SettingsDep,
) -> CompetitionPublic:
    service.upload_custom_metric(
        session,
        competition=competition,
        source=file.file,
        direction=direction,
        settings=settings,
        actor=user,
    )
    return service.to_public(competition)


@router.get("/{slug}/answer-key/versions", response_model=list[AnswerKeyPublic])
def list_answer_key_versions(competition: HostedCompetitionDep) -> list[AnswerKeyPublic]:
    phase = phases.only_phase(competition, "answer-key/versions")
    return [AnswerKeyPublic.model_validate(k) for k in phase.answer_keys]


@router.get("/{slug}/sample-submission", response_class=Response)
def sample_submission(
    slug: str, session: SessionDep, settings: SettingsDep, user: OptionalUser
) -> Response:
    """Public, like the competition's page: no token needed (but a draft's only by its hosts)."""
    competition = service.get_competition_by_slug(session, slug, user)
    return Response(
        content=service.sample_submission_csv(competition, settings),
        media_type="text/csv",
        headers={"Content-Disposition": content_disposition(f"{competition.slug}-sample.csv")},
    )


@router.get("/{slug}/export", response_class=Response)
def export_competition(
    competition: HostedCompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    with_submissions: Annotated[bool, Query()] = False,
) -> Response:
    """The competition as a Codabench v2 bundle that Podium imports back the same (hosts only);
    ``with_submissions`` adds every submission's file and scores, for archiving."""
    data = bundles.export_bundle(
        session, competition=competition, settings=settings, with_submissions=with_submissions
    )
    data = archive.add_files(data, _record_files(session, competition, user, settings))
    return Response(
        content=data,
        media_type="application/zip",
        headers={"Content-Disposition": content_disposition(f"{competition.slug}-bundle.zip")},
    )


def _record_files(
    session: Session, competition: Competition, user: User, settings: Settings
) -> dict[str, bytes]:
    """``ledger.jsonl`` (every entry, opened: the host's view) and every phase's boards."""
    signer = signer_for(settings.data_dir, settings.ledger_signing_key)
    lines = ledger.lines(
        session, competition=competition, signer=signer, host=True, limit=2**31 - 1
    )
    files = {"ledger.jsonl": "".join(lines).encode()}
    for phase in competition.phases:
        for board in ("public", "private"):
            files[f"boards/{phase.name}-{board}.csv"] = leaderboard.leaderboard_csv(
                session, competition=competition, board=board, user=user, phase_name=phase.name
            )
    return files


@router.get("/{slug}/hosts", response_model=list[HostPublic])
def list_hosts(competition: HostedCompetitionDep, session: SessionDep) -> list[HostPublic]:
    return [
        HostPublic(user=h.user.name, role=h.role.value, added_at=h.added_at)
        for h in hosts.hosts(session, competition=competition)
    ]


@router.post("/{slug}/hosts", response_model=HostPublic, status_code=status.HTTP_201_CREATED)
def add_host(
    body: HostCreate, competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> HostPublic:
    host = hosts.add_host(session, competition=competition, name=body.user, actor=user)
    return HostPublic(user=host.user.name, role=host.role.value, added_at=host.added_at)


@router.delete("/{slug}/hosts/{user_name}", status_code=status.HTTP_204_NO_CONTENT)
def remove_host(
    user_name: str, competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> Response:
    hosts.remove_host(session, competition=competition, name=user_name, actor=user)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
