"""A participant's own pages and forms: My submissions (upload, follow, select) and Team (join,
invite, accept, decline). Each form posts here, calls the service the API calls, and goes back
to its page; a refusal comes back as the service's own message."""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, Response, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse
from sqlalchemy.orm import Session

from app.deps import IdPath, SessionDep, SettingsDep
from app.errors import Unprocessable, error_response
from app.models import Competition, User
from app.pagination import MAX_LIMIT, Page
from app.submissions import selection, service, visibility
from app.submissions.quota import quota_for
from app.teams import merge
from app.teams import service as teams
from app.teams.merge import merge_allowance
from app.web.competition import PageCompetition, back_to, tab_context
from app.web.errors import wants_json
from app.web.session import CsrfChecked, SignedInUser, redirect
from app.web.templating import render

router = APIRouter(include_in_schema=False)


def _own_submissions(session: Session, competition: Competition, user: User) -> list[Any]:
    team = teams.find_team(session, competition=competition, user=user)
    if team is None:
        return []
    # Organisers' service view is every submission; this page is only ever one's own team's.
    rows = service.team_submissions(session, competition=competition, user=user)
    return [
        visibility.view(session, submission=s, competition=competition, user=user)
        for s in rows
        if s.team_id == team.id
    ]


@router.get("/c/{slug}/submissions", response_class=HTMLResponse)
def my_submissions(
    request: Request, competition: PageCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    team = teams.find_team(session, competition=competition, user=user)
    return render(
        request,
        "submissions.html",
        {
            **tab_context(session, competition, user, "submissions"),
            "submissions": _own_submissions(session, competition, user),
            "quota": quota_for(session, competition=competition, team=team, now=datetime.now(UTC)),
            "team": team,
        },
    )


@router.get("/c/{slug}/submissions.json")
def my_submissions_json(
    competition: PageCompetition, session: SessionDep, user: SignedInUser
) -> JSONResponse:
    """What the page script polls while a submission is queued or scoring."""
    rows = _own_submissions(session, competition, user)
    team = teams.find_team(session, competition=competition, user=user)
    quota = quota_for(session, competition=competition, team=team, now=datetime.now(UTC))
    return JSONResponse(
        {
            "submissions": [row.model_dump(mode="json") for row in rows],
            "quota": quota.model_dump(mode="json"),
        }
    )


@router.post("/c/{slug}/submissions", dependencies=[CsrfChecked, back_to("/submissions")])
def upload(
    request: Request,
    competition: PageCompetition,
    session: SessionDep,
    settings: SettingsDep,
    user: SignedInUser,
    file: UploadFile | None = None,
    description: Annotated[str, Form(max_length=1000)] = "",
    baseline: Annotated[bool, Form()] = False,
) -> Response:
    if file is None or not file.filename:
        raise Unprocessable("choose a file to upload")
    upload = service.create_submission(
        session,
        competition=competition,
        user=user,
        source=file.file,
        filename=file.filename,
        description=description,
        settings=settings,
        queue=request.app.state.scoring_queue,
        baseline=baseline,
    )
    submission = upload.submission
    if upload.refusal is not None:
        # Not raised: the failed submission stays in the team's history (the session commits).
        if wants_json(request):
            return error_response(upload.refusal)
        return redirect(request, f"/c/{competition.slug}/submissions", error=upload.refusal.detail)
    if wants_json(request):
        return JSONResponse({"id": submission.id, "status": submission.status}, status_code=202)
    return redirect(
        request,
        f"/c/{competition.slug}/submissions",
        ok=f"Submission {submission.id} is queued for scoring.",
    )


@router.post(
    "/c/{slug}/submissions/{submission_id}/select",
    dependencies=[CsrfChecked, back_to("/submissions")],
)
def select(
    request: Request,
    competition: PageCompetition,
    submission_id: IdPath,
    session: SessionDep,
    user: SignedInUser,
    selected: Annotated[bool, Form()] = True,
) -> Response:
    selection.set_selected(session, submission_id=submission_id, user=user, selected=selected)
    verb = "selected for the private board" if selected else "no longer selected"
    return redirect(
        request, f"/c/{competition.slug}/submissions", ok=f"Submission {submission_id} is {verb}."
    )


@router.get("/c/{slug}/team", response_class=HTMLResponse)
def team_page(
    request: Request, competition: PageCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    team = teams.find_team(session, competition=competition, user=user)
    received = teams.invitations_for(
        session, competition=competition, user=user, page=Page(limit=MAX_LIMIT)
    ).items
    return render(
        request,
        "team.html",
        {
            **tab_context(session, competition, user, "team"),
            "team": teams.team_view(session, team=team) if team else None,
            "is_leader": team is not None and teams.leader_id(session, team) == user.id,
            "received": [teams.invitation_view(session, invitation=i) for i in received],
            "allowance": merge_allowance(competition, datetime.now(UTC)),
        },
    )


@router.post("/c/{slug}/join", dependencies=[CsrfChecked, back_to("/team")])
def join(
    request: Request, competition: PageCompetition, session: SessionDep, user: SignedInUser
) -> Response:
    team, _created = teams.join(session, competition=competition, user=user)
    return redirect(request, f"/c/{competition.slug}/team", ok=f"You compete as team {team.name}.")


@router.post("/c/{slug}/team/invitations", dependencies=[CsrfChecked, back_to("/team")])
def invite(
    request: Request,
    competition: PageCompetition,
    session: SessionDep,
    user: SignedInUser,
    invitee: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    if not invitee.strip():
        raise Unprocessable("name the user to invite")
    teams.invite(session, competition=competition, inviter=user, invitee_name=invitee.strip())
    return redirect(request, f"/c/{competition.slug}/team", ok=f"Invitation sent to {invitee}.")


@router.post(
    "/c/{slug}/team/invitations/{invitation_id}/withdraw",
    dependencies=[CsrfChecked, back_to("/team")],
)
def withdraw(
    request: Request,
    competition: PageCompetition,
    invitation_id: int,
    session: SessionDep,
    user: SignedInUser,
) -> Response:
    teams.cancel(session, competition=competition, invitation_id=invitation_id, user=user)
    return redirect(request, f"/c/{competition.slug}/team", ok="Invitation withdrawn.")


@router.post(
    "/c/{slug}/invitations/{invitation_id}/accept", dependencies=[CsrfChecked, back_to("/team")]
)
def accept(
    request: Request,
    competition: PageCompetition,
    invitation_id: int,
    session: SessionDep,
    user: SignedInUser,
) -> Response:
    team = merge.accept(session, invitation_id=invitation_id, user=user)
    return redirect(request, f"/c/{competition.slug}/team", ok=f"You joined team {team.name}.")


@router.post(
    "/c/{slug}/invitations/{invitation_id}/decline", dependencies=[CsrfChecked, back_to("/team")]
)
def decline(
    request: Request,
    competition: PageCompetition,
    invitation_id: int,
    session: SessionDep,
    user: SignedInUser,
) -> Response:
    teams.decline(session, invitation_id=invitation_id, user=user)
    return redirect(request, f"/c/{competition.slug}/team", ok="Invitation declined.")
