"""Who takes part, on the pages: the rules tab and its "I accept" form, joining by the
competition's mode (from the Team tab, with an invitation link's secret if any), and the hosts'
Participants tab (approve or deny one or many, the CSV). The same services as the API."""

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.datastructures import URL

from app.deps import IdPath, SessionDep, SettingsDep
from app.errors import Unprocessable
from app.events.stream import WEBHOOK_EVENTS
from app.models import RegistrationStatus, WebhookEndpoint
from app.pagination import Page
from app.registration import announcements, participants, service
from app.registration.schemas import Audience
from app.teams import service as teams
from app.web.competition import PageCompetition, tab_context
from app.web.forms import HostForm, HostPage, MemberForm, Visit, form_post
from app.web.host import _show
from app.web.session import WebUser
from app.web.templating import render
from app.webhooks import service as webhooks

router = APIRouter(include_in_schema=False)


@router.get("/c/{slug}/rules", response_class=HTMLResponse)
def rules_page(
    request: Request, competition: PageCompetition, user: WebUser, session: SessionDep
) -> Response:
    registration = (
        service.registration_of(session, competition=competition, user=user) if user else None
    )
    return render(
        request,
        "rules.html",
        {
            **tab_context(session, competition, user, "rules"),
            "registration": registration,
            "accepted": registration is not None
            and registration.rules_version == competition.rules_version,
        },
    )


@form_post(router, "/c/{slug}/rules/accept", back="/rules")
def accept_rules(form: MemberForm, settings: SettingsDep) -> Response:
    registration = service.accept_rules(
        form.session, competition=form.competition, user=form.user, secret_key=settings.secret_key
    )
    if registration.status == RegistrationStatus.pending:
        return form.done("You accepted the rules; your request to join waits for the hosts.")
    if registration.status == RegistrationStatus.approved:
        teams.join(form.session, competition=form.competition, user=form.user)
    return form.done("You accepted the rules.")


@router.get("/c/{slug}/join")
def invitation_landing(
    slug: str, invitation: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """An invitation link's landing: the Team tab, with its join form carrying the secret."""
    target = URL(f"/c/{slug}/team").include_query_params(invitation=invitation)
    return RedirectResponse(str(target), status_code=303)


@form_post(router, "/c/{slug}/join", back="/team")
def join(
    form: MemberForm,
    settings: SettingsDep,
    accept_rules: Annotated[str, Form(max_length=8)] = "",
    message: Annotated[str, Form(max_length=2000)] = "",
    invitation: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    registration = service.join(
        form.session,
        competition=form.competition,
        user=form.user,
        secret_key=settings.secret_key,
        message=message,
        accept_rules=accept_rules == "on",
        invitation=invitation or None,
    )
    if registration.status == RegistrationStatus.pending:
        return form.done("Your request to join was sent to the hosts; you will hear by mail.")
    team, _created = teams.join(form.session, competition=form.competition, user=form.user)
    return form.done(f"You compete as team {team.name}.")


@router.get("/c/{slug}/host/participants", response_class=HTMLResponse)
def participants_page(
    visit: HostPage, status: Annotated[str | None, Query(max_length=16)] = None
) -> Response:
    rows = participants.participants(
        visit.session, competition=visit.competition, status=status or None
    )
    return _show(
        visit,
        "host/participants.html",
        "participants",
        participants=rows,
        status=status or "",
        news=announcements.recent(visit.session, competition=visit.competition, limit=5),
    )


@router.get("/c/{slug}/host/participants.csv")
def participants_csv(visit: HostPage) -> Response:
    return Response(
        participants.participants_csv(visit.session, competition=visit.competition),
        media_type="text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="{visit.competition.slug}-participants.csv"'
        },
    )


@form_post(router, "/c/{slug}/host/participants/decide", back="/host/participants")
async def decide(form: HostForm) -> Response:
    fields = await form.request.form(max_files=0, max_fields=1100)
    names = [str(n)[:64] for n in fields.getlist("name")][:1000]
    decision = str(fields.get("decision") or "")
    if not names:
        raise Unprocessable("choose at least one participant")
    if decision not in ("approve", "deny"):
        raise Unprocessable("choose approve or deny")
    service.decide(
        form.session,
        competition=form.competition,
        names=names,
        approve=decision == "approve",
        actor=form.user,
        message=str(fields.get("message") or "")[:2000],
    )
    verb = "approved" if decision == "approve" else "denied"
    return form.done(f"{len(names)} participant(s) {verb}.")


@form_post(router, "/c/{slug}/host/announcements", back="/host/participants")
def announce(
    form: HostForm,
    settings: SettingsDep,
    subject: Annotated[str, Form(max_length=200)] = "",
    body: Annotated[str, Form(max_length=20_000)] = "",
) -> Response:
    if not subject.strip() or not body.strip():
        raise Unprocessable("an announcement needs a subject and a text")
    announcements.post(
        form.session,
        competition=form.competition,
        actor=form.user,
        subject=subject.strip(),
        body=body,
        to=Audience(),
        per_day=settings.announcements_per_day,
    )
    return form.done("Your announcement is posted and will be mailed to the participants.")


@router.get("/c/{slug}/host/webhooks", response_class=HTMLResponse)
def webhooks_page(visit: HostPage) -> Response:
    return _webhooks(visit)


def _webhooks(visit: Visit, created: WebhookEndpoint | None = None) -> Response:
    endpoints = webhooks.endpoints(visit.session, competition=visit.competition)
    recent = {
        e.id: webhooks.deliveries_page(visit.session, endpoint=e, page=Page(limit=10)).items
        for e in endpoints
    }
    return _show(
        visit,
        "host/webhooks.html",
        "webhooks",
        endpoints=endpoints,
        recent=recent,
        events=WEBHOOK_EVENTS,
        created=created,
    )


@form_post(router, "/c/{slug}/host/webhooks", back="/host/webhooks")
async def add_webhook(form: HostForm, settings: SettingsDep) -> Response:
    fields = await form.request.form(max_files=0, max_fields=20)
    url = str(fields.get("url") or "").strip()[:2000]
    chosen = [str(e) for e in fields.getlist("events") if str(e) in WEBHOOK_EVENTS]
    if not url or not chosen:
        raise Unprocessable("give the endpoint's URL and at least one event")
    endpoint = webhooks.create(
        form.session,
        competition=form.competition,
        actor=form.user,
        url=url,
        events=chosen,
        allow_private=settings.webhook_allow_private,
    )
    # The page itself, not a redirect: the secret is shown once and never put in a cookie.
    return _webhooks(form, created=endpoint)


@form_post(router, "/c/{slug}/host/webhooks/{webhook_id}/enable", back="/host/webhooks")
def enable_webhook(form: HostForm, webhook_id: IdPath) -> Response:
    endpoint = webhooks.endpoint_of(
        form.session, competition=form.competition, endpoint_id=webhook_id
    )
    webhooks.enable(form.session, endpoint=endpoint)
    return form.done(f"Endpoint {endpoint.id} is enabled again.")
