"""`podium users disable / enable / role / invite`, and `podium mail outbox / send`: the site
admin's account work from the server's machine (the same services as /admin)."""

import email
import email.policy
from pathlib import Path
from typing import Annotated

import typer

from app.cli.commands import _fail, _users_session, app, users_app

mail_app = typer.Typer(
    help="The mail outbox: list what was sent, deliver what is due.", no_args_is_help=True
)
app.add_typer(mail_app, name="mail")


def _set_enabled(name: str, *, enabled: bool) -> None:
    from app.accounts.admin import set_enabled, user_named
    from app.errors import AppError

    unit, _settings = _users_session()
    try:
        with unit as session:
            set_enabled(session, admin=None, user=user_named(session, name), enabled=enabled)
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(f"'{name}' is {'enabled' if enabled else 'disabled'}")


@users_app.command("disable")
def users_disable(name: Annotated[str, typer.Argument(help="The user's name.")]) -> None:
    """Disable a user: every session and token stops working at once (until enabled)."""
    _set_enabled(name, enabled=False)


@users_app.command("enable")
def users_enable(name: Annotated[str, typer.Argument(help="The user's name.")]) -> None:
    """Enable a disabled user again (their tokens work again; browsers sign in anew)."""
    _set_enabled(name, enabled=True)


@users_app.command("role")
def users_role(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    role: Annotated[str, typer.Argument(help="participant, organiser or admin.")],
) -> None:
    """Give a user another role."""
    from app.accounts.admin import user_named
    from app.accounts.service import record
    from app.errors import AppError
    from app.models import Role

    if role not in {r.value for r in Role}:
        _fail(f"the role must be participant, organiser or admin, not '{role}'")
    unit, _settings = _users_session()
    try:
        with unit as session:
            user = user_named(session, name)
            before, user.role = user.role, Role(role)
            record(
                session,
                actor=None,
                action="user.role",
                target=name,
                detail={"before": before.value, "after": role},
            )
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(f"'{name}' is now {role}")


@users_app.command("invite")
def users_invite(
    uses: Annotated[int, typer.Option("--uses", help="How many accounts it may make.")] = 1,
    days: Annotated[float, typer.Option("--days", help="How long it works.")] = 14,
    email_: Annotated[str | None, typer.Option("--email", help="Only for this address.")] = None,
) -> None:
    """Make a sign-up invitation link (for PODIUM_SIGNUP=invite) and print it once."""
    from app.accounts.admin import make_invitation
    from app.accounts.limits import AccountLimits
    from app.accounts.service import Context
    from app.errors import AppError
    from app.shared.state import SharedState

    unit, settings = _users_session()
    ctx = Context(
        settings=settings,
        base_url=settings.public_url or "http://127.0.0.1:8000",
        limits=AccountLimits.make(settings, SharedState(settings)),
        address="cli",
    )
    try:
        with unit as session:
            link, _row = make_invitation(
                session, ctx, admin=None, uses=uses, days=days, email=email_
            )
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(link)


@mail_app.command("outbox")
def mail_outbox(
    limit: Annotated[int, typer.Option("--limit", help="The newest this many.")] = 20,
    show: Annotated[bool, typer.Option("--show", help="Print each mail whole.")] = False,
) -> None:
    """The mails in the outbox folder (when no PODIUM_SMTP_URL is set), newest first, and what
    still waits in the queue."""
    from sqlalchemy import func, select

    from app.mail.sender import outbox_folder
    from app.models import OutboundMail

    unit, settings = _users_session()
    with unit as session:
        counts = dict(
            session.execute(
                select(OutboundMail.status, func.count()).group_by(OutboundMail.status)
            ).all()
        )
    typer.echo(
        f"queue: {counts.get('pending', 0)} waiting, {counts.get('sent', 0)} sent, "
        f"{counts.get('failed', 0)} failed"
    )
    folder = outbox_folder(settings)
    files = sorted(folder.glob("*.eml"), key=lambda p: p.stat().st_mtime, reverse=True)[:limit]
    if settings.smtp_url:
        typer.echo(f"mail goes to {settings.smtp_url.split('@')[-1]}; the folder holds none")
    for path in files:
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        typer.echo(f"{message['Date']}  {message['To']}  {message['Subject']}  ({path.name})")
        if show:
            body = message.get_body(preferencelist=("plain",))
            typer.echo(body.get_content() if body is not None else "")
    if not files and not settings.smtp_url:
        typer.echo(f"no mail in {Path(folder)}")


@mail_app.command("send")
def mail_send() -> None:
    """Deliver every mail that is due now, once (for a server run with PODIUM_SEND_MAIL=false,
    e.g. from cron)."""
    from app.db import make_engine, make_session_factory
    from app.mail.sender import deliver_due, make_transport

    _unit, settings = _users_session()  # the database checked and migrated
    factory = make_session_factory(make_engine(settings.database_url))
    sent, failed = deliver_due(factory, make_transport(settings), sender=settings.smtp_from)
    typer.echo(f"sent {sent}, failed {failed} (retried later)")
