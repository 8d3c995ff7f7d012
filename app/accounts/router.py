"""The account API: sign up, verify, reset a password, the caller's own account; and the site
admin's users and invitations (``/api/v1/admin``, admins only)."""

from typing import Any

from fastapi import APIRouter, Query, status

from app.accounts import admin, own_data, service
from app.accounts.request import AccountContext
from app.accounts.schemas import (
    Accepted,
    AccountPublic,
    AuditPublic,
    DeleteAccount,
    EmailChange,
    InvitationCreate,
    InvitationMade,
    InvitationPublic,
    LinkToken,
    PasswordChange,
    ResetConfirm,
    ResetRequest,
    SignUp,
    UserAdmin,
    UserChange,
)
from app.deps import CurrentUser, IdPath, SessionDep
from app.errors import error_responses
from app.models import UserState
from app.pagination import PAGE_HEADERS, PageDep

router = APIRouter(tags=["accounts"])
admin_router = APIRouter(prefix="/admin", tags=["admin"])

SIGNED_UP = (
    "Check your mail: we sent a link to verify your address. You can sign in and look around "
    "now; joining and submitting wait for the link."
)
RESET_SENT = "If an account has this address, we sent it a link to reset its password (1 hour)."


@router.post(
    "/auth/signup",
    response_model=Accepted,
    status_code=status.HTTP_202_ACCEPTED,
    responses=error_responses(403, 409),
)
def sign_up(body: SignUp, session: SessionDep, ctx: AccountContext) -> Accepted:
    """Make an account (under the server's sign-up mode); the answer is the same whether or not
    the address is known. A taken user name is a 409 (names are public)."""
    service.sign_up(
        session,
        ctx,
        name=body.name,
        email=body.email,
        password=body.password,
        invitation=body.invitation,
    )
    return Accepted(status="verification_sent", detail=SIGNED_UP)


@router.post("/auth/verify-email", response_model=AccountPublic, responses=error_responses(409))
def verify_email(body: LinkToken, session: SessionDep, ctx: AccountContext) -> AccountPublic:
    return AccountPublic.model_validate(service.verify_email(session, ctx, secret=body.token))


@router.post("/auth/password-reset", response_model=Accepted, status_code=status.HTTP_202_ACCEPTED)
def request_reset(body: ResetRequest, session: SessionDep, ctx: AccountContext) -> Accepted:
    service.request_password_reset(session, ctx, email=body.email)
    return Accepted(status="sent_if_known", detail=RESET_SENT)


@router.post("/auth/password-reset/confirm", response_model=Accepted)
def confirm_reset(body: ResetConfirm, session: SessionDep, ctx: AccountContext) -> Accepted:
    service.reset_password(session, ctx, secret=body.token, password=body.password)
    return Accepted(status="password_set", detail="Your password is set; sign in with it.")


@router.get("/me/account", response_model=AccountPublic)
def my_account(user: CurrentUser) -> AccountPublic:
    return AccountPublic.model_validate(user)


@router.post(
    "/me/email",
    response_model=Accepted,
    status_code=status.HTTP_202_ACCEPTED,
    responses=error_responses(401),
)
def change_email(
    body: EmailChange, user: CurrentUser, session: SessionDep, ctx: AccountContext
) -> Accepted:
    address = service.change_email(
        session, ctx, user=user, email=body.email, password=body.password
    )
    return Accepted(status="verification_sent", detail=f"We sent a link to {address}.")


@router.post(
    "/me/email/verification",
    response_model=Accepted,
    status_code=status.HTTP_202_ACCEPTED,
    responses=error_responses(409),
)
def resend_verification(user: CurrentUser, session: SessionDep, ctx: AccountContext) -> Accepted:
    service.resend_verification(session, ctx, user=user)
    return Accepted(status="verification_sent", detail="We sent the link again.")


@router.post("/me/password", response_model=Accepted, responses=error_responses(401))
def change_password(body: PasswordChange, user: CurrentUser, session: SessionDep) -> Accepted:
    service.change_password(
        session, user=user, current=body.current_password, new=body.new_password
    )
    return Accepted(status="password_set", detail="Your password is changed.")


@router.get("/me/data")
def download_my_data(user: CurrentUser, session: SessionDep) -> dict[str, Any]:
    """Everything kept about the caller, as JSON (scores as the caller may see them)."""
    return own_data.my_data(session, user=user)


@router.post("/me/delete", response_model=Accepted, responses=error_responses(401))
def delete_my_account(body: DeleteAccount, user: CurrentUser, session: SessionDep) -> Accepted:
    service.delete_account(session, user=user, password=body.password, actor=user)
    return Accepted(status="deleted", detail="Your account is deleted.")


# --- Site admin ---------------------------------------------------------------------------------


@admin_router.get("/users", response_model=list[UserAdmin], responses=PAGE_HEADERS)
def list_users(
    user: CurrentUser,
    session: SessionDep,
    page: PageDep,
    q: str = Query(default="", max_length=100, description="part of a name or an address"),
) -> list[UserAdmin]:
    admin.require_admin(user)
    found = admin.find_users(session, query=q, page=page)
    page.tell_total(found.total)
    return [UserAdmin.model_validate(u) for u in found.items]


@admin_router.patch("/users/{name}", response_model=UserAdmin, responses=error_responses(403, 404))
def change_user(name: str, body: UserChange, user: CurrentUser, session: SessionDep) -> UserAdmin:
    admin.require_admin(user)
    target = admin.user_named(session, name)
    if body.role is not None:
        admin.set_role(session, admin=user, user=target, role=body.role)
    if body.state is not None:
        admin.set_enabled(
            session, admin=user, user=target, enabled=body.state == UserState.active.value
        )
    return UserAdmin.model_validate(target)


@admin_router.get("/invitations", response_model=list[InvitationPublic])
def list_invitations(user: CurrentUser, session: SessionDep) -> list[InvitationPublic]:
    admin.require_admin(user)
    return [InvitationPublic.model_validate(i) for i in admin.invitations(session)]


@admin_router.post(
    "/invitations", response_model=InvitationMade, status_code=status.HTTP_201_CREATED
)
def make_invitation(
    body: InvitationCreate, user: CurrentUser, session: SessionDep, ctx: AccountContext
) -> InvitationMade:
    admin.require_admin(user)
    link, row = admin.make_invitation(
        session, ctx, admin=user, uses=body.uses, days=body.days, email=body.email
    )
    return InvitationMade.model_validate(
        {**InvitationPublic.model_validate(row).model_dump(), "link": link}
    )


@admin_router.delete(
    "/invitations/{invitation_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(404),
)
def revoke_invitation(invitation_id: IdPath, user: CurrentUser, session: SessionDep) -> None:
    admin.require_admin(user)
    admin.revoke_invitation(session, admin=user, invitation_id=invitation_id)


@admin_router.get("/audit", response_model=list[AuditPublic], responses=PAGE_HEADERS)
def site_audit(user: CurrentUser, session: SessionDep, page: PageDep) -> list[AuditPublic]:
    admin.require_admin(user)
    found = admin.audit_trail(session, page=page)
    page.tell_total(found.total)
    return [
        AuditPublic(
            id=e.id,
            action=e.action,
            target=e.target,
            actor=e.actor.name if e.actor else None,
            created_at=e.created_at,
            detail=e.detail,
        )
        for e in found.items
    ]
