"""Who takes part in a competition: its registration mode (open, approval, invite), its allow
and deny lists, its rules and the version each participant accepted, and the hosts' decisions.

A competition that is open, without rules and without a deny list costs an upload nothing: no
registration is read (:func:`needs_registration`). Otherwise a submission needs an approved
registration whose accepted rules are the current ones.
"""

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import links
from app.auth.service import require_may_take_part
from app.entry.gate import (
    APPROVAL,
    INVITE,
    OPEN,
    RegistrationRefused,
    has_rules,
    refuse_denied_address,
    registration_of,
    rules_refusal,
)
from app.entry.lists import on_list
from app.errors import Conflict, NotFound
from app.events.stream import REGISTRATION_DECIDED, REGISTRATION_REQUESTED, emit
from app.models import Competition, Registration, RegistrationStatus, User
from app.teams.service import check_not_host

COMPETITION_INVITE = "competition_invite"
MAX_MESSAGE = 2000


def join(
    session: Session,
    *,
    competition: Competition,
    user: User,
    secret_key: str,
    message: str = "",
    accept_rules: bool = False,
    invitation: str | None = None,
) -> Registration:
    """The caller's registration after asking to take part: approved at once (open, or invited),
    or pending the hosts' decision (approval). Refusals are 403s naming why; unaccepted rules
    a 409 naming the rules page."""
    require_may_take_part(user)
    check_not_host(session, competition, user)
    registration = registration_of(session, competition=competition, user=user)
    if registration is not None and registration.status == RegistrationStatus.banned:
        raise RegistrationRefused("you have been banned from this competition")
    if registration is not None and registration.status == RegistrationStatus.denied:
        raise RegistrationRefused("the hosts declined your request to take part")
    refuse_denied_address(competition, user)
    now = datetime.now(UTC)
    accepted_now = accept_rules and has_rules(competition)
    if accepted_now and registration is not None:
        registration.rules_version = competition.rules_version
        registration.rules_accepted_at = now
    if not accepted_now:
        rules_refusal(competition, registration)
    if registration is not None and registration.status in (
        RegistrationStatus.approved,
        RegistrationStatus.pending,
    ):
        if competition.registration == OPEN:
            # Asked while the hosts approved each request; the competition is open now.
            registration.status = RegistrationStatus.approved
        session.flush()
        return registration
    status = RegistrationStatus.approved
    if competition.registration == APPROVAL:
        status = RegistrationStatus.pending
    elif competition.registration == INVITE and not on_list(user.email, competition.allow):
        if not invitation:
            raise RegistrationRefused(
                f"'{competition.slug}' is by invitation: your address is not on its list; "
                "join with the invitation link the hosts sent"
            )
        _use_invitation(session, competition, invitation, secret_key)
    if registration is None:
        registration = Registration(
            competition_id=competition.id, user_id=user.id, status=status, requested_at=now
        )
        session.add(registration)
    registration.status = status
    registration.message = message[:MAX_MESSAGE]
    registration.requested_at = now
    if accepted_now:
        registration.rules_version = competition.rules_version
        registration.rules_accepted_at = now
    session.flush()
    if status == RegistrationStatus.pending:
        emit(
            session,
            REGISTRATION_REQUESTED,
            competition_id=competition.id,
            user_id=user.id,
            payload={"user": user.name},
        )
    return registration


def _use_invitation(
    session: Session, competition: Competition, secret: str, secret_key: str
) -> None:
    try:
        row = links.peek(session, purpose=COMPETITION_INVITE, secret=secret, secret_key=secret_key)
        if (row.data or {}).get("competition_id") != competition.id:
            raise links.LinkRefused()
        links.use(session, purpose=COMPETITION_INVITE, secret=secret, secret_key=secret_key)
    except links.LinkRefused:
        raise RegistrationRefused(
            "this invitation is not valid any more: it was used up, it expired, or it is for "
            "another competition"
        ) from None


def invite_link(
    session: Session,
    *,
    competition: Competition,
    actor: User,
    secret_key: str,
    uses: int,
    days: int,
    base_url: str,
) -> tuple[str, datetime]:
    issued = links.issue(
        session,
        purpose=COMPETITION_INVITE,
        secret_key=secret_key,
        lifetime=timedelta(days=days),
        uses=uses,
        data={"competition_id": competition.id},
        created_by_id=actor.id,
    )
    url = f"{base_url.rstrip('/')}/c/{competition.slug}/join?invitation={issued.secret}"
    return url, issued.row.expires_at


def accept_rules(
    session: Session, *, competition: Competition, user: User, secret_key: str
) -> Registration:
    """Accept the current rules: for a participant, before the next submission; for anyone
    else, it is asking to join with the rules accepted."""
    if not has_rules(competition):
        raise Conflict(f"'{competition.slug}' has no rules to accept")
    registration = registration_of(session, competition=competition, user=user)
    if registration is None:
        return join(
            session, competition=competition, user=user, secret_key=secret_key, accept_rules=True
        )
    require_may_take_part(user)
    registration.rules_version = competition.rules_version
    registration.rules_accepted_at = datetime.now(UTC)
    session.flush()
    return registration


def decide(
    session: Session,
    *,
    competition: Competition,
    names: list[str],
    approve: bool,
    actor: User,
    message: str = "",
) -> list[Registration]:
    """Approve or deny each named registrant (404 naming any unknown), each decision an event."""
    rows = session.execute(
        select(Registration, User)
        .join(User, User.id == Registration.user_id)
        .where(Registration.competition_id == competition.id, User.name.in_(names))
    ).all()
    found = {user.name: registration for registration, user in rows}
    missing = [name for name in names if name not in found]
    if missing:
        raise NotFound(
            f"no registration in '{competition.slug}' for: {', '.join(sorted(missing)[:20])}",
            extra={"missing": sorted(missing)[:100]},
        )
    status = RegistrationStatus.approved if approve else RegistrationStatus.denied
    now = datetime.now(UTC)
    changed = []
    for name in names:
        registration = found[name]
        if registration.status == status or registration.status == RegistrationStatus.banned:
            continue
        registration.status = status
        registration.decided_at = now
        registration.decided_by_id = actor.id
        registration.decision_message = message[:MAX_MESSAGE]
        changed.append(registration)
        emit(
            session,
            REGISTRATION_DECIDED,
            competition_id=competition.id,
            user_id=registration.user_id,
            payload={"status": status.value, "message": message[:MAX_MESSAGE]},
        )
    session.flush()
    return [found[name] for name in names]
