"""Putting a mail in the outbox: a row written in the caller's transaction, so a mail leaves if
and only if what it tells was committed, and never from inside a request."""

import re
from collections.abc import Callable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db import after_commit
from app.errors import RateLimited
from app.models import OutboundMail

# Header values are built from users' data (names, titles): no control character (CR and LF
# above all, which would start a header of the attacker's own) ever reaches a header.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
MAX_SUBJECT = 200
MAX_BODY = 100_000

# Wakes the sender of this process after a commit (it polls anyway, for other processes' mails).
_wakers: list[Callable[[], None]] = []


def header_safe(value: str, *, limit: int = MAX_SUBJECT) -> str:
    """One line, no control characters, at most ``limit`` characters."""
    return _CONTROL.sub(" ", value).strip()[:limit]


class MailQueueFull(RateLimited):
    code = "mail_queue_full"


def enqueue_mail(
    session: Session, *, to: str, subject: str, body: str, max_pending: int | None = None
) -> OutboundMail:
    """A mail to ``to`` (an address normalised by app.auth.emails), sent after the commit.

    ``max_pending``: refuse (429) while this many mails wait already, so that a flood of
    sign-ups or requests cannot grow the queue without bound."""
    if max_pending is not None:
        waiting = session.scalar(
            select(func.count()).select_from(OutboundMail).where(OutboundMail.status == "pending")
        )
        if (waiting or 0) >= max_pending:
            raise MailQueueFull(
                "too many mails are waiting to be sent; try again in a few minutes",
                retry_after=300,
            )
    mail = OutboundMail(
        to_addr=header_safe(to, limit=320),
        subject=header_safe(subject),
        body=body[:MAX_BODY],
    )
    session.add(mail)
    session.flush()
    for wake in list(_wakers):
        after_commit(session, wake)
    return mail


def register_waker(wake: Callable[[], None]) -> None:
    _wakers.append(wake)


def unregister_waker(wake: Callable[[], None]) -> None:
    if wake in _wakers:
        _wakers.remove(wake)
