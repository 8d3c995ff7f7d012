"""Browser sign-in state and CSRF protection.

The session cookie holds a random secret whose keyed hash names a ``web_sessions`` row
(HttpOnly, SameSite=Lax, Secure when the request came over HTTPS). Every browser also gets a
random CSRF nonce cookie; a form's token is an HMAC of that nonce and the session secret, so it
changes at sign-in and sign-out and cannot be made without reading a page of this site. A session
opened with an API token ends when that token is revoked (``app.auth.service``).
"""

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote, unquote

from fastapi import Depends, Request
from fastapi.responses import RedirectResponse, Response

from app.auth.service import web_session_for
from app.deps import SessionDep, SettingsDep
from app.errors import Forbidden
from app.models import User, WebSession

SESSION_COOKIE = "podium_session"
CSRF_COOKIE = "podium_csrf"
FLASH_COOKIE = "podium_flash"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"


class SignInRequired(Exception):
    """A page that needs a signed-in user was opened without one: send the browser to sign in."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


class CsrfRejected(Forbidden):
    code = "csrf_rejected"


class HostsOnly(Forbidden):
    code = "hosts_only"


def is_https(request: Request) -> bool:
    return request.url.scheme == "https"


def set_cookie(request: Request, response: Response, name: str, value: str, **kw: Any) -> None:
    response.set_cookie(
        name, value, httponly=True, samesite="lax", secure=is_https(request), path="/", **kw
    )


# --- The signed-in user -----------------------------------------------------------------------


@dataclass(frozen=True)
class Viewer:
    """What the page frame shows of the signed-in user; plain values, so an error page can
    still show them after the request's session has rolled back."""

    name: str
    is_organiser: bool
    is_admin: bool = False


def web_user(request: Request, session: SessionDep, settings: SettingsDep) -> User | None:
    secret = request.cookies.get(SESSION_COOKIE)
    row = None
    if secret:
        # "Last seen" is refreshed on page reads only: a form may give up its transaction
        # part-way (app.db.no_transaction), which it cannot once this request has written.
        row = web_session_for(
            session,
            secret=secret,
            secret_key=settings.secret_key,
            refresh=request.method in ("GET", "HEAD"),
        )
    request.state.web_session = row
    user = row.user if row is not None else None
    request.state.viewer = Viewer(user.name, user.is_organiser, user.is_admin) if user else None
    return user


async def signed_in_user(request: Request, user: Annotated[User | None, Depends(web_user)]) -> User:
    if user is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInRequired(target)
    return user


WebUser = Annotated[User | None, Depends(web_user)]
SignedInUser = Annotated[User, Depends(signed_in_user)]


async def current_web_session(request: Request, user: SignedInUser) -> WebSession:
    """The signed-in browser's session row (how and when it signed in)."""
    row: WebSession = request.state.web_session
    return row


SignedInSession = Annotated[WebSession, Depends(current_web_session)]


# --- CSRF -------------------------------------------------------------------------------------


def _nonce(request: Request) -> str:
    nonce = request.cookies.get(CSRF_COOKIE) or getattr(request.state, "new_csrf_nonce", None)
    if not nonce:
        nonce = secrets.token_urlsafe(24)
        request.state.new_csrf_nonce = nonce
    return nonce


def _token(secret_key: str, nonce: str, session_secret: str) -> str:
    message = f"csrf|{nonce}|{session_secret}".encode()
    return hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()


def csrf_token(request: Request) -> str:
    settings = request.app.state.settings
    return _token(settings.secret_key, _nonce(request), request.cookies.get(SESSION_COOKIE, ""))


async def check_csrf(request: Request, settings: SettingsDep) -> None:
    """Refuse a form without this browser's token (field ``csrf_token`` or ``X-CSRF-Token``)."""
    form = await request.form()
    sent = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
    nonce = request.cookies.get(CSRF_COOKIE)
    if not isinstance(sent, str) or not nonce:
        raise CsrfRejected("this form has no CSRF token; reload the page and try again")
    expected = _token(settings.secret_key, nonce, request.cookies.get(SESSION_COOKIE, ""))
    if not hmac.compare_digest(sent, expected):
        raise CsrfRejected(
            "this form's CSRF token is wrong or stale; reload the page and try again"
        )


CsrfChecked = Depends(check_csrf)


def remember_new_nonce(request: Request, response: Response) -> None:
    nonce = getattr(request.state, "new_csrf_nonce", None)
    if nonce and not request.cookies.get(CSRF_COOKIE):
        set_cookie(request, response, CSRF_COOKIE, nonce)


# --- One-shot messages after a redirect -------------------------------------------------------


# A form that names itself (request.state.form_id) gets its refusal shown inside it, beside the
# field the message is about (request.state.form_field), not only at the top of the page.
FORM_ID = "form_id"
FORM_FIELD = "form_field"


def redirect(
    request: Request, url: str, *, ok: str | None = None, error: str | None = None
) -> Response:
    response = RedirectResponse(url, status_code=303)
    if ok or error:
        message: dict[str, str] = {
            "kind": "error" if error else "ok",
            "text": (error or ok or "")[:600],
        }
        if error:
            for key in (FORM_ID, FORM_FIELD):
                if isinstance(value := getattr(request.state, key, None), str):
                    message[key] = value[:64]
        set_cookie(request, response, FLASH_COOKIE, quote(json.dumps(message)), max_age=60)
    return response


def read_flash(request: Request) -> dict[str, str] | None:
    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return None
    try:
        value = json.loads(unquote(raw))
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        return None
    flash = {"kind": "error" if value.get("kind") == "error" else "ok", "text": value["text"]}
    for key in (FORM_ID, FORM_FIELD):
        if isinstance(value.get(key), str):
            flash[key] = value[key][:64]
    return flash
