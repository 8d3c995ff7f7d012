"""Joining a server from the pages: sign up, verify the address, reset a forgotten password.
The same services as the account API; errors are shown beside the form."""

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from app.accounts import links, service
from app.accounts.request import AccountContext
from app.accounts.router import RESET_SENT, SIGNED_UP
from app.deps import SessionDep
from app.errors import AppError
from app.models import User
from app.web.session import CsrfChecked, WebUser, redirect
from app.web.templating import render

router = APIRouter(include_in_schema=False)


def _refused(request: Request, template: str, exc: AppError, **context: object) -> Response:
    response = render(
        request, template, {**context, "error": exc.detail}, status_code=exc.status_code
    )
    response.headers.update(getattr(exc, "headers", {}))
    return response


@router.get("/signup", response_class=HTMLResponse)
def signup_page(
    request: Request, user: WebUser, ctx: AccountContext, invitation: str = ""
) -> Response:
    return render(
        request,
        "signup.html",
        {
            "mode": ctx.settings.signup,
            "domains": ctx.settings.signup_domains,
            "invitation": invitation[: links.MAX_SECRET_LENGTH],
        },
    )


@router.post("/signup", dependencies=[CsrfChecked])
def signup(
    request: Request,
    session: SessionDep,
    ctx: AccountContext,
    name: Annotated[str, Form(max_length=64)] = "",
    email: Annotated[str, Form(max_length=320)] = "",
    password: Annotated[str, Form(max_length=1024)] = "",
    invitation: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    context = {
        "mode": ctx.settings.signup,
        "domains": ctx.settings.signup_domains,
        "invitation": invitation,
        "name": name,
        "email": email,
    }
    try:
        with session.begin_nested():  # a refusal leaves nothing written
            service.sign_up(
                session,
                ctx,
                name=name,
                email=email,
                password=password,
                invitation=invitation or None,
            )
    except AppError as exc:
        return _refused(request, "signup.html", exc, **context)
    return render(request, "signup.html", {**context, "done": SIGNED_UP}, status_code=202)


@router.get("/verify-email", response_class=HTMLResponse)
def verify_page(
    request: Request, session: SessionDep, ctx: AccountContext, user: WebUser, token: str = ""
) -> Response:
    # A page with a button, not the verification itself: mail scanners open links, and a
    # single-use link must not be used up by one.
    try:
        row = links.peek(
            session, purpose=links.VERIFY_EMAIL, secret=token, secret_key=ctx.settings.secret_key
        )
    except AppError as exc:
        return _refused(request, "verify_email.html", exc)
    owner = session.get(User, row.user_id) if row.user_id else None
    return render(
        request,
        "verify_email.html",
        {"token": token, "email": row.email, "name": owner.name if owner else ""},
    )


@router.post("/verify-email", dependencies=[CsrfChecked])
def verify(
    request: Request,
    session: SessionDep,
    ctx: AccountContext,
    token: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    try:
        with session.begin_nested():
            user = service.verify_email(session, ctx, secret=token)
    except AppError as exc:
        return _refused(request, "verify_email.html", exc)
    return redirect(
        request, "/account", ok=f"{user.email} is verified: you can join competitions and submit."
    )


@router.get("/password-reset", response_class=HTMLResponse)
def reset_page(request: Request, user: WebUser) -> Response:
    return render(request, "password_reset.html", {})


@router.post("/password-reset", dependencies=[CsrfChecked])
def request_reset(
    request: Request,
    session: SessionDep,
    ctx: AccountContext,
    email: Annotated[str, Form(max_length=320)] = "",
) -> Response:
    try:
        with session.begin_nested():
            service.request_password_reset(session, ctx, email=email)
    except AppError as exc:
        return _refused(request, "password_reset.html", exc)
    return render(request, "password_reset.html", {"done": RESET_SENT}, status_code=202)


@router.get("/password-reset/confirm", response_class=HTMLResponse)
def reset_confirm_page(
    request: Request, session: SessionDep, ctx: AccountContext, user: WebUser, token: str = ""
) -> Response:
    try:
        links.peek(
            session, purpose=links.RESET_PASSWORD, secret=token, secret_key=ctx.settings.secret_key
        )
    except AppError as exc:
        return _refused(request, "password_reset_confirm.html", exc)
    return render(request, "password_reset_confirm.html", {"token": token})


@router.post("/password-reset/confirm", dependencies=[CsrfChecked])
def reset_confirm(
    request: Request,
    session: SessionDep,
    ctx: AccountContext,
    token: Annotated[str, Form(max_length=200)] = "",
    password: Annotated[str, Form(max_length=1024)] = "",
) -> Response:
    try:
        with session.begin_nested():
            service.reset_password(session, ctx, secret=token, password=password)
    except links.LinkRefused as exc:
        return _refused(request, "password_reset_confirm.html", exc)
    except AppError as exc:
        return _refused(request, "password_reset_confirm.html", exc, token=token)
    response = redirect(request, "/signin", ok="Your password is set: sign in with it.")
    response.delete_cookie("podium_session", path="/")
    return response
