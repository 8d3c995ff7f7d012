"""The OpenID providers an operator configured (``PODIUM_OIDC_PROVIDERS``): parsed and checked
once, refused with one line naming what is wrong.

Where Podium may send requests: only to a configured issuer and the endpoints its discovery
document names. An issuer is ``https://``; plain ``http://`` is accepted only for an issuer on
the loopback interface (127.0.0.1, ::1, localhost), which is how the tests run a real provider
on the same machine. The discovered endpoints follow the same rule (app.accounts.oidc_client).
"""

import ipaddress
import json
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

# A provider's name is in the sign-in and callback paths: short, lower case, URL-safe.
ProviderName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")]
MAX_PROVIDERS = 20


class OidcProvider(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ProviderName
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
    issuer: Annotated[str, StringConstraints(min_length=8, max_length=500)]
    client_id: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    client_secret: Annotated[str, StringConstraints(min_length=1, max_length=2000)]


class _Providers(BaseModel):
    providers: list[OidcProvider] = Field(max_length=MAX_PROVIDERS)


def is_loopback_host(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_problem(url: str, *, plain_http_allowed: bool) -> str | None:
    """Why ``url`` may not be called, or None: https (http only where allowed, on loopback)."""
    parts = urlsplit(url)
    if not parts.hostname or parts.query or parts.fragment or parts.username:
        return f"{url!r} is not a plain https:// URL (no query, fragment or credentials)"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and plain_http_allowed and is_loopback_host(parts.hostname):
        return None
    return f"{url!r} must use https:// (plain http:// only for an issuer on this machine)"


def issuer_allows_http(issuer: str) -> bool:
    parts = urlsplit(issuer)
    return parts.scheme == "http" and is_loopback_host(parts.hostname)


def parse_providers(raw: str) -> tuple[OidcProvider, ...]:
    """The providers in ``raw`` (a JSON list); ValueError of one line when it is refused."""
    try:
        loaded = json.loads(raw or "[]")
    except ValueError as exc:
        raise ValueError(f"not valid JSON ({exc}); expected a list of providers") from None
    if not isinstance(loaded, list):
        raise ValueError('expected a JSON list of {"name", "title", "issuer", "client_id", ...}')
    try:
        providers = _Providers(providers=loaded).providers
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"][1:]) or "list"
            problems.append(f"provider {where}: {error['msg']}")
        raise ValueError("; ".join(problems)) from None
    seen: set[str] = set()
    for provider in providers:
        if provider.name in seen:
            raise ValueError(f"provider name {provider.name!r} is given twice")
        seen.add(provider.name)
        problem = url_problem(provider.issuer, plain_http_allowed=True)
        if problem is not None:
            raise ValueError(f"provider {provider.name!r}: issuer {problem}")
    return tuple(providers)
