"""Talking to an OpenID provider: discovery, the authorization URL (code flow with PKCE S256),
the code exchanged for tokens, and the ID token checked (signature against the provider's
JWKS, issuer, audience, expiry, nonce) with Authlib's ``CodeIDToken`` over joserfc, as Authlib's
own clients do.

Every request has short timeouts and a bounded answer, and goes only to the configured issuer
or an endpoint its discovery document names (https, or http on loopback for an http loopback
issuer: app.accounts.oidc_settings). Discovery documents and key sets are cached per issuer for
an hour; an ID token signed with a key not in the cache fetches the key set once more.
"""

import base64
import json
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from app.accounts.oidc_settings import OidcProvider, issuer_allows_http, url_problem
from app.errors import AppError

TIMEOUT = httpx.Timeout(5.0, connect=3.0)
MAX_ANSWER_BYTES = 256 * 1024
CACHE_SECONDS = 3600.0
MAX_CACHED = 64
# Clocks of two machines differ a little; an ID token is trusted this long past its expiry.
LEEWAY_SECONDS = 60
SCOPE = "openid email profile"
MAX_SUBJECT_LENGTH = 255  # OIDC Core 2: at most 255 ASCII characters (oidc_identities.subject)
# Asymmetric signatures only: "none" and the client-secret HMACs are never accepted.
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")


class ProviderDown(AppError):
    """The provider cannot be reached, or answered with an error or nonsense: a 502 page that
    says so, never a 500."""

    status_code = 502
    code = "provider_unavailable"

    def __init__(self, provider: OidcProvider, why: str) -> None:
        super().__init__(
            f"Signing in with {provider.title} is not possible right now: {why}. "
            "Try again later, or sign in another way.",
            extra={"provider": provider.name},
        )


class SignInRefused(AppError):
    """The provider's answer does not prove who signed in (bad state, ID token, nonce...)."""

    status_code = 400
    code = "sign_in_refused"


@dataclass(frozen=True)
class Discovery:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str | None
    algorithms: tuple[str, ...]
    basic_auth: bool  # client_secret_basic (the default) or client_secret_post


@dataclass
class _Cached:
    at: float
    discovery: Discovery
    jwks: dict[str, Any] | None = None


_cache: dict[tuple[str, str], _Cached] = {}
_lock = threading.Lock()


def forget_cache() -> None:
    with _lock:
        _cache.clear()


@dataclass(frozen=True)
class _Answer:
    status_code: int
    body: bytes


def _fetch(
    provider: OidcProvider,
    method: str,
    url: str,
    *,
    data: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> _Answer:
    problem = url_problem(url, plain_http_allowed=issuer_allows_http(provider.issuer))
    if problem is not None:
        raise ProviderDown(
            provider, f"its discovery document names an endpoint Podium refuses: {problem}"
        )
    try:
        # No proxies from the environment and no redirects: the request goes where it was sent.
        with httpx.Client(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as client:
            with client.stream(method, url, data=data, headers=headers) as response:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise ProviderDown(provider, "it answered with far too much data")
                return _Answer(response.status_code, bytes(body))
    except httpx.HTTPError as exc:
        raise ProviderDown(provider, f"it could not be reached ({type(exc).__name__})") from None


def _json(provider: OidcProvider, answer: _Answer, what: str) -> dict[str, Any]:
    try:
        value = json.loads(answer.body)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ProviderDown(provider, f"its {what} is not a JSON object (HTTP {answer.status_code})")
    return value


def discover(provider: OidcProvider) -> Discovery:
    key = (provider.name, provider.issuer)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and time.monotonic() - cached.at < CACHE_SECONDS:
            return cached.discovery
    url = provider.issuer.rstrip("/") + "/.well-known/openid-configuration"
    response = _fetch(provider, "GET", url)
    if response.status_code != 200:
        raise ProviderDown(provider, f"its discovery document answered HTTP {response.status_code}")
    meta = _json(provider, response, "discovery document")
    issuer = meta.get("issuer")
    # The spec asks for the very same string; a trailing slash is forgiven, as the issuer
    # Podium then checks in ID tokens is the provider's own spelling.
    if not isinstance(issuer, str) or issuer.rstrip("/") != provider.issuer.rstrip("/"):
        raise ProviderDown(provider, f"it calls itself {issuer!r}, not {provider.issuer!r}")
    endpoints = {}
    for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        value = meta.get(name)
        if not isinstance(value, str):
            raise ProviderDown(provider, f"its discovery document has no {name}")
        endpoints[name] = value
    userinfo = meta.get("userinfo_endpoint")
    offered = meta.get("id_token_signing_alg_values_supported") or ["RS256"]
    algorithms = tuple(a for a in SIGNING_ALGORITHMS if a in offered) or ("RS256",)
    methods = meta.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    found = Discovery(
        issuer=issuer,
        userinfo_endpoint=userinfo if isinstance(userinfo, str) else None,
        algorithms=algorithms,
        basic_auth="client_secret_basic" in methods or "client_secret_post" not in methods,
        **endpoints,
    )
    with _lock:
        if len(_cache) >= MAX_CACHED:
            _cache.pop(min(_cache, key=lambda k: _cache[k].at))
        _cache[key] = _Cached(time.monotonic(), found)
    return found


def _jwks(provider: OidcProvider, discovery: Discovery, *, fresh: bool) -> KeySet:
    key = (provider.name, provider.issuer)
    with _lock:
        cached = _cache.get(key)
        known = cached.jwks if cached is not None and not fresh else None
    if known is None:
        response = _fetch(provider, "GET", discovery.jwks_uri)
        if response.status_code != 200:
            raise ProviderDown(provider, f"its key set answered HTTP {response.status_code}")
        known = _json(provider, response, "key set")
        with _lock:
            if key in _cache:
                _cache[key].jwks = known
    try:
        return KeySet.import_key_set(known)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError):
        raise ProviderDown(provider, "its key set cannot be read") from None


# --- The flow ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Started:
    url: str
    nonce: str
    code_verifier: str


def authorization_url(
    provider: OidcProvider, discovery: Discovery, *, redirect_uri: str, state: str
) -> Started:
    verifier, nonce = generate_token(48), generate_token(24)
    url = prepare_grant_uri(
        discovery.authorization_endpoint,
        provider.client_id,
        "code",
        redirect_uri=redirect_uri,
        scope=SCOPE,
        state=state,
        nonce=nonce,
        code_challenge=create_s256_code_challenge(verifier),
        code_challenge_method="S256",
    )
    return Started(url=url, nonce=nonce, code_verifier=verifier)


def exchange_code(
    provider: OidcProvider,
    discovery: Discovery,
    *,
    code: str,
    redirect_uri: str,
    code_verifier: str,
) -> dict[str, Any]:
    """The provider's tokens for ``code``; a refusal (4xx) is the sign-in's, a 5xx or an
    unreachable endpoint the provider's."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": code_verifier,
    }
    headers = {"Accept": "application/json"}
    if discovery.basic_auth:
        # RFC 6749 2.3.1: each part form-encoded before the two are joined.
        pair = f"{quote(provider.client_id, safe='')}:{quote(provider.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        form |= {"client_id": provider.client_id, "client_secret": provider.client_secret}
    response = _fetch(provider, "POST", discovery.token_endpoint, data=form, headers=headers)
    if response.status_code >= 500:
        raise ProviderDown(provider, f"its token endpoint answered HTTP {response.status_code}")
    tokens = _json(provider, response, "token answer")
    if response.status_code != 200 or "error" in tokens:
        error = str(tokens.get("error", response.status_code))[:100]
        raise SignInRefused(
            f"{provider.title} refused to complete the sign-in ({error}); start again"
        )
    if not isinstance(tokens.get("id_token"), str):
        raise SignInRefused(f"{provider.title} sent no ID token; start again")
    return tokens


def check_id_token(
    provider: OidcProvider,
    discovery: Discovery,
    *,
    id_token: str,
    nonce: str,
    access_token: str | None = None,
    now: int | None = None,
) -> dict[str, Any]:
    """The ID token's claims, once its signature (the provider's keys), issuer, audience (this
    client), expiry, issue time and nonce are checked; SignInRefused otherwise."""
    registry = JWSRegistry(algorithms=list(discovery.algorithms), strict_check_header=False)
    try:
        try:
            token = jwt.decode(id_token, _jwks(provider, discovery, fresh=False), registry=registry)
        except InvalidKeyIdError:  # the provider rotated its keys since they were cached
            token = jwt.decode(id_token, _jwks(provider, discovery, fresh=True), registry=registry)
        options = {
            "iss": {"essential": True, "value": discovery.issuer},
            "aud": {"essential": True, "value": provider.client_id},
        }
        params = {"nonce": nonce, "client_id": provider.client_id}
        if access_token:
            params["access_token"] = access_token
        claims = CodeIDToken(token.claims, token.header, options, params)
        claims.validate(now=now, leeway=LEEWAY_SECONDS)
    except (JoseError, ValueError) as exc:
        raise SignInRefused(
            f"the ID token from {provider.title} is not valid ({_why(exc)}); start again"
        ) from None
    # A nonce is required, whatever the claims class lets pass when it is missing.
    if claims.get("nonce") != nonce:
        raise SignInRefused(f"the ID token from {provider.title} is not valid (nonce); start again")
    subject = claims.get("sub")
    if not isinstance(subject, str) or not 0 < len(subject) <= MAX_SUBJECT_LENGTH:
        raise SignInRefused(f"the ID token from {provider.title} names no usable subject")
    return dict(claims)


def _why(exc: Exception) -> str:
    error = getattr(exc, "error", None) or type(exc).__name__
    description = getattr(exc, "description", None)
    return f"{error}: {description}"[:200] if description else str(error)[:200]


def user_info(
    provider: OidcProvider, discovery: Discovery, *, access_token: str, subject: str
) -> dict[str, Any]:
    """The userinfo endpoint's claims, for a provider whose ID token leaves the e-mail out
    (the code flow lets it). Claims of another subject are refused (OIDC Core 5.3.2)."""
    if discovery.userinfo_endpoint is None:
        return {}
    response = _fetch(
        provider,
        "GET",
        discovery.userinfo_endpoint,
        headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"},
    )
    if response.status_code >= 500:
        raise ProviderDown(provider, f"its userinfo endpoint answered HTTP {response.status_code}")
    if response.status_code != 200:
        raise SignInRefused(f"{provider.title} refused to say who signed in; start again")
    claims = _json(provider, response, "userinfo answer")
    if claims.get("sub") != subject:
        raise SignInRefused(f"{provider.title} described another account; start again")
    return claims
