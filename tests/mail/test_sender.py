"""The outbox and its sender, against a real SMTP server (aiosmtpd) the test starts: a server
that is down loses nothing, each mail is delivered once, headers built from user data cannot
add headers, and the queue is bounded."""

import email
import email.policy
import socket
from datetime import UTC, datetime, timedelta

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from app.db import make_engine, make_session_factory, unit_of_work
from app.mail.outbox import MailQueueFull, enqueue_mail
from app.mail.sender import FolderTransport, SmtpTransport, deliver_due
from app.models import OutboundMail
from tests.mail.smtp import Inbox

SENDER = "Podium <podium@example.org>"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def factory(fresh_database_url):  # type: ignore[no-untyped-def]
    engine = make_engine(fresh_database_url)
    yield make_session_factory(engine)
    engine.dispose()


def _queue(factory, *mails: tuple[str, str, str]) -> None:  # type: ignore[no-untyped-def]
    with unit_of_work(factory) as session:
        for to, subject, body in mails:
            enqueue_mail(session, to=to, subject=subject, body=body)


def _statuses(factory) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    with factory() as session:
        return [
            (m.status, m.attempts)
            for m in session.scalars(select(OutboundMail).order_by(OutboundMail.id))
        ]


@pytest.mark.slow
def test_a_server_that_is_down_loses_nothing_and_each_mail_arrives_once(factory):
    port = _free_port()
    transport = SmtpTransport(f"smtp://127.0.0.1:{port}")
    _queue(factory, *[(f"p{n}@example.org", f"Mail {n}", f"Body {n}") for n in range(3)])
    clock = [datetime.now(UTC)]

    # Down: every attempt fails, every mail waits for a later one.
    assert deliver_due(factory, transport, sender=SENDER, now=lambda: clock[0]) == (0, 3)
    assert _statuses(factory) == [("pending", 1)] * 3
    # Nothing is due again before its backoff.
    assert deliver_due(factory, transport, sender=SENDER, now=lambda: clock[0]) == (0, 0)

    inbox = Inbox()
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    try:
        clock[0] += timedelta(minutes=5)
        assert deliver_due(factory, transport, sender=SENDER, now=lambda: clock[0]) == (3, 0)
        clock[0] += timedelta(hours=3)
        assert deliver_due(factory, transport, sender=SENDER, now=lambda: clock[0]) == (0, 0)
    finally:
        server.stop()
    assert sorted(m["To"] for m in inbox.messages) == [f"p{n}@example.org" for n in range(3)]
    assert len({m["Message-ID"] for m in inbox.messages}) == 3
    assert _statuses(factory) == [("sent", 2)] * 3


@pytest.mark.slow
def test_headers_from_user_data_cannot_inject_headers(factory):
    inbox = Inbox()
    server = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    server.start()
    try:
        _queue(factory, ("ada@example.org", "Hello\r\nBcc: mallory@example.org\nX-Evil: 1", "Hi"))
        assert deliver_due(
            factory, SmtpTransport(f"smtp://127.0.0.1:{server.port}"), sender=SENDER
        ) == (1, 0)
    finally:
        server.stop()
    (message,) = inbox.messages
    assert message["Bcc"] is None and message["X-Evil"] is None
    assert "\n" not in message["Subject"] and message["Subject"].startswith("Hello")


def test_without_a_server_mails_land_in_the_outbox_folder_once(factory, tmp_path):
    transport = FolderTransport(tmp_path / "outbox")
    _queue(factory, ("ada@example.org", "Verify", "Follow the link"))
    assert deliver_due(factory, transport, sender=SENDER) == (1, 0)
    (path,) = (tmp_path / "outbox").glob("*.eml")
    mail = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert mail["To"] == "ada@example.org" and "Follow the link" in mail.get_content()
    # The same mail written again (a sender that died before marking it) is the same file.
    with factory() as session:
        row = session.scalars(select(OutboundMail)).one()
        from app.mail.sender import build_message

        transport.send(build_message(row, sender=SENDER))
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 1


def test_the_queue_is_bounded(factory):
    with unit_of_work(factory) as session:
        for n in range(3):
            enqueue_mail(session, to=f"p{n}@example.org", subject="s", body="b", max_pending=3)
    with pytest.raises(MailQueueFull), unit_of_work(factory) as session:
        enqueue_mail(session, to="p4@example.org", subject="s", body="b", max_pending=3)


def test_a_mail_that_keeps_failing_is_given_up_after_about_a_day(factory):
    from app.mail.sender import MAX_ATTEMPTS

    port = _free_port()
    _queue(factory, ("ada@example.org", "s", "b"))
    clock = [datetime.now(UTC)]
    waited = timedelta()
    for _ in range(MAX_ATTEMPTS):
        deliver_due(
            factory, SmtpTransport(f"smtp://127.0.0.1:{port}"), sender=SENDER, now=lambda: clock[0]
        )
        clock[0] += timedelta(hours=2, seconds=1)
        waited += timedelta(hours=2, seconds=1)
    assert _statuses(factory) == [("failed", MAX_ATTEMPTS)]
    # The schedule itself: the waits between the first and the last attempt add up to a day.
    from app.mail.sender import _delay

    assert sum((_delay(n) for n in range(1, MAX_ATTEMPTS)), timedelta()) >= timedelta(days=1)
    assert waited >= timedelta(days=1)
