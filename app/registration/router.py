"""Who takes part: rules, the hosts' participants list and decisions, invitation links and
announcements. Joining itself is ``POST …/join`` (app.teams.router), which asks here first."""

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.responses import JSONResponse

from app.deps import CompetitionDep, CurrentUser, HostedCompetitionDep, SessionDep, SettingsDep
from app.errors import NotFound, error_responses
from app.http.headers import content_disposition
from app.models import Announcement, Registration
from app.pagination import PAGE_HEADERS, PageDep
from app.registration import announcements, participants, service
from app.registration.schemas import (
    AnnouncementCreate,
    AnnouncementPublic,
    Decision,
    Decisions,
    InvitationCreate,
    InvitationLink,
    JoinRequest,
    Name,
    ParticipantPublic,
    RegistrationPublic,
    Status,
)
from app.teams import service as teams
from app.teams.schemas import TeamPublic

router = APIRouter(
    prefix="/competitions/{slug}",
    tags=["participants"],
    responses=error_responses(403, 404, 409),
)


@router.post(
    "/join",
    response_model=TeamPublic,
    status_code=status.HTTP_201_CREATED,
    responses={
        200: {"model": TeamPublic, "description": "Already joined: the existing team"},
        202: {
            "model": RegistrationPublic,
            "description": "Under approval: the request waits for the hosts (status pending)",
        },
    },
)
def join(
    competition: CompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    response: Response,
    body: JoinRequest | None = None,
) -> TeamPublic | JSONResponse:
    """Join (open), ask the hosts (approval: 202 ``"status": "pending"``) or join by invitation
    (invite: the allow list or ``invitation``); a competition with rules needs
    ``accept_rules`` (or ``POST …/rules/accept`` first), else 409 ``rules_not_accepted``."""
    body = body or JoinRequest()
    asked = service.join(
        session,
        competition=competition,
        user=user,
        secret_key=settings.secret_key,
        message=body.message,
        accept_rules=body.accept_rules,
        invitation=body.invitation,
    )
    if asked.status != "approved":
        return JSONResponse(
            status_code=status.HTTP_202_ACCEPTED,
            content=RegistrationPublic(
                status=asked.status.value,
                rules_version=asked.rules_version,
                rules_accepted_at=asked.rules_accepted_at,
                current_rules_version=competition.rules_version,
                requested_at=asked.requested_at,
                message=asked.message,
            ).model_dump(mode="json"),
        )
    team, created = teams.join(session, competition=competition, user=user)
    if not created:
        response.status_code = status.HTTP_200_OK
    return teams.team_view(session, team=team)


def registration_public(registration: Registration, current: int) -> RegistrationPublic:
    return RegistrationPublic(
        status=registration.status.value,
        rules_version=registration.rules_version,
        rules_accepted_at=registration.rules_accepted_at,
        current_rules_version=current,
        requested_at=registration.requested_at,
        message=registration.message,
    )


@router.post("/rules/accept", response_model=RegistrationPublic)
def accept_rules(
    competition: CompetitionDep, user: CurrentUser, session: SessionDep, settings: SettingsDep
) -> RegistrationPublic:
    """Accept the current rules ("I have read and accept the rules"): needed to join, and again
    after each change of the rules before the next submission."""
    registration = service.accept_rules(
        session, competition=competition, user=user, secret_key=settings.secret_key
    )
    return registration_public(registration, competition.rules_version)


@router.get("/registration", response_model=RegistrationPublic)
def my_registration(
    competition: CompetitionDep, user: CurrentUser, session: SessionDep
) -> RegistrationPublic:
    registration = service.registration_of(session, competition=competition, user=user)
    if registration is None:
        raise NotFound(f"you have not asked to join '{competition.slug}'")
    return registration_public(registration, competition.rules_version)


def _public(p: participants.Participant) -> ParticipantPublic:
    return ParticipantPublic(
        name=p.name,
        email=p.email,
        status=p.status,  # type: ignore[arg-type]
        team=p.team,
        joined_at=p.joined_at,
        submissions=p.submissions,
        message=p.message,
        rules_version=p.rules_version,
        rules_accepted_at=p.rules_accepted_at,
        decided_at=p.decided_at,
    )


@router.get("/participants", response_model=list[ParticipantPublic], responses=PAGE_HEADERS)
def list_participants(
    competition: HostedCompetitionDep,
    session: SessionDep,
    page: PageDep,
    status: Status | None = Query(default=None),
) -> list[ParticipantPublic]:
    found = participants.participants_page(
        session, competition=competition, page=page, status=status
    )
    page.tell_total(found.total)
    return [_public(p) for p in found.items]


@router.get("/participants.csv", responses={200: {"content": {"text/csv": {}}}})
def participants_csv(competition: HostedCompetitionDep, session: SessionDep) -> Response:
    return Response(
        participants.participants_csv(session, competition=competition),
        media_type="text/csv",
        headers={
            "Content-Disposition": content_disposition(f"{competition.slug}-participants.csv")
        },
    )


def _decide(
    session: SessionDep,
    competition: HostedCompetitionDep,
    user: CurrentUser,
    names: list[str],
    approve: bool,
    message: str,
) -> list[ParticipantPublic]:
    service.decide(
        session,
        competition=competition,
        names=names,
        approve=approve,
        actor=user,
        message=message,
    )
    wanted = set(names)
    return [
        _public(p)
        for p in participants.participants(session, competition=competition)
        if p.name in wanted
    ]


@router.post("/participants/approve", response_model=list[ParticipantPublic])
def approve_many(
    body: Decisions, competition: HostedCompetitionDep, user: CurrentUser, session: SessionDep
) -> list[ParticipantPublic]:
    return _decide(session, competition, user, body.names, True, body.message)


@router.post("/participants/deny", response_model=list[ParticipantPublic])
def deny_many(
    body: Decisions, competition: HostedCompetitionDep, user: CurrentUser, session: SessionDep
) -> list[ParticipantPublic]:
    return _decide(session, competition, user, body.names, False, body.message)


@router.post("/participants/{name}/approve", response_model=ParticipantPublic)
def approve(
    name: Name,
    competition: HostedCompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    body: Decision | None = None,
) -> ParticipantPublic:
    return _decide(session, competition, user, [name], True, body.message if body else "")[0]


@router.post("/participants/{name}/deny", response_model=ParticipantPublic)
def deny(
    name: Name,
    competition: HostedCompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    body: Decision | None = None,
) -> ParticipantPublic:
    return _decide(session, competition, user, [name], False, body.message if body else "")[0]


@router.post("/invitations", response_model=InvitationLink, status_code=status.HTTP_201_CREATED)
def invitation_link(
    body: InvitationCreate,
    request: Request,
    competition: HostedCompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> InvitationLink:
    """A link that lets its holders join an invite-only competition (``uses`` times, for
    ``days``); shown once."""
    url, expires_at = service.invite_link(
        session,
        competition=competition,
        actor=user,
        secret_key=settings.secret_key,
        uses=body.uses,
        days=body.days,
        base_url=settings.public_url or str(request.base_url),
    )
    return InvitationLink(url=url, expires_at=expires_at, uses=body.uses)


def announcement_public(a: Announcement) -> AnnouncementPublic:
    return AnnouncementPublic(
        id=a.id,
        subject=a.subject,
        body=a.body,
        created_at=a.created_at,
        author=a.author.name if a.author else None,
    )


@router.post(
    "/announcements",
    response_model=AnnouncementPublic,
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(422, 429),
)
def post_announcement(
    body: AnnouncementCreate,
    competition: HostedCompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> AnnouncementPublic:
    """News on the competition's page, mailed to the chosen participants who have not opted out
    (after the commit, by the notifications reader)."""
    announcement = announcements.post(
        session,
        competition=competition,
        actor=user,
        subject=body.subject,
        body=body.body,
        to=body.to,
        per_day=settings.announcements_per_day,
    )
    return announcement_public(announcement)


@router.get("/announcements", response_model=list[AnnouncementPublic])
def list_announcements(
    competition: CompetitionDep, session: SessionDep
) -> list[AnnouncementPublic]:
    return [announcement_public(a) for a in announcements.recent(session, competition=competition)]
