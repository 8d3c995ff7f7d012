"""A real OpenID provider for the tests: panva's certified ``oidc-provider`` (npm) run with node
from tests/oidc_provider (installed there by ``npm ci --prefix tests/oidc_provider``, as .ci/run
does), and a stand-in for the person at its sign-in page.

The provider's signing key is made here and handed to it, so a test can also sign an ID token
exactly as the provider would (an expired one, one for another client) and feed it to the real
checks."""

import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.conftest import skip_or_fail

PROVIDER_DIR = Path(__file__).resolve().parent.parent / "oidc_provider"
INSTALL_HINT = "npm ci --prefix tests/oidc_provider"


@dataclass
class RunningProvider:
    issuer: str
    key: RSAKey
    clients: list[dict[str, Any]]
    log: Path

    def sign(self, claims: dict[str, Any]) -> str:
        """An ID token signed with the provider's own key (what its token endpoint would sign)."""
        header = {"alg": "RS256", "kid": self.key.kid}
        return jwt.encode(header, claims, self.key)


def login_name(
    sub: str,
    *,
    email: str | None = None,
    email_verified: bool = False,
    username: str | None = None,
) -> str:
    """The login to type at the provider's page for an account with these claims."""
    claims: dict[str, Any] = {"sub": sub}
    if email is not None:
        claims |= {"email": email, "email_verified": email_verified}
    if username is not None:
        claims["preferred_username"] = username
    return base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")


@contextmanager
def oidc_provider(workdir: Path, clients: list[dict[str, Any]]) -> Iterator[RunningProvider]:
    node = shutil.which("node")
    if node is None:
        skip_or_fail("node is not installed (the OpenID provider of the tests runs with it)")
    if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        skip_or_fail(f"the tests' OpenID provider is not installed: run `{INSTALL_HINT}`")
    key = RSAKey.generate_key(2048, parameters={"kid": "test-key", "use": "sig", "alg": "RS256"})
    config = {"clients": clients, "jwks": {"keys": [key.as_dict(private=True)]}}
    log = workdir / "oidc-provider.log"
    with log.open("wb") as err:
        process = subprocess.Popen(
            [node, str(PROVIDER_DIR / "provider.mjs")],
            cwd=PROVIDER_DIR,
            env={**os.environ, "OIDC_TEST_CONFIG": json.dumps(config)},
            stdout=subprocess.PIPE,
            stderr=err,
        )
    try:
        assert process.stdout is not None
        first = process.stdout.readline().decode().strip()  # blocks until it listens (or dies)
        if not first.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the OpenID provider did not start: {log.read_text()[-2000:]}")
        yield RunningProvider(issuer=first, key=key, clients=clients, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class PersonAtProvider:
    """A browser at the provider: its own cookies, so a second sign-in finds the session."""

    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=10))

    def authorize(self, authorization_url: str, login: str) -> str:
        """Go from the authorization URL to where the provider sends the browser back (the
        relying party's callback URL with its code and state), signing in and consenting."""
        url = authorization_url
        for _ in range(12):
            response = self.http.get(url)
            if response.status_code in (302, 303):
                location = urljoin(url, response.headers["location"])
                if not location.startswith(_origin(authorization_url)):
                    return location  # back to the relying party
                url = location
                continue
            assert response.status_code == 200, (response.status_code, response.text[:500])
            prompt = "login" if 'name="login"' in response.text else "consent"
            fields = {"prompt": prompt}
            if prompt == "login":
                fields |= {"login": login, "password": "any"}
            answer = self.http.post(url, data=fields)
            assert answer.status_code in (302, 303), (answer.status_code, answer.text[:500])
            url = urljoin(url, answer.headers["location"])
        raise AssertionError("the provider's sign-in did not end")

    def token_for(self, provider: RunningProvider, client: dict[str, Any], login: str) -> str:
        """An ID token the provider issues to ``client`` (by a code flow of its own), as any
        relying party of that provider would receive it."""
        from authlib.common.security import generate_token
        from authlib.oauth2.rfc7636 import create_s256_code_challenge

        verifier, nonce = generate_token(48), generate_token(20)
        redirect_uri = client["redirect_uris"][0]
        query = httpx.QueryParams(
            response_type="code",
            client_id=client["client_id"],
            redirect_uri=redirect_uri,
            scope="openid email profile",
            state="s",
            nonce=nonce,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
        )
        back = self.authorize(f"{provider.issuer}/auth?{query}", login)
        code = parse_qs(urlsplit(back).query)["code"][0]
        token = httpx.post(
            f"{provider.issuer}/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
            },
            auth=(client["client_id"], client["client_secret"]),
            timeout=10,
        )
        assert token.status_code == 200, token.text
        return str(token.json()["id_token"])


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def now() -> int:
    return int(time.time())
