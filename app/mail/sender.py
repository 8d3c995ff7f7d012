"""Delivering the outbox: each due mail is claimed under a lease (so two processes never send
one mail at once, and a sender that died is taken over), handed to the transport, and marked
sent; a failure is retried with a growing delay for about a day, then given up.

Every mail carries a Message-ID made from its row, the same on every attempt: should a sender die
between the server's "250 OK" and marking the row, the one retry is recognisably the same mail.
"""

import logging
import smtplib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import unit_of_work
from app.jobs.claims import claim_due
from app.jobs.woken import WokenLoop
from app.mail.outbox import register_waker, unregister_waker
from app.models import OutboundMail

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=120)
# 30 s, 1 min, 2 min, ... capped at 2 h: 20 attempts span a little more than a day.
FIRST_DELAY_SECONDS = 30
MAX_DELAY_SECONDS = 7200
MAX_ATTEMPTS = 20
SMTP_TIMEOUT_SECONDS = 20


class Transport(Protocol):
    def send(self, message: EmailMessage) -> None: ...


def build_message(mail: OutboundMail, *, sender: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = mail.to_addr
    message["Subject"] = mail.subject
    message["Date"] = format_datetime(mail.created_at)
    domain = sender.rpartition("@")[2].strip(" >") or "podium.invalid"
    message["Message-ID"] = f"<podium-mail-{mail.id}.{int(mail.created_at.timestamp())}@{domain}>"
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(mail.body)
    return message


@dataclass(frozen=True)
class SmtpTransport:
    """``smtp://user:password@host:port`` (STARTTLS when the server offers it, required with
    ``?starttls=required``), or ``smtps://…`` (TLS from the start)."""

    url: str

    def send(self, message: EmailMessage) -> None:
        parts = urlsplit(self.url)
        host = parts.hostname or "127.0.0.1"
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
        if parts.scheme == "smtps":
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                host, parts.port or 465, timeout=SMTP_TIMEOUT_SECONDS
            )
        else:
            client = smtplib.SMTP(host, parts.port or 25, timeout=SMTP_TIMEOUT_SECONDS)
        with client:
            if parts.scheme == "smtp":
                client.ehlo()
                if client.has_extn("starttls"):
                    client.starttls()
                    client.ehlo()
                elif query.get("starttls") == "required":
                    raise smtplib.SMTPException("the server offers no STARTTLS")
            if parts.username:
                client.login(unquote(parts.username), unquote(parts.password or ""))
            client.send_message(message)


@dataclass(frozen=True)
class FolderTransport:
    """The embedded default: each mail a ``.eml`` file in ``folder`` (``podium mail outbox``
    lists them). Writing the same mail again writes the same file: delivered once."""

    folder: Path

    def send(self, message: EmailMessage) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = str(message["Message-ID"]).strip("<>").split("@")[0] + ".eml"
        temporary = self.folder / f".{name}.tmp"
        temporary.write_bytes(bytes(message))
        temporary.replace(self.folder / name)


def outbox_folder(settings: Settings) -> Path:
    return Path(settings.data_dir) / "outbox"


def make_transport(settings: Settings) -> Transport:
    if settings.smtp_url:
        return SmtpTransport(settings.smtp_url)
    return FolderTransport(outbox_folder(settings))


def _delay(attempts: int) -> timedelta:
    return timedelta(
        seconds=min(MAX_DELAY_SECONDS, FIRST_DELAY_SECONDS * 2 ** max(0, attempts - 1))
    )


def deliver_due(
    factory: sessionmaker[Session],
    transport: Transport,
    *,
    sender: str,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    batch: int = 50,
) -> tuple[int, int]:
    """One pass over the mails due now: returns (sent, failed attempts)."""
    claimed = claim_due(factory, OutboundMail, at=now(), lease=LEASE, batch=batch)
    sent = failed = 0
    for mail_id in claimed:
        with unit_of_work(factory) as session:
            mail = session.get(OutboundMail, mail_id)
            if mail is None or mail.status != "pending":
                continue
            message = build_message(mail, sender=sender)
        error: str | None = None
        try:
            transport.send(message)
        except (OSError, smtplib.SMTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
        with unit_of_work(factory) as session:
            mail = session.get(OutboundMail, mail_id)
            if mail is None:
                continue
            mail.lease_expires_at = None
            if error is None:
                mail.status, mail.sent_at, mail.last_error = "sent", now(), None
                sent += 1
                continue
            failed += 1
            mail.last_error = error
            if mail.attempts >= MAX_ATTEMPTS:
                mail.status = "failed"
                log.error("mail %s to its recipient failed for good: %s", mail_id, error)
            else:
                mail.next_attempt_at = now() + _delay(mail.attempts)
                log.warning("mail %s not sent (attempt %s): %s", mail_id, mail.attempts, error)
    return sent, failed


class MailSender(WokenLoop):
    """The embedded sender: delivers what is due every ``interval`` seconds, and at once after
    this process commits a mail. Safe beside senders in other processes (leases)."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        *,
        interval: float = 5.0,
        housekeeping: Callable[[], object] | None = None,
        housekeeping_every: float = 600.0,
    ) -> None:
        """``housekeeping``: other periodic clean-up this thread runs every
        ``housekeeping_every`` seconds (the accounts' spent links and stale sign-ups)."""
        transport, sender = make_transport(settings), settings.smtp_from
        super().__init__(
            "podium-mail",
            lambda: deliver_due(factory, transport, sender=sender),
            interval=interval,
            wakers=(register_waker, unregister_waker),
            chore=housekeeping,
            chore_every=housekeeping_every,
        )
