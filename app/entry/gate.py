"""The registration gate: whether a user may submit to a competition now (approved, the
current rules accepted, not on the deny list), asked on every upload. A competition that is
open, without rules and without a deny list costs an upload nothing: no registration is read."""

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.entry.lists import on_list
from app.errors import Conflict, Forbidden
from app.models import Competition, Registration, RegistrationStatus, User

OPEN, APPROVAL, INVITE = "open", "approval", "invite"


class RulesNotAccepted(Conflict):
    """The rules are not accepted, or changed since: the page to read and accept them is named."""

    code = "rules_not_accepted"


class RegistrationRefused(Forbidden):
    code = "registration_refused"


class RegistrationPending(Forbidden):
    code = "registration_pending"


class NotRegistered(Forbidden):
    code = "not_registered"


def rules_page(competition: Competition) -> str:
    return f"/c/{competition.slug}/rules"


def has_rules(competition: Competition) -> bool:
    """Rules written (and not cleared since): there is something to accept."""
    return bool(competition.rules.strip())


def needs_registration(competition: Competition) -> bool:
    return bool(competition.registration != OPEN or has_rules(competition) or competition.deny)


def registration_of(
    session: Session, *, competition: Competition, user: User
) -> Registration | None:
    return session.scalar(
        select(Registration).where(
            Registration.competition_id == competition.id, Registration.user_id == user.id
        )
    )


def refuse_denied_address(competition: Competition, user: User) -> None:
    if on_list(user.email, competition.deny):
        raise RegistrationRefused(
            f"'{competition.slug}' does not take part from your e-mail address or its domain"
        )


def rules_refusal(competition: Competition, registration: Registration | None) -> None:
    if not has_rules(competition):
        return
    accepted = registration.rules_version if registration is not None else None
    if accepted == competition.rules_version:
        return
    page = rules_page(competition)
    if accepted is None:
        detail = f"accept the competition's rules first: read them at {page}"
    else:
        detail = (
            f"the competition's rules changed since you accepted them: read and accept them "
            f"again at {page} before your next submission"
        )
    raise RulesNotAccepted(
        detail,
        extra={
            "rules_url": page,
            "rules_version": competition.rules_version,
            "accepted_version": accepted,
        },
    )


def require_may_submit(session: Session, *, competition: Competition, user: User) -> None:
    """Refuse a participant's submission the competition's registration does not allow."""
    if not needs_registration(competition):
        return
    refuse_denied_address(competition, user)
    registration = registration_of(session, competition=competition, user=user)
    if registration is None:
        if competition.registration == OPEN:
            rules_refusal(competition, None)
            return
        raise NotRegistered(
            f"join the competition first ({'ask the hosts' if competition.registration == APPROVAL else 'by invitation'}): "
            f"POST /api/v1/competitions/{competition.slug}/join"
        )
    if registration.status == RegistrationStatus.pending and competition.registration != OPEN:
        raise RegistrationPending("your request to take part waits for the hosts' decision")
    if registration.status in (RegistrationStatus.denied, RegistrationStatus.banned):
        raise RegistrationRefused("you do not take part in this competition")
    rules_refusal(competition, registration)
