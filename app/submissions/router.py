from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request, UploadFile, status
from fastapi.responses import JSONResponse, Response, StreamingResponse

from app.competitions.phases import board_phase, get_phase
from app.config import Settings
from app.deps import (
    CompetitionDep,
    CurrentUser,
    HostedCompetitionDep,
    HostedSubmissionDep,
    IdPath,
    SessionDep,
    SettingsDep,
    UploadUser,
    finish_here,
    upload_competition,
)
from app.errors import error_response, error_responses
from app.http.headers import content_disposition
from app.leaderboard import moderation
from app.ledger import service as ledger
from app.ledger.signing import signer_for
from app.pagination import PAGE_HEADERS, PageDep
from app.storage import iter_chunks
from app.submissions import attachments, export, rerun, selection, service, visibility
from app.submissions.quota import quota_for
from app.submissions.schemas import (
    CodeAttached,
    HideRequest,
    QuotaPublic,
    RunLogPublic,
    ScoreVersion,
    SubmissionAccepted,
    SubmissionPublic,
    SubmissionView,
)
from app.teams.service import find_team

router = APIRouter(tags=["submissions"], responses=error_responses(403, 404, 409))


@router.post(
    "/competitions/{slug}/submissions",
    response_model=SubmissionAccepted,
    status_code=status.HTTP_202_ACCEPTED,
    responses=error_responses(413, 429),
)
def create_submission(
    request: Request,
    slug: str,
    user: UploadUser,
    file: UploadFile,
    session: SessionDep,
    settings: SettingsDep,
    description: Annotated[str, Form(max_length=1000)] = "",
    baseline: Annotated[bool, Form()] = False,
    phase: Annotated[str | None, Form(max_length=64)] = None,
    details: Annotated[str | None, Form(max_length=16_384)] = None,
) -> SubmissionAccepted | JSONResponse:
    """File a submission into the phase open now, or the one the form field ``phase`` names
    (needed when several are open)."""
    upload = service.create_submission(
        session,
        competition=upload_competition(session, slug, user),
        user=user,
        source=file.file,
        filename=file.filename or "submission.csv",
        description=description,
        settings=settings,
        queue=request.app.state.scoring_queue,
        baseline=baseline,
        phase_name=phase or None,
        details=details,
    )
    finish_here(session)  # the commit on this thread: one thread hop fewer per upload
    receipt = upload_receipt(upload, slug, settings)
    if upload.refusal is not None:
        # Answered, not raised: the failed submission is committed into the team's history.
        upload.refusal.extra["receipt"] = receipt
        return error_response(upload.refusal)
    return SubmissionAccepted(
        id=upload.submission.id, status=upload.submission.status, receipt=receipt
    )


def upload_receipt(upload: service.Upload, slug: str, settings: Settings) -> dict[str, Any] | None:
    """The upload's receipt, once its entry has its place in the chain (after the commit)."""
    if upload.entry is None or upload.entry.seq is None:
        return None
    signer = signer_for(settings.data_dir, settings.ledger_signing_key)
    return ledger.receipt(signer, slug, upload.entry)


@router.get(
    "/competitions/{slug}/submissions", response_model=list[SubmissionView], responses=PAGE_HEADERS
)
def list_submissions(
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    page: PageDep,
    phase: Annotated[str | None, Query(max_length=64)] = None,
) -> list[SubmissionPublic]:
    """The team's submissions (a host's: everyone's), newest first; ``phase``: that phase's."""
    found = service.team_submissions_page(
        session,
        competition=competition,
        user=user,
        page=page,
        phase=get_phase(competition, phase) if phase else None,
    )
    page.tell_total(found.total)
    return visibility.views(session, submissions=found.items, competition=competition, user=user)


@router.get(
    "/competitions/{slug}/submissions.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}},
)
def download_submissions_csv(
    competition: HostedCompetitionDep,
    session: SessionDep,
    phase: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    """Hosts: every submission of a phase (default: the current one) with every column's public
    and private value."""
    found = board_phase(competition, phase)
    body = export.submissions_csv(session, competition=competition, phase=found)
    filename = f"{competition.slug}-{found.name}-submissions.csv"
    return Response(
        body, media_type="text/csv", headers={"Content-Disposition": content_disposition(filename)}
    )


@router.get(
    "/competitions/{slug}/submissions.zip",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/zip": {}}}, **error_responses(503)},
)
def download_submissions_zip(
    competition: HostedCompetitionDep,
    session: SessionDep,
    settings: SettingsDep,
    phase: Annotated[str | None, Query(max_length=64)] = None,
) -> StreamingResponse:
    """Hosts: the files of every submission of a phase, as a zip streamed while it is written."""
    found = board_phase(competition, phase)
    filename = f"{competition.slug}-{found.name}-submissions.zip"
    return StreamingResponse(
        export.submissions_zip(session, phase=found, settings=settings),
        media_type="application/zip",
        headers={"Content-Disposition": content_disposition(filename)},
    )


@router.get("/competitions/{slug}/quota", response_model=QuotaPublic)
def get_quota(
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    phase: Annotated[str | None, Query(max_length=64)] = None,
) -> QuotaPublic:
    """The team's quota in a phase (default: the current one)."""
    team = find_team(session, competition=competition, user=user)
    found = board_phase(competition, phase)
    return quota_for(
        session, competition=competition, team=team, now=datetime.now(UTC), phase=found
    )


@router.get("/submissions/{submission_id}", response_model=SubmissionView)
def get_submission(
    submission_id: IdPath, user: CurrentUser, session: SessionDep
) -> SubmissionPublic:
    submission = service.visible_submission(session, submission_id=submission_id, user=user)
    return visibility.view(
        session, submission=submission, competition=submission.competition, user=user
    )


@router.get(
    "/submissions/{submission_id}/file",
    response_class=StreamingResponse,
    responses=error_responses(503),
)
def download_submission(
    submission_id: IdPath, user: CurrentUser, session: SessionDep, settings: SettingsDep
) -> StreamingResponse:
    submission, source = service.submission_file(
        session, submission_id=submission_id, user=user, settings=settings
    )
    return StreamingResponse(
        iter_chunks(source),
        media_type="text/csv",
        headers={
            "Content-Length": str(submission.size_bytes),
            "Content-Disposition": content_disposition(submission.filename),
        },
    )


@router.put(
    "/competitions/{slug}/submissions/{submission_id}/code",
    response_model=CodeAttached,
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(413),
)
def attach_code(
    submission_id: IdPath,
    file: UploadFile,
    competition: CompetitionDep,
    user: UploadUser,
    session: SessionDep,
    settings: SettingsDep,
) -> CodeAttached:
    """Attach the code behind a predictions submission (its team, when the hosts ask): private
    to the team and the hosts, its SHA-256 recorded in the competition's chain."""
    submission, entry = attachments.attach_code(
        session,
        competition=competition,
        submission_id=submission_id,
        user=user,
        source=file.file,
        settings=settings,
    )
    finish_here(session)  # the entry's place in the chain is known once committed
    signer = signer_for(settings.data_dir, settings.ledger_signing_key)
    return CodeAttached(
        submission_id=submission.id,
        sha256=submission.attachment_sha256 or "",
        receipt=ledger.receipt(signer, competition.slug, entry),
    )


@router.get(
    "/competitions/{slug}/submissions/{submission_id}/code",
    response_class=StreamingResponse,
    responses=error_responses(503),
)
def download_attached_code(
    submission_id: IdPath,
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> StreamingResponse:
    """The attached code, for the hosts and the submission's team."""
    submission, source = attachments.attached_code(
        session, competition=competition, submission_id=submission_id, user=user, settings=settings
    )
    return StreamingResponse(
        iter_chunks(source),
        media_type="application/octet-stream",
        headers={"Content-Disposition": content_disposition(f"submission-{submission.id}-code")},
    )


@router.get("/submissions/{submission_id}/log", response_model=RunLogPublic)
def submission_log(submission_id: IdPath, user: CurrentUser, session: SessionDep) -> RunLogPublic:
    return service.submission_log(session, submission_id=submission_id, user=user)


@router.post("/submissions/{submission_id}/rerun", response_model=SubmissionView)
def rerun_submission(
    request: Request,
    submission: HostedSubmissionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> SubmissionPublic:
    rerun.rerun_submission(
        session,
        submission=submission,
        actor=user,
        queue=request.app.state.scoring_queue,
        settings=settings,
    )
    return visibility.view(
        session, submission=submission, competition=submission.competition, user=user
    )


@router.get("/submissions/{submission_id}/scores", response_model=list[ScoreVersion])
def submission_scores(submission: HostedSubmissionDep, session: SessionDep) -> list[ScoreVersion]:
    return visibility.score_versions(session, submission=submission)


@router.post("/submissions/{submission_id}/select", response_model=SubmissionView)
def select_submission(
    submission_id: IdPath, user: CurrentUser, session: SessionDep
) -> SubmissionPublic:
    submission = selection.set_selected(
        session, submission_id=submission_id, user=user, selected=True
    )
    return visibility.view(
        session, submission=submission, competition=submission.competition, user=user
    )


@router.delete("/submissions/{submission_id}/select", response_model=SubmissionView)
def unselect_submission(
    submission_id: IdPath, user: CurrentUser, session: SessionDep
) -> SubmissionPublic:
    submission = selection.set_selected(
        session, submission_id=submission_id, user=user, selected=False
    )
    return visibility.view(
        session, submission=submission, competition=submission.competition, user=user
    )


@router.post("/submissions/{submission_id}/hide", response_model=SubmissionView)
def hide_submission(
    submission: HostedSubmissionDep,
    user: CurrentUser,
    session: SessionDep,
    body: HideRequest | None = None,
) -> SubmissionPublic:
    moderation.set_hidden(
        session,
        submission=submission,
        hidden=True,
        reason=(body or HideRequest()).reason,
        actor=user,
    )
    return visibility.view(
        session, submission=submission, competition=submission.competition, user=user
    )


@router.delete("/submissions/{submission_id}/hide", response_model=SubmissionView)
def unhide_submission(
    submission: HostedSubmissionDep, user: CurrentUser, session: SessionDep
) -> SubmissionPublic:
    moderation.set_hidden(session, submission=submission, hidden=False, reason="", actor=user)
    return visibility.view(
        session, submission=submission, competition=submission.competition, user=user
    )
