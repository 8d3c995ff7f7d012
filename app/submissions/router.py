from typing import Annotated

from fastapi import APIRouter, Form, Request, UploadFile, status

from app.deps import CompetitionDep, CurrentUser, SessionDep, SettingsDep
from app.submissions import service
from app.submissions.schemas import (
    SubmissionAccepted,
    SubmissionHost,
    SubmissionPublic,
    SubmissionRevealed,
)

router = APIRouter(tags=["submissions"])

SubmissionView = SubmissionHost | SubmissionRevealed | SubmissionPublic


@router.post(
    "/competitions/{slug}/submissions",
    response_model=SubmissionAccepted,
    status_code=status.HTTP_202_ACCEPTED,
)
def create_submission(
    request: Request,
    competition: CompetitionDep,
    user: CurrentUser,
    file: UploadFile,
    session: SessionDep,
    settings: SettingsDep,
    description: Annotated[str, Form(max_length=1000)] = "",
) -> SubmissionAccepted:
    submission = service.create_submission(
        session,
        competition=competition,
        user=user,
        source=file.file,
        filename=file.filename or "submission.csv",
        description=description,
        settings=settings,
        queue=request.app.state.scoring_queue,
    )
    return SubmissionAccepted(id=submission.id, status=submission.status)


@router.get("/competitions/{slug}/submissions", response_model=list[SubmissionView])
def list_submissions(
    competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> list[SubmissionPublic]:
    submissions = service.team_submissions(session, competition=competition, user=user)
    return [
        service.view(session, submission=s, competition=competition, user=user)
        for s in submissions
    ]


@router.get("/submissions/{submission_id}", response_model=SubmissionView)
def get_submission(submission_id: int, user: CurrentUser, session: SessionDep) -> SubmissionPublic:
    submission = service.visible_submission(session, submission_id=submission_id, user=user)
    competition = submission.competition
    return service.view(session, submission=submission, competition=competition, user=user)
