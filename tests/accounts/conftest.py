"""Helpers of the account tests: the links the outbox holds, read as a person reads a mail."""

import re
from collections.abc import Callable

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.models import OutboundMail

LINK = re.compile(r"https?://\S+\?token=(pdl_[A-Za-z0-9_-]+)")


@pytest.fixture
def mails(session_factory: sessionmaker[Session]) -> Callable[[str], list[OutboundMail]]:
    """The mails queued to an address, oldest first."""

    def to(address: str) -> list[OutboundMail]:
        with session_factory() as session:
            return list(
                session.scalars(
                    select(OutboundMail)
                    .where(OutboundMail.to_addr == address)
                    .order_by(OutboundMail.id)
                )
            )

    return to


def link_token(body: str) -> str:
    found = LINK.search(body)
    assert found, body
    return found.group(1)
