"""The account page (``/account``): the user's address, password, linked sign-ins, data and
leaving; and the site admin's page (``/admin``): users, roles, disabling, invitations."""

import json
from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import admin, own_data, service
from app.accounts.request import AccountContext
from app.deps import IdPath, SessionDep
from app.errors import AppError, NotFound, Unprocessable
from app.models import OidcIdentity, Role, User
from app.models.types import Count
from app.pagination import Page
from app.web.session import SESSION_COOKIE, CsrfChecked, SignedInUser, redirect
from app.web.templating import render

router = APIRouter(include_in_schema=False)
ADMIN_PAGE = 50


def _account_page(
    request: Request, session: Session, user: User, *, error: AppError | None = None
) -> Response:
    identities = session.scalars(select(OidcIdentity).where(OidcIdentity.user_id == user.id))
    response = render(
        request,
        "account.html",
        {"me": user, "identities": list(identities), "error": error.detail if error else None},
        status_code=error.status_code if error else 200,
    )
    if error is not None:
        response.headers.update(getattr(error, "headers", {}))
    return response


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return _account_page(request, session, user)


@router.post("/account/email", dependencies=[CsrfChecked])
def change_email(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    ctx: AccountContext,
    email: Annotated[str, Form(max_length=320)] = "",
    password: Annotated[str, Form(max_length=1024)] = "",
) -> Response:
    try:
        with session.begin_nested():
            address = service.change_email(session, ctx, user=user, email=email, password=password)
    except AppError as exc:
        return _account_page(request, session, user, error=exc)
    return redirect(request, "/account", ok=f"We sent a link to {address}: follow it to verify.")


@router.post("/account/email/resend", dependencies=[CsrfChecked])
def resend(
    request: Request, session: SessionDep, user: SignedInUser, ctx: AccountContext
) -> Response:
    try:
        with session.begin_nested():
            service.resend_verification(session, ctx, user=user)
    except AppError as exc:
        return _account_page(request, session, user, error=exc)
    return redirect(request, "/account", ok="We sent the link again.")


@router.post("/account/password", dependencies=[CsrfChecked])
def change_password(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    current_password: Annotated[str, Form(max_length=1024)] = "",
    new_password: Annotated[str, Form(max_length=1024)] = "",
) -> Response:
    try:
        with session.begin_nested():
            service.change_password(session, user=user, current=current_password, new=new_password)
    except AppError as exc:
        return _account_page(request, session, user, error=exc)
    response = redirect(
        request, "/signin?next=/account", ok="Your password is changed: sign in again."
    )
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/account/data.json")
def my_data(session: SessionDep, user: SignedInUser) -> Response:
    body = json.dumps(own_data.my_data(session, user=user), indent=2)
    return Response(
        body,
        media_type="application/json",
        headers={"Content-Disposition": 'attachment; filename="podium-my-data.json"'},
    )


@router.post("/account/delete", dependencies=[CsrfChecked])
def delete_account(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    password: Annotated[str, Form(max_length=1024)] = "",
    confirm: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    try:
        if confirm.strip().lower() != "delete my account":
            raise Unprocessable('confirm: type the words "delete my account"')
        with session.begin_nested():
            service.delete_account(session, user=user, password=password, actor=user)
    except AppError as exc:
        return _account_page(request, session, user, error=exc)
    response = redirect(request, "/", ok="Your account is deleted. Goodbye.")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# --- Site admin ---------------------------------------------------------------------------------


def _admin_page(
    request: Request,
    session: Session,
    ctx: AccountContext,
    *,
    q: str = "",
    offset: int = 0,
    new_link: str | None = None,
    error: AppError | None = None,
) -> Response:
    found = admin.find_users(session, query=q, page=Page(limit=ADMIN_PAGE, offset=offset))
    audit = admin.audit_trail(session, page=Page(limit=20))
    return render(
        request,
        "admin.html",
        {
            "users": found.items,
            "total": found.total,
            "q": q,
            "offset": offset,
            "limit": ADMIN_PAGE,
            "roles": [r.value for r in Role],
            "invitations": admin.invitations(session),
            "audit": audit.items,
            "domains": ctx.settings.signup_domains,
            "new_link": new_link,
            "error": error.detail if error else None,
        },
        status_code=error.status_code if error else 200,
    )


@router.get("/admin", response_class=HTMLResponse)
def admin_page(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    ctx: AccountContext,
    q: str = "",
    offset: Count = 0,
) -> Response:
    admin.require_admin(user)
    return _admin_page(request, session, ctx, q=q[: admin.MAX_QUERY], offset=offset)


def _target(session: Session, user_id: int) -> User:
    target = session.get(User, user_id)
    if target is None:
        raise NotFound(f"no user {user_id}")
    return target


@router.post("/admin/users/{user_id}/role", dependencies=[CsrfChecked])
def set_role(
    request: Request,
    user_id: IdPath,
    session: SessionDep,
    user: SignedInUser,
    ctx: AccountContext,
    role: Annotated[Role, Form()],
) -> Response:
    admin.require_admin(user)
    target = _target(session, user_id)
    try:
        with session.begin_nested():
            admin.set_role(session, admin=user, user=target, role=role)
    except AppError as exc:
        return _admin_page(request, session, ctx, error=exc)
    return redirect(request, "/admin", ok=f"{target.name} is now {role.value}.")


@router.post("/admin/users/{user_id}/{action}", dependencies=[CsrfChecked])
def set_enabled(
    request: Request,
    user_id: IdPath,
    action: str,
    session: SessionDep,
    user: SignedInUser,
    ctx: AccountContext,
) -> Response:
    admin.require_admin(user)
    if action not in ("disable", "enable"):
        raise NotFound("no such action")
    target = _target(session, user_id)
    try:
        with session.begin_nested():
            admin.set_enabled(session, admin=user, user=target, enabled=action == "enable")
    except AppError as exc:
        return _admin_page(request, session, ctx, error=exc)
    return redirect(request, "/admin", ok=f"{target.name} is {action}d.")


@router.post("/admin/invitations", dependencies=[CsrfChecked])
def make_invitation(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    ctx: AccountContext,
    uses: Annotated[Count, Form()] = 1,
    days: Annotated[float, Form()] = 14,
    email: Annotated[str, Form(max_length=320)] = "",
) -> Response:
    admin.require_admin(user)
    try:
        with session.begin_nested():
            link, _row = admin.make_invitation(
                session, ctx, admin=user, uses=uses, days=days, email=email.strip() or None
            )
    except AppError as exc:
        return _admin_page(request, session, ctx, error=exc)
    return _admin_page(request, session, ctx, new_link=link)


@router.post("/admin/invitations/{invitation_id}/revoke", dependencies=[CsrfChecked])
def revoke_invitation(
    request: Request, invitation_id: IdPath, session: SessionDep, user: SignedInUser
) -> Response:
    admin.require_admin(user)
    admin.revoke_invitation(session, admin=user, invitation_id=invitation_id)
    return redirect(request, "/admin", ok="The invitation is revoked.")
