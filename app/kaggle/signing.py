"""Short-lived signed URLs, as Kaggle hands out for uploads and downloads: the URL itself is the
permission (the official client PUTs and follows redirects without its credentials)."""

import base64
import hashlib
import hmac
import json
import time
from typing import Any

from app.errors import NotFound


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign(payload: dict[str, Any], *, secret_key: str, ttl_seconds: int) -> str:
    body = _b64(json.dumps({**payload, "exp": int(time.time()) + ttl_seconds}).encode())
    mac = hmac.new(secret_key.encode(), body.encode(), hashlib.sha256).digest()
    return f"{body}.{_b64(mac[:20])}"


def verify(token: str, *, secret_key: str, purpose: str) -> dict[str, Any]:
    """The payload of a valid, unexpired token made for ``purpose``; 404 for anything else."""
    gone = NotFound("this link is invalid or has expired")
    body, _, mac = token.partition(".")
    expected = _b64(hmac.new(secret_key.encode(), body.encode(), hashlib.sha256).digest()[:20])
    if not mac or not hmac.compare_digest(mac, expected):
        raise gone
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        raise gone from None
    if not isinstance(payload, dict) or payload.get("p") != purpose:
        raise gone
    if int(payload.get("exp", 0)) < time.time():
        raise gone
    return payload
