"""The stream's readers: each event handled once per reader, a failing event not stopping the
others, a full outbox sending notices to the pages only, and old rows pruned."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from app.auth.service import create_user
from app.dispatch.worker import prune
from app.events.readers import read_new
from app.events.stream import ANNOUNCEMENT, emit
from app.mail.outbox import enqueue_mail
from app.models import Event, EventMark, Notification, OutboundMail, Role
from app.notifications.dispatch import Context, Notice, tell


def _count(session_factory, model) -> int:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def test_each_event_is_handled_once_and_a_failing_one_does_not_stop_the_rest(session_factory):
    with session_factory() as session:
        for n in range(3):
            emit(session, ANNOUNCEMENT, competition_id=None, payload={"n": n})
        session.commit()
    seen: list[int] = []

    def handle(session, event):  # type: ignore[no-untyped-def]
        if event.payload["n"] == 1:
            raise RuntimeError("a poisoned event")
        seen.append(event.payload["n"])

    assert read_new(session_factory, "test", handle) == 3
    assert read_new(session_factory, "test", handle) == 0
    assert seen == [0, 2]
    # Another reader reads the same stream at its own pace.
    assert read_new(session_factory, "other", lambda s, e: None) == 3
    assert _count(session_factory, EventMark) == 6


def test_a_full_outbox_keeps_notices_on_the_pages(session_factory):
    with session_factory() as session:
        user, _ = create_user(
            session, name="ada", role=Role.participant, secret_key="s", email="ada@example.org"
        )
        enqueue_mail(session, to="x@example.org", subject="waiting", body="b")
        emit(session, ANNOUNCEMENT, competition_id=None)
        event = session.scalars(select(Event)).one()
        told = tell(
            session,
            [user.id],
            Notice("announcements", "t", "b", "/"),
            event,
            Context(base_url="http://x", secret_key="s", max_pending=1),
        )
        session.commit()
    assert told == 1
    assert _count(session_factory, Notification) == 1
    assert _count(session_factory, OutboundMail) == 1  # only the one that was waiting


def test_old_rows_are_pruned(session_factory):
    old = datetime.now(UTC) - timedelta(days=40)
    with session_factory() as session:
        user, _ = create_user(session, name="ada", role=Role.participant, secret_key="s")
        session.add(Event(kind="x", payload={}, created_at=old))
        session.add(Event(kind="y", payload={}))
        session.add(Notification(user_id=user.id, kind="x", title="t", created_at=old))
        session.commit()
    assert prune(session_factory) == 2
    with session_factory() as session:
        assert session.scalars(select(Event.kind)).all() == ["y"]
