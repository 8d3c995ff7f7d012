"""Single sign-on with OpenID Connect providers: a sign-in that starts here and comes back, the
account it finds or makes, linking and unlinking a provider's account from one's own.

The sign-in in flight lives server-side, as a link secret (purpose ``OIDC_STATE``, 10 minutes,
single use) whose secret is the ``state`` sent to the provider; its data holds the provider, the
nonce, the PKCE verifier, where to go next, the account to link (for a link started from
/account) and a hash of a cookie set in the browser that started it, so a callback URL carried
to another browser opens nothing there.

An identity is (issuer, subject), never an e-mail address: a provider's account is linked to an
existing Podium account only from that account, signed in. A first sign-in makes an account
under the sign-up mode; its address counts only where the provider says it verified it.
"""

import hashlib
import hmac
import math
import re
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.accounts import links, oidc_client
from app.accounts.oidc_client import SignInRefused
from app.accounts.oidc_settings import OidcProvider, parse_providers
from app.accounts.service import (
    Context,
    SignUpClosed,
    _check_unverified_room,
    check_signup_allowed,
    record,
    send_verification,
    use_invitation,
)
from app.auth.emails import InvalidEmail, normalise_email
from app.auth.names import MAX_NAME_LENGTH, name_problem
from app.config import Settings, SettingsError
from app.errors import Conflict, Forbidden, NotFound, RateLimited
from app.models import LinkSecret, OidcIdentity, Role, User
from app.shared.counters import Counters

STATE_LIFETIME = timedelta(minutes=10)
# Sign-ins in flight at once, over all browsers: each start writes a row until it is used or
# expires (the sweep prunes it), so a flood of starts cannot grow the table without bound.
MAX_IN_FLIGHT = 100_000
# Starts per client address in STATE_LIFETIME: generous, as a whole class behind one campus
# address may sign in at once, yet one address cannot fill MAX_IN_FLIGHT by itself.
STARTS_PER_ADDRESS = 500


@lru_cache(maxsize=32)
def _parsed(raw: str) -> tuple[OidcProvider, ...]:
    return parse_providers(raw)


def providers(settings: Settings) -> tuple[OidcProvider, ...]:
    """The configured providers; a refused setting is a one-line SettingsError."""
    try:
        return _parsed(settings.oidc_providers)
    except ValueError as exc:
        raise SettingsError(f"PODIUM_OIDC_PROVIDERS: {exc}") from None


def providers_for_pages(settings: Settings) -> list[tuple[str, str]]:
    """(name, title) of each provider, for the "Sign in with …" buttons."""
    return [(p.name, p.title) for p in providers(settings)]


def provider_named(settings: Settings, name: str) -> OidcProvider:
    for provider in providers(settings):
        if provider.name == name:
            return provider
    raise NotFound(f"there is no sign-in provider named {name[:40]!r} on this server")


def redirect_uri(ctx: Context, provider: OidcProvider) -> str:
    return f"{ctx.base_url.rstrip('/')}/signin/oidc/{provider.name}/callback"


def _binding_hash(binding: str, secret_key: str) -> str:
    return hmac.new(secret_key.encode(), f"oidc-browser|{binding}".encode(), "sha256").hexdigest()


# --- Starting ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Start:
    url: str  # the provider's authorization URL
    browser_binding: str  # for a cookie of the browser that started (checked on the way back)


def count_start(starts: Counters, address: str) -> None:
    """Count a start from ``address`` in the shared limits; 429 once it has made too many."""
    count, left = starts.hit(hashlib.sha256(f"oidc|{address}".encode()).hexdigest()[:32])
    if count > STARTS_PER_ADDRESS:
        wait = max(1, math.ceil(left))
        raise RateLimited(
            f"too many sign-ins from your address; try again in {wait} s", retry_after=wait
        )


def start(
    session: Session,
    ctx: Context,
    *,
    provider_name: str,
    next_path: str,
    invitation: str | None = None,
    link_user: User | None = None,
) -> Start:
    provider = provider_named(ctx.settings, provider_name)
    in_flight = session.scalar(
        select(func.count())
        .select_from(LinkSecret)
        .where(LinkSecret.purpose == links.OIDC_STATE, LinkSecret.expires_at > datetime.now(UTC))
    )
    if (in_flight or 0) >= MAX_IN_FLIGHT:
        raise RateLimited("too many sign-ins are under way; try again in a minute", retry_after=60)
    discovery = oidc_client.discover(provider)
    binding = secrets.token_urlsafe(32)
    # The state is the link secret itself; the flow's own values are chosen by the client
    # (nonce, PKCE verifier) and kept in the row, never in the browser.
    issued = links.issue(
        session,
        purpose=links.OIDC_STATE,
        secret_key=ctx.settings.secret_key,
        lifetime=STATE_LIFETIME,
        user_id=link_user.id if link_user is not None else None,
        data={},
    )
    begun = oidc_client.authorization_url(
        provider, discovery, redirect_uri=redirect_uri(ctx, provider), state=issued.secret
    )
    issued.row.data = {
        "provider": provider.name,
        "nonce": begun.nonce,
        "code_verifier": begun.code_verifier,
        "next": next_path,
        "link_user_id": link_user.id if link_user is not None else None,
        # Kept for the ten minutes of the flow so that the account made at its end uses it up.
        "invitation": invitation,
        "browser": _binding_hash(binding, ctx.settings.secret_key),
    }
    return Start(url=begun.url, browser_binding=binding)


# --- Coming back ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Finished:
    user: User
    linked: bool  # True: an identity was linked to the signed-in account (no new session)
    created: bool  # True: the sign-in made this account
    next_path: str
    note: str | None = None  # something the person should read on the next page


def finish(
    session: Session,
    ctx: Context,
    *,
    provider_name: str,
    state: str | None,
    code: str | None,
    error: str | None,
    browser_binding: str | None,
    issuer: str | None = None,
    signed_in: User | None,
) -> Finished:
    provider = provider_named(ctx.settings, provider_name)
    row = _state(session, ctx, state, use=False)
    data: dict[str, Any] = dict(row.data or {})
    if data.get("provider") != provider.name:
        raise SignInRefused("this sign-in was started for another provider; start again")
    expected = data.get("browser")
    if (
        not browser_binding
        or not isinstance(expected, str)
        or not hmac.compare_digest(
            _binding_hash(browser_binding, ctx.settings.secret_key), expected
        )
    ):
        raise SignInRefused("this sign-in was started in another browser; start again here")
    if error:
        raise SignInRefused(
            f"{provider.title} did not sign you in ({error[:60]}); start again if you meant to"
        )
    if not code:
        raise SignInRefused(f"{provider.title} sent no authorization code; start again")
    discovery = oidc_client.discover(provider)
    if issuer is not None and issuer != discovery.issuer:
        # RFC 9207: the answer names who sent it; another provider's is a mix-up attack.
        raise SignInRefused(f"this answer did not come from {provider.title}; start again")
    tokens = oidc_client.exchange_code(
        provider,
        discovery,
        code=code[:2000],
        redirect_uri=redirect_uri(ctx, provider),
        code_verifier=str(data.get("code_verifier", "")),
    )
    access_token = (
        tokens.get("access_token") if isinstance(tokens.get("access_token"), str) else None
    )
    claims = oidc_client.check_id_token(
        provider,
        discovery,
        id_token=tokens["id_token"],
        nonce=str(data.get("nonce", "")),
        access_token=access_token,
    )
    if access_token and "email" not in claims:
        # The code flow lets a provider keep the profile out of the ID token (oidc-provider
        # does by default); its userinfo endpoint has it.
        extra = oidc_client.user_info(
            provider, discovery, access_token=access_token, subject=claims["sub"]
        )
        claims = {**extra, **claims}
    # Used up only now: the provider's answers above (seconds, when it is slow) were awaited
    # without holding a write, which on SQLite would stall every writer of the site; of two
    # uses of one state, the second is refused here.
    _state(session, ctx, state, use=True)
    identity = session.scalar(
        select(OidcIdentity).where(
            OidcIdentity.issuer == discovery.issuer, OidcIdentity.subject == claims["sub"]
        )
    )
    email, verified = _address(claims)
    next_path = str(data.get("next") or "/")
    link_user_id = data.get("link_user_id")
    if link_user_id is not None:
        user = _link(
            session, provider, identity, discovery.issuer, claims, email, link_user_id, signed_in
        )
        return Finished(user=user, linked=True, created=False, next_path="/account")
    if identity is not None:
        user = identity.user
        _check_may_sign_in(user)
        identity.last_used_at = datetime.now(UTC)
        identity.email = email
        return Finished(user=user, linked=False, created=False, next_path=next_path)
    user, note = _new_account(
        session, ctx, provider, claims, email, verified, invitation=data.get("invitation")
    )
    session.add(
        OidcIdentity(
            user_id=user.id,
            provider=provider.name,
            issuer=discovery.issuer,
            subject=claims["sub"],
            email=email,
        )
    )
    _flush_or_conflict(session)
    return Finished(user=user, linked=False, created=True, next_path=next_path, note=note)


def _flush_or_conflict(session: Session) -> None:
    # Two first sign-ins of one identity at once (two tabs), or two newcomers given the same
    # name at once: the second meets a unique constraint, and is told to sign in again (which
    # then finds the account), never a 500.
    try:
        session.flush()
    except IntegrityError:
        raise Conflict("this sign-in crossed another at the same moment; sign in again") from None


def _state(session: Session, ctx: Context, state: str | None, *, use: bool) -> LinkSecret:
    find = links.use if use else links.peek
    try:
        return find(
            session,
            purpose=links.OIDC_STATE,
            secret=state or "",
            secret_key=ctx.settings.secret_key,
        )
    except links.LinkRefused:
        raise SignInRefused(
            "this sign-in is not known here: it was used already, it expired (after 10 minutes), "
            "or it was not started from this site. Start again."
        ) from None


def _address(claims: dict[str, Any]) -> tuple[str | None, bool]:
    """The address the provider gives (normalised) and whether it says it verified it. Some
    providers send ``email_verified`` as the string "true"."""
    raw = claims.get("email")
    if not isinstance(raw, str):
        return None, False
    try:
        email = normalise_email(raw)
    except InvalidEmail:
        return None, False
    verified = claims.get("email_verified")
    return email, verified is True or (isinstance(verified, str) and verified.lower() == "true")


def _check_may_sign_in(user: User) -> None:
    if not user.is_active:
        raise Forbidden("this account is disabled or was deleted; it cannot sign in")


def _link(
    session: Session,
    provider: OidcProvider,
    identity: OidcIdentity | None,
    issuer: str,
    claims: dict[str, Any],
    email: str | None,
    link_user_id: Any,
    signed_in: User | None,
) -> User:
    # Only the account that asked for the link, signed in in this browser, gets it.
    if signed_in is None or signed_in.id != link_user_id:
        raise SignInRefused("sign in to the account you are linking first, then start again")
    _check_may_sign_in(signed_in)
    if identity is not None and identity.user_id != signed_in.id:
        raise Conflict(
            f"this {provider.title} account is linked to another Podium account already; "
            "unlink it there first"
        )
    if identity is None:
        session.add(
            OidcIdentity(
                user_id=signed_in.id,
                provider=provider.name,
                issuer=issuer,
                subject=claims["sub"],
                email=email,
            )
        )
        _flush_or_conflict(session)
        record(
            session,
            actor=signed_in,
            action="account.sign_in_linked",
            target=signed_in.name,
            detail={"provider": provider.name},
        )
    return signed_in


def _new_account(
    session: Session,
    ctx: Context,
    provider: OidcProvider,
    claims: dict[str, Any],
    email: str | None,
    verified: bool,
    *,
    invitation: Any,
) -> tuple[User, str | None]:
    invite = invitation if isinstance(invitation, str) else None
    trusted = email if verified else None
    ctx.limits.hit_address(ctx.address)
    row = check_signup_allowed(session, ctx, email=trusted, invitation=invite)
    if row is not None and row.email is not None and row.email != trusted:
        raise SignUpClosed("this invitation is for another e-mail address")
    _check_unverified_room(session, ctx)
    name = unique_name(session, _name_wish(claims, email))
    user = User(name=name, role=Role.participant, must_verify=True)
    note = None
    if trusted is not None:
        if session.scalar(select(User.id).where(User.email == trusted)) is None:
            user.email, user.email_verified_at = trusted, datetime.now(UTC)
        else:
            # Never linked by a matching address: the person may sign in to that account and
            # link this provider there, or give this account an address of its own.
            note = (
                f"An account with the address {trusted} exists already; this is a new account "
                f"without an address. To use {provider.title} with the other account, sign in "
                "to it and link it on your account page."
            )
    session.add(user)
    _flush_or_conflict(session)
    use_invitation(session, ctx, invitation=invite)
    if email is not None and not verified:
        # The provider did not vouch for it: the address waits for its own verification link.
        send_verification(session, ctx, user=user, address=email)
    record(
        session,
        actor=user,
        action="account.signup",
        target=user.name,
        detail={"provider": provider.name},
    )
    return user, note


# --- Names ---------------------------------------------------------------------------------


def _name_wish(claims: dict[str, Any], email: str | None) -> str:
    for wish in (claims.get("preferred_username"), email.partition("@")[0] if email else None):
        if isinstance(wish, str) and clean_name(wish):
            return wish
    return "user"


def clean_name(wish: str) -> str:
    """``wish`` made a valid user name (app.auth.names): no control or invisible characters,
    inner whitespace as single spaces, at most 48 characters (room for a suffix)."""
    kept = "".join(c for c in wish if unicodedata.category(c) not in {"Cc", "Cf", "Zl", "Zp", "Cs"})
    kept = re.sub(r"\s+", " ", kept).strip()[:48].strip()
    if kept.lower().startswith("deleted-"):  # the pseudonyms of accounts that left
        kept = "user-" + kept
    return kept


def unique_name(session: Session, wish: str) -> str:
    base = clean_name(wish) or "user"
    for attempt in range(1, 50):
        name = base if attempt == 1 else f"{base}-{attempt}"
        if name_problem(name, max_length=MAX_NAME_LENGTH) is None and not _taken(session, name):
            return name
    while True:
        name = f"{base}-{secrets.token_hex(4)}"
        if not _taken(session, name):
            return name


def _taken(session: Session, name: str) -> bool:
    return session.scalar(select(User.id).where(func.lower(User.name) == name.lower())) is not None


# --- The account page's list ---------------------------------------------------------------


def identities_of(session: Session, *, user: User) -> list[OidcIdentity]:
    return list(
        session.scalars(
            select(OidcIdentity).where(OidcIdentity.user_id == user.id).order_by(OidcIdentity.id)
        )
    )


def unlink(session: Session, *, user: User, identity_id: int) -> OidcIdentity:
    identity = session.get(OidcIdentity, identity_id)
    if identity is None or identity.user_id != user.id:
        raise NotFound("there is no such linked sign-in on your account")
    if user.password_hash is None and len(identities_of(session, user=user)) <= 1:
        raise Conflict("this is your only way to sign in: set a password first, then unlink it")
    session.delete(identity)
    record(
        session,
        actor=user,
        action="account.sign_in_unlinked",
        target=user.name,
        detail={"provider": identity.provider},
    )
    return identity
