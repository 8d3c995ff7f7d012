"""Single sign-on pages: "Sign in with …" and its way back, linking a provider's account from
/account and unlinking it (app.accounts.sso does the work)."""

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.accounts import sso
from app.accounts.request import AccountContext
from app.auth.service import WEB_SESSION_DAYS, start_web_session
from app.deps import IdPath, SessionDep, SettingsDep
from app.shared.counters import Counters, MemoryCounters
from app.web.account import _safe_next
from app.web.session import (
    SESSION_COOKIE,
    CsrfChecked,
    SignedInUser,
    WebUser,
    is_https,
    redirect,
    set_cookie,
)
from app.web.templating import render

router = APIRouter(include_in_schema=False)

# Holds the random value whose hash the sign-in in flight keeps: the way back counts only in
# the browser that set out (a callback URL sent to someone else opens nothing there).
FLOW_COOKIE = "podium_oidc"
_FLOW_PATH = "/signin/oidc"

Text = Annotated[str | None, Query(max_length=2000)]


def _starts(request: Request) -> Counters:
    """This app's count of sign-ins started per address (shared where the limits are)."""
    starts: Counters | None = getattr(request.app.state, "oidc_starts", None)
    if starts is None:
        settings = request.app.state.settings
        window = sso.STATE_LIFETIME.total_seconds()
        memory = MemoryCounters(window_seconds=window, max_keys=settings.auth_failure_keys)
        starts = request.app.state.shared_state.counters(
            "oidc-start", window_seconds=window, memory=memory
        )
        request.app.state.oidc_starts = starts
    return starts


def _set_out(request: Request, start: sso.Start, *, title: str | None = None) -> Response:
    if title is None:
        response: Response = redirect(request, start.url)
    else:
        # After a form, the page's CSP (form-action 'self') forbids a redirect to another
        # site: a page that moves on by itself (Refresh), with a link where it does not.
        response = render(request, "sso_continue.html", {"title": title, "url": start.url})
        response.headers["refresh"] = f"0;url={start.url}"
    # Lax: sent on the provider's redirect back (a top-level GET); only the way back needs it.
    response.set_cookie(
        FLOW_COOKIE,
        start.browser_binding,
        max_age=int(sso.STATE_LIFETIME.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=is_https(request),
        path=_FLOW_PATH,
    )
    return response


@router.get("/signin/oidc/{provider}")
def start_sign_in(
    request: Request,
    provider: str,
    session: SessionDep,
    ctx: AccountContext,
    next: Text = "/",
    invitation: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    sso.count_start(_starts(request), ctx.address)
    start = sso.start(
        session,
        ctx,
        provider_name=provider[:64],
        next_path=_safe_next(next),
        invitation=invitation or None,
    )
    return _set_out(request, start)


@router.get("/signin/oidc/{provider}/callback")
def sign_in_callback(
    request: Request,
    provider: str,
    session: SessionDep,
    settings: SettingsDep,
    ctx: AccountContext,
    user: WebUser,
    state: Text = None,
    code: Text = None,
    error: Annotated[str | None, Query(max_length=200)] = None,
    iss: Text = None,
) -> Response:
    done = sso.finish(
        session,
        ctx,
        provider_name=provider[:64],
        state=state,
        code=code,
        error=error,
        issuer=iss,
        browser_binding=request.cookies.get(FLOW_COOKIE),
        signed_in=user,
    )
    title = sso.provider_named(settings, provider).title
    if done.linked:
        response = redirect(request, "/account", ok=f"Signing in with {title} is linked.")
    else:
        secret = start_web_session(session, user=done.user, secret_key=settings.secret_key)
        greeting = f"Signed in as {done.user.name}."
        response = redirect(request, done.next_path, ok=f"{greeting} {done.note or ''}".strip())
        set_cookie(request, response, SESSION_COOKIE, secret, max_age=WEB_SESSION_DAYS * 86400)
    response.delete_cookie(FLOW_COOKIE, path=_FLOW_PATH)
    return response


@router.post("/account/sign-ins/{provider}/link", dependencies=[CsrfChecked])
def link(
    request: Request, provider: str, session: SessionDep, ctx: AccountContext, user: SignedInUser
) -> Response:
    request.state.back = "/account"
    sso.count_start(_starts(request), ctx.address)
    start = sso.start(
        session, ctx, provider_name=provider[:64], next_path="/account", link_user=user
    )
    return _set_out(request, start, title=sso.provider_named(ctx.settings, provider).title)


@router.post("/account/sign-ins/{identity_id}/unlink", dependencies=[CsrfChecked])
def unlink(
    request: Request, identity_id: IdPath, session: SessionDep, user: SignedInUser
) -> Response:
    request.state.back = "/account"
    identity = sso.unlink(session, user=user, identity_id=identity_id)
    return redirect(request, "/account", ok=f"Signing in with {identity.provider} is unlinked.")
