"""Sending deliveries: each due one claimed under a lease (two processes never send one at
once; a sender that died is taken over), signed per Standard Webhooks (``webhook-id``, the same
on every attempt; ``webhook-timestamp``; ``webhook-signature`` by the ``standardwebhooks``
library), posted with a short timeout, no redirects followed, to the address the guard checked.

A failure is tried again on a schedule that spans about a day; an endpoint whose attempts fail
``PODIUM_WEBHOOK_DISABLE_AFTER`` times in a row is disabled, and its hosts told (an event).
"""

import ipaddress
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy.orm import Session, sessionmaker
from standardwebhooks.webhooks import Webhook

from app.config import Settings
from app.db import unit_of_work
from app.events.stream import WEBHOOK_DISABLED, emit
from app.jobs.claims import claim_due
from app.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from app.webhooks import guard

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=120)
# Seconds before each retry: 23 hours and a half in all, then the delivery is given up.
SCHEDULE = (10, 60, 300, 1800, 7200, 18000, 28800, 28800)
MAX_ERROR = 500


def sign(secret: str, message_id: str, at: datetime, body: str) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, at, body),
    }


def post(
    url: str,
    body: str,
    headers: dict[str, str],
    *,
    timeout: float,
    allow_private: bool,
) -> int:
    """POST once; returns the status code. Raises guard.Refused or httpx.HTTPError."""
    target = guard.resolve(url, allow_private=allow_private)
    host = target.address
    if isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address):
        host = f"[{host}]"
    pinned = f"{target.scheme}://{host}:{target.port}{target.path}"
    default_port = 443 if target.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        request = client.build_request(
            "POST",
            pinned,
            content=body.encode(),
            headers={
                **headers,
                "content-type": "application/json",
                "user-agent": "Podium-Webhooks/1",
                "host": host_header,
            },
            extensions={"sni_hostname": target.host} if target.scheme == "https" else {},
        )
        # The answer's body is not read: a receiver cannot make the sender hold its bytes.
        response = client.send(request, stream=True)
        response.close()
        return response.status_code


def deliver_due(
    factory: sessionmaker[Session],
    settings: Settings,
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    batch: int = 50,
) -> tuple[int, int]:
    """One pass over the deliveries due now: returns (delivered, failed attempts)."""
    claimed = claim_due(factory, WebhookDelivery, at=now(), lease=LEASE, batch=batch)
    delivered = failed = 0
    for delivery_id in claimed:
        if _deliver_one(factory, settings, delivery_id, now):
            delivered += 1
        else:
            failed += 1
    return delivered, failed


def _deliver_one(
    factory: sessionmaker[Session],
    settings: Settings,
    delivery_id: int,
    now: Callable[[], datetime],
) -> bool:
    with unit_of_work(factory) as session:
        delivery = session.get(WebhookDelivery, delivery_id)
        if delivery is None or delivery.status != "pending":
            return False
        endpoint = session.get(WebhookEndpoint, delivery.endpoint_id)
        if endpoint is None or endpoint.disabled_at is not None:
            delivery.status, delivery.lease_expires_at = "failed", None
            delivery.last_error = "the endpoint is disabled"
            return False
        url, secret = endpoint.url, endpoint.secret
        body, message_id = delivery.body, delivery.message_id
    status: int | None = None
    error: str | None = None
    try:
        status = post(
            url,
            body,
            sign(secret, message_id, now(), body),
            timeout=settings.webhook_timeout_seconds,
            allow_private=settings.webhook_allow_private,
        )
        if not 200 <= status < 300:
            error = f"answered {status}" + (
                " (redirects are not followed)" if 300 <= status < 400 else ""
            )
    except guard.Refused as exc:
        error = f"refused: {exc}"
    except httpx.TimeoutException:
        error = f"timed out after {settings.webhook_timeout_seconds:g} s"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"
    with unit_of_work(factory) as session:
        delivery = session.get(WebhookDelivery, delivery_id)
        endpoint = session.get(WebhookEndpoint, delivery.endpoint_id) if delivery else None
        if delivery is None or endpoint is None:
            return False
        session.add(
            WebhookAttempt(
                delivery_id=delivery.id, at=now(), status_code=status, error=error and error[:2000]
            )
        )
        delivery.lease_expires_at = None
        delivery.last_status = status
        delivery.last_error = error[:MAX_ERROR] if error else None
        if error is None:
            delivery.status, delivery.delivered_at = "delivered", now()
            endpoint.failures_in_a_row = 0
            return True
        if delivery.attempts > len(SCHEDULE):
            delivery.status = "failed"
        else:
            delivery.next_attempt_at = now() + timedelta(seconds=SCHEDULE[delivery.attempts - 1])
        endpoint.failures_in_a_row += 1
        if (
            endpoint.disabled_at is None
            and endpoint.failures_in_a_row >= settings.webhook_disable_after
        ):
            endpoint.disabled_at = now()
            endpoint.disabled_reason = (
                f"{endpoint.failures_in_a_row} attempts failed in a row; the last: {error}"
            )[:500]
            emit(
                session,
                WEBHOOK_DISABLED,
                competition_id=endpoint.competition_id,
                payload={
                    "endpoint_id": endpoint.id,
                    "url": endpoint.url,
                    "failures": endpoint.failures_in_a_row,
                },
            )
            log.warning("webhook endpoint %s disabled: %s", endpoint.id, endpoint.disabled_reason)
        return False
