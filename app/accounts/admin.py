"""The site admin's work: users (search, roles, disable and enable), invitations to sign up.
Every action is in the site's audit trail."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from app.accounts import links
from app.accounts.service import Context, record
from app.auth.emails import normalise_email
from app.auth.service import end_sessions
from app.errors import Conflict, Forbidden, NotFound, Unprocessable
from app.models import LinkSecret, Role, SiteAuditEntry, User, UserState
from app.pagination import Page, Paged, paginate

MAX_QUERY = 100
MAX_INVITATION_USES = 10_000
MAX_INVITATION_DAYS = 365


class AdminsOnly(Forbidden):
    code = "admins_only"


def require_admin(user: User) -> None:
    if not user.is_admin:
        raise AdminsOnly("only the site's admins may do this")


def find_users(session: Session, *, query: str, page: Page) -> Paged[User]:
    """Users whose name or address contains ``query`` (case-insensitive), newest first."""
    statement = select(User).order_by(User.id.desc())
    text = query.strip()[:MAX_QUERY]
    if text:
        statement = statement.where(
            or_(
                User.name.icontains(text, autoescape=True),
                User.email.icontains(text, autoescape=True),
            )
        )
    return paginate(session, statement, page)


def user_named(session: Session, name: str) -> User:
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise NotFound(f"no user is named '{name}'")
    return user


def set_role(session: Session, *, admin: User, user: User, role: Role) -> User:
    if user.id == admin.id and role != Role.admin:
        raise Conflict("you cannot take your own admin role away (another admin can)")
    before = user.role
    user.role = role
    record(
        session,
        actor=admin,
        action="user.role",
        target=user.name,
        detail={"before": before.value, "after": role.value},
    )
    return user


def set_enabled(session: Session, *, admin: User | None, user: User, enabled: bool) -> User:
    """Disable (every session ends, every token stops working at once) or enable again."""
    if user.state == UserState.deleted:
        raise Conflict(f"'{user.name}' deleted their account")
    if admin is not None and user.id == admin.id and not enabled:
        raise Conflict("you cannot disable your own account")
    user.state = UserState.active if enabled else UserState.disabled
    if not enabled:
        end_sessions(session, user=user)
    record(
        session,
        actor=admin,
        action="user.enabled" if enabled else "user.disabled",
        target=user.name,
    )
    return user


def make_invitation(
    session: Session,
    ctx: Context,
    *,
    admin: User | None,
    uses: int,
    days: float,
    email: str | None = None,
) -> tuple[str, LinkSecret]:
    """A sign-up invitation link: ``uses`` accounts within ``days``, for one address if given."""
    if not 1 <= uses <= MAX_INVITATION_USES:
        raise Unprocessable(f"uses: between 1 and {MAX_INVITATION_USES} sign-ups, e.g. 120")
    if not 0 < days <= MAX_INVITATION_DAYS:
        raise Unprocessable(f"days: more than 0 and at most {MAX_INVITATION_DAYS}, e.g. 14")
    address = normalise_email(email) if email else None
    issued = links.issue(
        session,
        purpose=links.INVITE,
        secret_key=ctx.settings.secret_key,
        lifetime=timedelta(days=days),
        uses=uses,
        email=address,
        created_by_id=admin.id if admin is not None else None,
    )
    record(
        session,
        actor=admin,
        action="invitation.made",
        target=issued.row.prefix,
        detail={"uses": uses, "days": days, "email": address},
    )
    return f"{ctx.base_url.rstrip('/')}/signup?invitation={issued.secret}", issued.row


def invitations(session: Session) -> list[LinkSecret]:
    """Invitations still usable, newest first."""
    return list(
        session.scalars(
            select(LinkSecret)
            .where(
                LinkSecret.purpose == links.INVITE,
                LinkSecret.uses_left > 0,
                LinkSecret.expires_at > datetime.now(UTC),
            )
            .order_by(LinkSecret.id.desc())
            .limit(500)
        )
    )


def revoke_invitation(session: Session, *, admin: User, invitation_id: int) -> None:
    removed = session.execute(
        delete(LinkSecret).where(LinkSecret.id == invitation_id, LinkSecret.purpose == links.INVITE)
    )
    if not removed.rowcount:  # type: ignore[attr-defined]
        raise NotFound(f"no invitation {invitation_id}")
    record(session, actor=admin, action="invitation.revoked", target=str(invitation_id))


def audit_trail(session: Session, *, page: Page) -> Paged[SiteAuditEntry]:
    return paginate(session, select(SiteAuditEntry).order_by(SiteAuditEntry.id.desc()), page)
