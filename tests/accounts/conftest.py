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


@pytest.fixture
def client_with(settings, session_factory):  # type: ignore[no-untyped-def]
    """A client of an app whose settings differ from the test's in ``overrides``."""
    from app.main import create_app
    from tests.asgi_client import TestClient

    opened = []

    def make(**overrides):  # type: ignore[no-untyped-def]
        app = create_app(settings.model_copy(update=overrides), session_factory=session_factory)
        client = TestClient(app)
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


def verified(session_factory, name: str, address: str) -> None:  # type: ignore[no-untyped-def]
    """Give user ``name`` the verified ``address``."""
    from datetime import UTC, datetime

    from sqlalchemy import update

    from app.models import User

    with session_factory() as session:
        session.execute(
            update(User)
            .where(User.name == name)
            .values(email=address, email_verified_at=datetime.now(UTC))
        )
        session.commit()
