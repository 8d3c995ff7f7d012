"""Notifications on the pages: my recent notifications and my settings
(``/account/notifications``), and the unsubscribe link of every mail, which works without
signing in (a page with a button: mail scanners open links)."""

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from app.deps import SessionDep, SettingsDep
from app.errors import AppError
from app.notifications import preferences, unsubscribe
from app.web.session import CsrfChecked, SignedInUser, redirect
from app.web.templating import render

router = APIRouter(include_in_schema=False)


@router.get("/account/notifications", response_class=HTMLResponse)
def notifications_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    row = preferences.stored(session, user.id)
    return render(
        request,
        "notifications.html",
        {
            "recent": preferences.recent(session, user.id),
            "choices": preferences.choices_of(row),
            "kinds": preferences.KINDS,
            "mail": not (row is not None and row.no_mail),
        },
    )


@router.post("/account/notifications", dependencies=[CsrfChecked])
async def change_notifications(
    request: Request, session: SessionDep, user: SignedInUser
) -> Response:
    form = await request.form(max_files=0, max_fields=50)
    choices = {kind: form.get(kind) == "on" for kind in preferences.KINDS}
    preferences.update(session, user_id=user.id, choices=choices, mail=form.get("mail") == "on")
    return redirect(request, "/account/notifications", ok="Your notification settings are saved.")


@router.get("/unsubscribe", response_class=HTMLResponse)
def unsubscribe_page(request: Request, settings: SettingsDep, token: str = "") -> Response:
    try:
        _user_id, kind = unsubscribe.read(token, settings.secret_key)
    except AppError as exc:
        return render(request, "unsubscribe.html", {"error": exc.detail}, status_code=422)
    what = (
        "every mail from Podium"
        if kind == unsubscribe.ALL
        else (f"mails when {preferences.KINDS[kind][1]}")
    )
    return render(request, "unsubscribe.html", {"token": token, "what": what})


@router.post("/unsubscribe", dependencies=[CsrfChecked])
def unsubscribe_now(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    token: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    try:
        kind = unsubscribe.apply(session, value=token, secret_key=settings.secret_key)
    except AppError as exc:
        return render(request, "unsubscribe.html", {"error": exc.detail}, status_code=422)
    what = "any mail" if kind == unsubscribe.ALL else f"mails when {preferences.KINDS[kind][1]}"
    return render(request, "unsubscribe.html", {"done": f"You will not receive {what} any more."})
