"""app.db.no_transaction: a request's unit of work gives back its transaction and its database
slot for slow work, and takes the slot again after; it refuses once it has written."""

import pytest
from sqlalchemy import select

from app.db import REQUEST_SLOT, no_transaction
from app.models import Competition, User


class RecordingSlot:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def release(self) -> None:
        self.calls.append("release")

    def acquire(self) -> None:
        self.calls.append("acquire")


def test_a_reading_unit_gives_back_its_transaction_and_slot(session_factory, host):
    slot = RecordingSlot()
    with session_factory() as session:
        session.info[REQUEST_SLOT] = slot
        user = session.scalar(select(User).where(User.name == "host"))
        assert session.in_transaction()
        with no_transaction(session):
            assert not session.in_transaction()
            assert slot.calls == ["release"]
            assert user.name == "host"  # what was loaded stays loaded, without a query
            assert not session.in_transaction()
        assert slot.calls == ["release", "acquire"]


def test_a_unit_that_has_written_cannot_pause(session_factory, host):
    with session_factory() as session:
        session.info[REQUEST_SLOT] = RecordingSlot()
        user = session.scalar(select(User).where(User.name == "host"))
        user.name = "renamed"
        session.flush()
        with pytest.raises(RuntimeError, match="after it has written"), no_transaction(session):
            pass


def test_using_the_session_while_paused_is_caught(session_factory, host):
    slot = RecordingSlot()
    with session_factory() as session:
        session.info[REQUEST_SLOT] = slot
        with pytest.raises(RuntimeError, match="used while"), no_transaction(session):
            session.scalar(select(Competition))
        assert slot.calls == ["release", "acquire"]


def test_outside_a_request_the_block_just_runs(session_factory, host):
    with session_factory() as session:
        session.add(Competition(slug="x", title="X", metric_name="rmse", created_by_id=1))
        with no_transaction(session):
            assert session.new  # nothing committed, nothing refused
        session.rollback()
