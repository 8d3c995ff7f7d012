"""Hosts' webhook endpoints, and the reader that turns events into their deliveries."""

import base64
import secrets
import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.errors import Conflict, NotFound
from app.events.stream import WEBHOOK_EVENTS
from app.models import (
    Competition,
    Event,
    User,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from app.pagination import Page, Paged, paginate
from app.webhooks import guard, payloads

MAX_ENDPOINTS = 10
# Deliveries an endpoint may have waiting; beyond, new events are dropped for it (recorded as
# failed at once), so a dead receiver and a busy competition cannot grow the table without bound.
MAX_PENDING = 1000


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def create(
    session: Session,
    *,
    competition: Competition,
    actor: User,
    url: str,
    events: list[str],
    allow_private: bool,
) -> WebhookEndpoint:
    guard.check_url(url, allow_private=allow_private)
    count = session.scalar(
        select(func.count())
        .select_from(WebhookEndpoint)
        .where(WebhookEndpoint.competition_id == competition.id)
    )
    if (count or 0) >= MAX_ENDPOINTS:
        raise Conflict(f"a competition has at most {MAX_ENDPOINTS} webhook endpoints")
    endpoint = WebhookEndpoint(
        competition_id=competition.id,
        url=url,
        events=sorted(set(events)),
        secret=new_secret(),
        created_by_id=actor.id,
        failures_in_a_row=0,
    )
    session.add(endpoint)
    session.flush()
    return endpoint


def endpoints(session: Session, *, competition: Competition) -> list[WebhookEndpoint]:
    return list(
        session.scalars(
            select(WebhookEndpoint)
            .where(WebhookEndpoint.competition_id == competition.id)
            .order_by(WebhookEndpoint.id)
        )
    )


def endpoint_of(session: Session, *, competition: Competition, endpoint_id: int) -> WebhookEndpoint:
    endpoint = session.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or endpoint.competition_id != competition.id:
        raise NotFound(f"no webhook {endpoint_id} in '{competition.slug}'")
    return endpoint


def enable(session: Session, *, endpoint: WebhookEndpoint) -> WebhookEndpoint:
    endpoint.disabled_at = None
    endpoint.disabled_reason = None
    endpoint.failures_in_a_row = 0
    session.flush()
    return endpoint


def deliveries_page(
    session: Session, *, endpoint: WebhookEndpoint, page: Page
) -> Paged[WebhookDelivery]:
    query = (
        select(WebhookDelivery)
        .where(WebhookDelivery.endpoint_id == endpoint.id)
        .order_by(WebhookDelivery.id.desc())
    )
    return paginate(session, query, page)


def attempts_of(session: Session, delivery_ids: list[int]) -> dict[int, list[WebhookAttempt]]:
    found: dict[int, list[WebhookAttempt]] = {i: [] for i in delivery_ids}
    if delivery_ids:
        for attempt in session.scalars(
            select(WebhookAttempt)
            .where(WebhookAttempt.delivery_id.in_(delivery_ids))
            .order_by(WebhookAttempt.id)
        ):
            found[attempt.delivery_id].append(attempt)
    return found


def handle(session: Session, event: Event) -> int:
    """The webhooks reader: a delivery per subscribed, enabled endpoint of the competition."""
    if event.kind not in WEBHOOK_EVENTS or event.competition_id is None:
        return 0
    targets = [
        e
        for e in session.scalars(
            select(WebhookEndpoint).where(
                WebhookEndpoint.competition_id == event.competition_id,
                WebhookEndpoint.disabled_at.is_(None),
            )
        )
        if event.kind in e.events
    ]
    if not targets:
        return 0
    competition = session.get(Competition, event.competition_id)
    if competition is None:
        return 0
    body = payloads.build(session, event, competition)
    for endpoint in targets:
        waiting = session.scalar(
            select(func.count())
            .select_from(WebhookDelivery)
            .where(WebhookDelivery.endpoint_id == endpoint.id, WebhookDelivery.status == "pending")
        )
        full = (waiting or 0) >= MAX_PENDING
        session.add(
            WebhookDelivery(
                endpoint_id=endpoint.id,
                event_id=event.id,
                kind=event.kind,
                message_id=f"msg_{uuid.uuid4().hex}",
                body=body,
                status="failed" if full else "pending",
                attempts=0,
                last_error=f"dropped: {MAX_PENDING} deliveries were waiting" if full else None,
            )
        )
    session.flush()
    return len(targets)
