"""Signing in (password or API token), signing out, and the user's API tokens."""

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.auth.service import (
    WEB_SESSION_DAYS,
    SignInAgain,
    confirm_recent_sign_in,
    end_web_session,
    issue_token,
    live_token,
    revoke_own_token,
    start_web_session,
    tokens_of,
    user_for_password,
)
from app.auth.throttle import client_address
from app.deps import IdPath, SessionDep, SettingsDep, auth_limiter
from app.errors import RateLimited, Unauthorized
from app.models import ApiToken, User
from app.web.session import (
    SESSION_COOKIE,
    CsrfChecked,
    SignedInSession,
    SignedInUser,
    WebUser,
    redirect,
    set_cookie,
)
from app.web.templating import render

router = APIRouter(include_in_schema=False)


def _safe_next(target: str | None) -> str:
    # Only a path on this site: never an open redirect to another host.
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


@router.get("/signin", response_class=HTMLResponse)
def signin_page(request: Request, user: WebUser, next: str = "/") -> Response:
    return render(request, "signin.html", {"next": _safe_next(next), "error": None})


@router.post("/signin", dependencies=[CsrfChecked])
def signin(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    name: Annotated[str, Form(max_length=64)] = "",
    password: Annotated[str, Form(max_length=1024)] = "",
    token: Annotated[str, Form(max_length=256)] = "",
    next: Annotated[str, Form(max_length=2000)] = "/",
) -> Response:
    limiter, address = auth_limiter(request), client_address(request.scope)

    def authenticate() -> tuple[User, ApiToken | None]:
        # The token a browser signs in with is remembered: revoking it signs the browser out.
        if token.strip():
            row = limiter.attempt_token(
                address,
                token.strip(),
                lambda: live_token(session, token=token.strip(), secret_key=settings.secret_key),
            )
            return row.user, row
        signed_in = limiter.attempt_password(
            address, name, lambda: user_for_password(session, name=name.strip(), password=password)
        )
        return signed_in, None

    try:
        user, used = authenticate()
    except (Unauthorized, RateLimited) as exc:
        response = render(
            request,
            "signin.html",
            {"next": _safe_next(next), "error": exc.detail, "name": name},
            status_code=exc.status_code,
        )
        response.headers.update(getattr(exc, "headers", {}))
        return response
    secret = start_web_session(session, user=user, secret_key=settings.secret_key, token=used)
    response = redirect(request, _safe_next(next), ok=f"Signed in as {user.name}.")
    set_cookie(request, response, SESSION_COOKIE, secret, max_age=WEB_SESSION_DAYS * 86400)
    return response


@router.post("/signout", dependencies=[CsrfChecked])
def signout(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        end_web_session(session, secret=secret, secret_key=settings.secret_key)
    response = redirect(request, "/", ok="Signed out.")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def _tokens_page(
    request: Request,
    session: Session,
    user: User,
    *,
    new_token: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    context = {
        "tokens": tokens_of(session, user=user),
        "new_token": new_token,
        "error": error,
        "has_password": user.password_hash is not None,
    }
    return render(request, "tokens.html", context, status_code=status_code)


@router.get("/account/tokens", response_class=HTMLResponse)
def tokens_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return _tokens_page(request, session, user)


@router.post("/account/tokens", dependencies=[CsrfChecked])
def make_token(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: SignedInUser,
    web_session: SignedInSession,
    password: Annotated[str, Form(max_length=1024)] = "",
) -> Response:
    request.state.back = "/account/tokens"
    try:
        # Counted as a sign-in attempt: a stolen cookie must not become a password oracle.
        auth_limiter(request).attempt_password(
            client_address(request.scope),
            user.name,
            lambda: confirm_recent_sign_in(web_session, password=password),
        )
    except (SignInAgain, Unauthorized, RateLimited) as exc:
        # The browser stays signed in: only making a token is refused.
        response = _tokens_page(request, session, user, error=exc.detail, status_code=403)
        response.headers.update(getattr(exc, "headers", {}))
        return response
    token = issue_token(session, user=user, secret_key=settings.secret_key)
    # Shown on this response only (never stored in the clear, never put in a cookie or a URL).
    return _tokens_page(request, session, user, new_token=token)


@router.post("/account/tokens/{token_id}/revoke", dependencies=[CsrfChecked])
def revoke(request: Request, token_id: IdPath, session: SessionDep, user: SignedInUser) -> Response:
    request.state.back = "/account/tokens"
    token = revoke_own_token(session, user=user, token_id=token_id)
    return redirect(request, "/account/tokens", ok=f"Token {token.prefix}… is revoked.")
