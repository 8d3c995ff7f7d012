"""Sign-up, verified addresses, password resets, and what a user does with their own account
(change address or password, download their data, leave). Services take the session and plain
values and never commit; mails go to the outbox in the same transaction."""

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from app.accounts import links, mails
from app.accounts.limits import AccountLimits
from app.auth.emails import in_domains, normalise_email
from app.auth.names import check_signup_name
from app.auth.passwords import verify_password
from app.auth.service import end_sessions, set_password
from app.config import Settings
from app.errors import Conflict, Forbidden, RateLimited, Unauthorized
from app.mail.outbox import enqueue_mail
from app.models import (
    ApiToken,
    LinkSecret,
    OidcIdentity,
    Role,
    SiteAuditEntry,
    TeamMember,
    User,
    UserState,
    WebSession,
)

VERIFY_LIFETIME = timedelta(hours=24)
RESET_LIFETIME = timedelta(hours=1)


class SignUpClosed(Forbidden):
    code = "signup_closed"


@dataclass(frozen=True)
class Context:
    """What a service needs from the request around it."""

    settings: Settings
    base_url: str  # where links point (the public URL, or the request's)
    limits: AccountLimits
    address: str  # the client's address, for the limits

    def link(self, path: str, secret: str) -> str:
        return f"{self.base_url.rstrip('/')}{path}?token={secret}"


def record(
    session: Session,
    *,
    actor: User | None,
    action: str,
    target: str = "",
    detail: dict[str, Any] | None = None,
) -> None:
    session.add(
        SiteAuditEntry(
            actor_id=actor.id if actor is not None else None,
            action=action,
            target=target[:200],
            detail=detail,
        )
    )


# --- Who may make an account --------------------------------------------------------------------


def check_signup_allowed(
    session: Session, ctx: Context, *, email: str | None, invitation: str | None
) -> LinkSecret | None:
    """Refuse a new account the mode in force does not allow; return the invitation it uses
    (counted down by :func:`use_invitation` once the account exists)."""
    mode = ctx.settings.signup
    if mode == "closed":
        raise SignUpClosed(
            "sign-up is closed on this server: its admins make accounts (ask them for one)"
        )
    if mode == "invite":
        if not invitation:
            raise SignUpClosed("sign-up on this server needs an invitation link from its admins")
        row = links.peek(
            session, purpose=links.INVITE, secret=invitation, secret_key=ctx.settings.secret_key
        )
        if row.email is not None and email is not None and row.email != email:
            raise SignUpClosed("this invitation is for another e-mail address")
        return row
    if mode == "domains" and (email is None or not in_domains(email, ctx.settings.signup_domains)):
        allowed = ", ".join(d.strip() for d in ctx.settings.signup_domains.split(",") if d.strip())
        raise SignUpClosed(
            f"sign-up on this server is for addresses at {allowed or 'no domain yet'} only"
        )
    return None


def use_invitation(session: Session, ctx: Context, *, invitation: str | None) -> None:
    if ctx.settings.signup == "invite" and invitation:
        links.use(
            session, purpose=links.INVITE, secret=invitation, secret_key=ctx.settings.secret_key
        )


def _check_unverified_room(session: Session, ctx: Context) -> None:
    # Sign-ups no one verifies are pruned after a week (prune_unverified); until then, at most
    # this many wait, so a flood cannot grow the table without bound.
    waiting = session.scalar(
        select(func.count())
        .select_from(User)
        .where(User.must_verify.is_(True), User.email_verified_at.is_(None))
    )
    if (waiting or 0) >= ctx.settings.signup_max_unverified:
        raise RateLimited(
            "sign-up is paused for a while (too many accounts wait for their verification)",
            retry_after=3600,
        )


# --- Sign-up and verification -------------------------------------------------------------------


def sign_up(
    session: Session,
    ctx: Context,
    *,
    name: str,
    email: str,
    password: str,
    invitation: str | None = None,
) -> User:
    """A new participant account, able to browse at once, to join and submit once the address is
    verified. Whether the address is taken changes nothing the caller sees (the mail to it says)."""
    ctx.limits.hit_address(ctx.address)
    check_signup_name(name)
    address = normalise_email(email)
    check_signup_allowed(session, ctx, email=address, invitation=invitation)
    if session.scalar(select(User.id).where(func.lower(User.name) == name.lower())) is not None:
        # Names are public (every board shows them): saying so tells nothing new.
        raise Conflict(f"the user name '{name}' is taken; choose another", extra={"field": "name"})
    _check_unverified_room(session, ctx)
    user = User(name=name, role=Role.participant, must_verify=True, pending_email=address)
    set_password(user, password=password)
    session.add(user)
    session.flush()
    use_invitation(session, ctx, invitation=invitation)
    send_verification(session, ctx, user=user, address=address)
    record(session, actor=user, action="account.signup", target=user.name)
    return user


def send_verification(session: Session, ctx: Context, *, user: User, address: str) -> None:
    """Mail a link that verifies ``address`` for ``user`` (24 h, once); older ones end."""
    links.revoke(session, purpose=links.VERIFY_EMAIL, user_id=user.id)
    issued = links.issue(
        session,
        purpose=links.VERIFY_EMAIL,
        secret_key=ctx.settings.secret_key,
        lifetime=VERIFY_LIFETIME,
        user_id=user.id,
        email=address,
    )
    user.pending_email = address
    if not ctx.limits.may_mail(address):
        return
    owner = session.scalar(select(User.name).where(User.email == address, User.id != user.id))
    subject, body = mails.verify_address(
        name=user.name, link=ctx.link("/verify-email", issued.secret), taken_by=owner
    )
    enqueue_mail(
        session, to=address, subject=subject, body=body, max_pending=ctx.settings.mail_max_pending
    )


def resend_verification(session: Session, ctx: Context, *, user: User) -> None:
    ctx.limits.hit_address(ctx.address)
    if user.pending_email is None:
        raise Conflict("there is no address waiting for its verification")
    send_verification(session, ctx, user=user, address=user.pending_email)


def verify_email(session: Session, ctx: Context, *, secret: str) -> User:
    """Follow a verification link: its address becomes the user's (unless another account holds
    it already)."""
    row = links.use(
        session, purpose=links.VERIFY_EMAIL, secret=secret, secret_key=ctx.settings.secret_key
    )
    user = session.get(User, row.user_id) if row.user_id is not None else None
    if user is None or row.email is None or not user.is_active:
        raise links.LinkRefused()
    owner = session.scalar(select(User).where(User.email == row.email, User.id != user.id))
    if owner is not None:
        raise Conflict("this address belongs to another account: sign in to that one instead")
    old = user.email
    user.email, user.email_verified_at, user.pending_email = row.email, datetime.now(UTC), None
    if old is not None and old != row.email and ctx.limits.may_mail(old):
        subject, body = mails.address_changed(name=user.name, new=row.email)
        enqueue_mail(session, to=old, subject=subject, body=body)
    record(session, actor=user, action="account.email_verified", target=user.name)
    return user


def change_email(
    session: Session, ctx: Context, *, user: User, email: str, password: str | None
) -> str:
    """Ask to move the account to a new address: verified by a link mailed there, the old one
    kept until then. The current password is asked where the account has one."""
    _check_current_password(user, password)
    address = normalise_email(email)
    ctx.limits.hit_address(ctx.address)
    send_verification(session, ctx, user=user, address=address)
    record(session, actor=user, action="account.email_change_requested", target=user.name)
    return address


# --- Passwords --------------------------------------------------------------------------------


def request_password_reset(session: Session, ctx: Context, *, email: str) -> None:
    """Mail a reset link if an active account holds ``email``; the same answer either way."""
    ctx.limits.hit_address(ctx.address)
    address = normalise_email(email)
    user = session.scalar(select(User).where(User.email == address))
    if user is None or not user.is_active or not ctx.limits.may_mail(address):
        return  # the same answer: the caller learns nothing of the address
    links.revoke(session, purpose=links.RESET_PASSWORD, user_id=user.id)
    issued = links.issue(
        session,
        purpose=links.RESET_PASSWORD,
        secret_key=ctx.settings.secret_key,
        lifetime=RESET_LIFETIME,
        user_id=user.id,
        email=address,
    )
    subject, body = mails.reset_password(
        name=user.name, link=ctx.link("/password-reset/confirm", issued.secret)
    )
    enqueue_mail(
        session, to=address, subject=subject, body=body, max_pending=ctx.settings.mail_max_pending
    )


def reset_password(session: Session, ctx: Context, *, secret: str, password: str) -> User:
    """Set a new password from a reset link; every browser of the user is signed out."""
    row = links.peek(
        session, purpose=links.RESET_PASSWORD, secret=secret, secret_key=ctx.settings.secret_key
    )
    user = session.get(User, row.user_id) if row.user_id is not None else None
    if user is None or not user.is_active:
        raise links.LinkRefused()
    set_password(user, password=password)  # refused (422) before the link is used up
    links.use(
        session, purpose=links.RESET_PASSWORD, secret=secret, secret_key=ctx.settings.secret_key
    )
    links.revoke(session, purpose=links.RESET_PASSWORD, user_id=user.id)
    end_sessions(session, user=user)
    record(session, actor=user, action="account.password_reset", target=user.name)
    return user


def _check_current_password(user: User, password: str | None) -> None:
    if user.password_hash is not None and not verify_password(password or "", user.password_hash):
        raise Unauthorized("current_password: that is not your current password")


def change_password(session: Session, *, user: User, current: str | None, new: str) -> None:
    """A new password (the current one asked); every browser of the user is signed out."""
    _check_current_password(user, current)
    set_password(user, password=new)
    end_sessions(session, user=user)
    record(session, actor=user, action="account.password_changed", target=user.name)


# --- Leaving ----------------------------------------------------------------------------------


def pseudonym(user: User) -> str:
    # Stable (the same user always gets the same one) and tells nothing of the old name.
    return f"deleted-{hashlib.sha256(f'podium-user-{user.id}'.encode()).hexdigest()[:10]}"


def delete_account(session: Session, *, user: User, password: str | None, actor: User) -> None:
    """The user leaves: the name becomes a pseudonym; address, password, sessions, tokens,
    links and linked sign-ins are removed. Teams keep their entries (boards stay whole)."""
    if actor.id == user.id:
        _check_current_password(user, password)
    user.name = pseudonym(user)
    user.email = user.pending_email = user.password_hash = None
    user.email_verified_at = None
    user.state = UserState.deleted
    session.execute(delete(WebSession).where(WebSession.user_id == user.id))
    session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    session.execute(delete(LinkSecret).where(LinkSecret.user_id == user.id))
    session.execute(delete(OidcIdentity).where(OidcIdentity.user_id == user.id))
    # The trail keeps who left, under the pseudonym only.
    record(session, actor=actor, action="account.deleted", target=user.name, detail=None)


def prune_unverified(session: Session, *, older_than: timedelta = timedelta(days=7)) -> int:
    """Remove sign-ups never verified (nor used) within a week; run by the sweep."""
    cutoff = datetime.now(UTC) - older_than
    stale = list(
        session.scalars(
            select(User).where(
                User.must_verify.is_(True),
                User.email_verified_at.is_(None),
                User.created_at < cutoff,
                ~User.id.in_(select(OidcIdentity.user_id)),
            )
        )
    )
    removed = 0
    for user in stale:
        if session.scalar(select(TeamMember.id).where(TeamMember.user_id == user.id).limit(1)):
            continue
        session.delete(user)
        removed += 1
    return removed
