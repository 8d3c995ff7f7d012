"""A participant's own pages and forms: My submissions (upload, follow, select) and Team (join,
invite, accept, decline). Each form posts here, calls the service the API calls, and goes back
to its page; a refusal comes back as the service's own message."""

import json
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request, Response, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse
from sqlalchemy.orm import Session

from app.deps import IdPath, SessionDep, SettingsDep
from app.entry.gate import registration_of
from app.errors import Unprocessable, error_response
from app.ledger import service as ledger
from app.ledger.signing import signer_for
from app.models import Competition, Phase, User
from app.pagination import MAX_LIMIT, Page
from app.submissions import selection, service, visibility
from app.teams import merge
from app.teams import service as teams
from app.teams.merge import merge_allowance
from app.web.competition import PageCompetition, tab_context
from app.web.errors import wants_json
from app.web.forms import MemberForm, chosen, form_post
from app.web.own import own_page, submission_page, submissions_page
from app.web.session import SignedInUser, redirect
from app.web.templating import render

router = APIRouter(include_in_schema=False)


def _own_submissions(
    session: Session, competition: Competition, user: User, phase: Phase
) -> list[Any]:
    team = teams.find_team(session, competition=competition, user=user)
    if team is None:
        return []
    # Organisers' service view is every submission; this page is only ever one's own team's.
    rows = service.team_submissions(session, competition=competition, user=user)
    return [
        visibility.view(session, submission=s, competition=competition, user=user)
        for s in rows
        if s.team_id == team.id and s.phase_id == phase.id
    ]


PhaseQuery = Annotated[str | None, Query(max_length=64)]


@router.get("/c/{slug}/submissions", response_class=HTMLResponse)
def my_submissions(
    request: Request,
    competition: PageCompetition,
    session: SessionDep,
    user: SignedInUser,
    phase: PhaseQuery = None,
) -> Response:
    context = tab_context(session, competition, user, "submissions")
    shown = own_page(session, competition=competition, user=user, phase_name=phase)
    page = submissions_page(
        competition, shown.phase, is_host=context["is_host"], now=datetime.now(UTC)
    )
    return render(
        request,
        "submissions.html",
        {
            **context,
            **page,
            "submissions": _own_submissions(session, competition, user, shown.phase),
            "quota": shown.quota,
            "team": shown.team,
        },
    )


@router.get("/c/{slug}/submissions/{submission_id}", response_class=HTMLResponse)
def submission(
    request: Request,
    competition: PageCompetition,
    session: SessionDep,
    user: SignedInUser,
    submission_id: IdPath,
) -> Response:
    """One submission: its status, its failure, and a code submission's log (team and hosts)."""
    context = tab_context(session, competition, user, "submissions")
    shown = submission_page(
        session, competition=competition, submission_id=submission_id, user=user
    )
    settings = request.app.state.settings
    signer = signer_for(settings.data_dir, settings.ledger_signing_key)
    receipt = ledger.submission_receipt(session, signer, competition, submission_id)
    shown["receipt"] = json.dumps(receipt, indent=2, sort_keys=True) if receipt else None
    return render(request, "submission.html", {**context, **shown})


@router.get("/c/{slug}/submissions.json")
def my_submissions_json(
    competition: PageCompetition, session: SessionDep, user: SignedInUser, phase: PhaseQuery = None
) -> JSONResponse:
    """What the page script polls while a submission is queued or scoring."""
    shown = own_page(session, competition=competition, user=user, phase_name=phase)
    rows = _own_submissions(session, competition, user, shown.phase)
    return JSONResponse(
        {
            "submissions": [row.model_dump(mode="json") for row in rows],
            "quota": shown.quota.model_dump(mode="json"),
        }
    )


async def _entry_details(request: Request) -> str | None:
    """The form's ``details.<key>`` inputs as the JSON object the service checks against the
    phase's fields (the form was read, bounded, by the CSRF check: this reads its cache)."""
    form = await request.form()
    given = {
        name.removeprefix("details."): value
        for name, value in form.multi_items()
        if name.startswith("details.") and isinstance(value, str)
    }
    return json.dumps(given) if given else None


EntryDetails = Annotated[str | None, Depends(_entry_details)]


@form_post(router, "/c/{slug}/submissions", back="/submissions")
def upload(
    form: MemberForm,
    settings: SettingsDep,
    details: EntryDetails,
    file: UploadFile | None = None,
    description: Annotated[str, Form(max_length=1000)] = "",
    baseline: Annotated[bool, Form()] = False,
    phase: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    chosen_file = chosen(file, "a file")
    upload = service.create_submission(
        form.session,
        competition=form.competition,
        user=form.user,
        source=chosen_file.file,
        filename=chosen_file.filename or "",
        description=description,
        settings=settings,
        queue=form.request.app.state.scoring_queue,
        baseline=baseline,
        phase_name=phase or None,
        details=details,
    )
    submission, script = upload.submission, wants_json(form.request)
    if upload.refusal is not None:
        # Not raised: the failed submission stays in the team's history (the session commits).
        if script:
            return error_response(upload.refusal)
        return redirect(form.request, form.request.state.back, error=upload.refusal.detail)
    if script:
        return JSONResponse({"id": submission.id, "status": submission.status}, status_code=202)
    return form.done(f"Submission {submission.id} is queued for scoring.")


@form_post(router, "/c/{slug}/submissions/{submission_id}/select", back="/submissions")
def select(
    form: MemberForm, submission_id: IdPath, selected: Annotated[bool, Form()] = True
) -> Response:
    selection.set_selected(
        form.session, submission_id=submission_id, user=form.user, selected=selected
    )
    verb = "selected for the private board" if selected else "no longer selected"
    return form.done(f"Submission {submission_id} is {verb}.")


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
            "registration": registration_of(session, competition=competition, user=user),
            "invitation": request.query_params.get("invitation", "")[:200],
        },
    )


@form_post(router, "/c/{slug}/team/invitations", back="/team")
def invite(form: MemberForm, invitee: Annotated[str, Form(max_length=64)] = "") -> Response:
    if not invitee.strip():
        raise Unprocessable("name the user to invite")
    teams.invite(
        form.session, competition=form.competition, inviter=form.user, invitee_name=invitee.strip()
    )
    return form.done(f"Invitation sent to {invitee}.")


@form_post(router, "/c/{slug}/team/invitations/{invitation_id}/withdraw", back="/team")
def withdraw(form: MemberForm, invitation_id: IdPath) -> Response:
    teams.cancel(
        form.session, competition=form.competition, invitation_id=invitation_id, user=form.user
    )
    return form.done("Invitation withdrawn.")


@form_post(router, "/c/{slug}/invitations/{invitation_id}/accept", back="/team")
def accept(form: MemberForm, invitation_id: IdPath) -> Response:
    team = merge.accept(form.session, invitation_id=invitation_id, user=form.user)
    return form.done(f"You joined team {team.name}.")


@form_post(router, "/c/{slug}/invitations/{invitation_id}/decline", back="/team")
def decline(form: MemberForm, invitation_id: IdPath) -> Response:
    teams.decline(form.session, invitation_id=invitation_id, user=form.user)
    return form.done("Invitation declined.")
