from collections.abc import Callable

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.auth.service import create_user
from app.config import Settings
from app.models import Role
from tests.conftest import Caller


@pytest.fixture
def person(session_factory: sessionmaker[Session], settings: Settings) -> Callable[..., Caller]:
    """A user with a (verified) address: a participant, or an organiser."""

    def make(name: str, email: str, *, organiser: bool = False) -> Caller:
        role = Role.organiser if organiser else Role.participant
        with session_factory() as session:
            _user, token = create_user(
                session, name=name, role=role, secret_key=settings.secret_key, email=email
            )
            session.commit()
        return Caller(name=name, token=token)

    return make
