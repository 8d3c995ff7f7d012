"""Hosts' webhook endpoints: register (the signing secret shown once), list, remove, enable
again, and each endpoint's deliveries with their attempts."""

from fastapi import APIRouter, Response, status

from app.deps import CurrentUser, HostedCompetitionDep, IdPath, SessionDep, SettingsDep
from app.errors import error_responses
from app.models import WebhookEndpoint
from app.pagination import PAGE_HEADERS, PageDep
from app.webhooks import service
from app.webhooks.schemas import (
    AttemptPublic,
    DeliveryPublic,
    WebhookCreate,
    WebhookCreated,
    WebhookPublic,
)

router = APIRouter(
    prefix="/competitions/{slug}/webhooks",
    tags=["webhooks"],
    responses=error_responses(403, 404, 409),
)


def _public(e: WebhookEndpoint) -> dict[str, object]:
    return dict(
        id=e.id,
        url=e.url,
        events=list(e.events),
        created_at=e.created_at,
        disabled_at=e.disabled_at,
        disabled_reason=e.disabled_reason,
        failures_in_a_row=e.failures_in_a_row,
    )


@router.post("", response_model=WebhookCreated, status_code=status.HTTP_201_CREATED)
def create_webhook(
    body: WebhookCreate,
    competition: HostedCompetitionDep,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> WebhookCreated:
    """An endpoint for some of the competition's events; the answer holds its signing secret
    (``whsec_…``), shown this once. A loopback, private or link-local URL is a 422 unless
    ``PODIUM_WEBHOOK_ALLOW_PRIVATE=true``."""
    endpoint = service.create(
        session,
        competition=competition,
        actor=user,
        url=body.url,
        events=list(body.events),
        allow_private=settings.webhook_allow_private,
    )
    return WebhookCreated(**_public(endpoint), secret=endpoint.secret)  # type: ignore[arg-type]


@router.get("", response_model=list[WebhookPublic])
def list_webhooks(competition: HostedCompetitionDep, session: SessionDep) -> list[WebhookPublic]:
    return [
        WebhookPublic(**_public(e))  # type: ignore[arg-type]
        for e in service.endpoints(session, competition=competition)
    ]


@router.delete("/{webhook_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_webhook(
    webhook_id: IdPath, competition: HostedCompetitionDep, session: SessionDep
) -> Response:
    endpoint = service.endpoint_of(session, competition=competition, endpoint_id=webhook_id)
    session.delete(endpoint)
    session.flush()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{webhook_id}/enable", response_model=WebhookPublic)
def enable_webhook(
    webhook_id: IdPath, competition: HostedCompetitionDep, session: SessionDep
) -> WebhookPublic:
    endpoint = service.endpoint_of(session, competition=competition, endpoint_id=webhook_id)
    return WebhookPublic(**_public(service.enable(session, endpoint=endpoint)))  # type: ignore[arg-type]


@router.get("/{webhook_id}/deliveries", response_model=list[DeliveryPublic], responses=PAGE_HEADERS)
def list_deliveries(
    webhook_id: IdPath, competition: HostedCompetitionDep, session: SessionDep, page: PageDep
) -> list[DeliveryPublic]:
    """The endpoint's deliveries, newest first, each with its attempts."""
    endpoint = service.endpoint_of(session, competition=competition, endpoint_id=webhook_id)
    found = service.deliveries_page(session, endpoint=endpoint, page=page)
    page.tell_total(found.total)
    tries = service.attempts_of(session, [d.id for d in found.items])
    return [
        DeliveryPublic(
            id=d.id,
            message_id=d.message_id,
            event=d.kind,
            status=d.status,  # type: ignore[arg-type]
            attempts=d.attempts,
            next_attempt_at=d.next_attempt_at if d.status == "pending" else None,
            created_at=d.created_at,
            delivered_at=d.delivered_at,
            last_status=d.last_status,
            last_error=d.last_error,
            tries=[
                AttemptPublic(at=a.at, status_code=a.status_code, error=a.error)
                for a in tries[d.id]
            ],
        )
        for d in found.items
    ]
