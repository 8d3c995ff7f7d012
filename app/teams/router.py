"""Teams: joining, invitations, merges and the rule that a user is on one team per competition."""

from fastapi import APIRouter, status

from app.deps import CompetitionDep, CurrentUser, IdPath, SessionDep
from app.errors import error_responses
from app.pagination import PAGE_HEADERS, PageDep
from app.teams import merge, service
from app.teams.schemas import InvitationCreate, InvitationPublic, TeamPublic

router = APIRouter(tags=["teams"], responses=error_responses(403, 404, 409))


@router.get("/competitions/{slug}/team", response_model=TeamPublic)
def my_team(competition: CompetitionDep, user: CurrentUser, session: SessionDep) -> TeamPublic:
    team = service.my_team(session, competition=competition, user=user)
    return service.team_view(session, team=team)


@router.post(
    "/competitions/{slug}/team/invitations",
    response_model=InvitationPublic,
    status_code=status.HTTP_201_CREATED,
)
def invite(
    body: InvitationCreate, competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> InvitationPublic:
    invitation = service.invite(
        session, competition=competition, inviter=user, invitee_name=body.user
    )
    return service.invitation_view(session, invitation=invitation)


@router.delete(
    "/competitions/{slug}/team/invitations/{invitation_id}", response_model=InvitationPublic
)
def withdraw(
    invitation_id: IdPath, competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> InvitationPublic:
    invitation = service.cancel(
        session, competition=competition, invitation_id=invitation_id, user=user
    )
    return service.invitation_view(session, invitation=invitation)


@router.get(
    "/competitions/{slug}/invitations",
    response_model=list[InvitationPublic],
    responses=PAGE_HEADERS,
)
def my_invitations(
    competition: CompetitionDep, user: CurrentUser, session: SessionDep, page: PageDep
) -> list[InvitationPublic]:
    found = service.invitations_for(session, competition=competition, user=user, page=page)
    page.tell_total(found.total)
    return service.invitation_views(session, invitations=found.items, competition=competition)


@router.post("/invitations/{invitation_id}/accept", response_model=TeamPublic)
def accept(invitation_id: IdPath, user: CurrentUser, session: SessionDep) -> TeamPublic:
    team = merge.accept(session, invitation_id=invitation_id, user=user)
    return service.team_view(session, team=team)


@router.post("/invitations/{invitation_id}/decline", response_model=InvitationPublic)
def decline(invitation_id: IdPath, user: CurrentUser, session: SessionDep) -> InvitationPublic:
    invitation = service.decline(session, invitation_id=invitation_id, user=user)
    return service.invitation_view(session, invitation=invitation)
