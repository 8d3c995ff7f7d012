from collections.abc import Callable

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.auth.service import create_user
from app.config import Settings
from app.models import Role
from tests.conftest import Caller


@pytest.fixture
def person(session_factory: sessionmaker[Session], settings: Settings) -> Callable[..., Caller]:
    """A participant with a (verified) address."""

    def make(name: str, email: str) -> Caller:
        with session_factory() as session:
            _user, token = create_user(
                session,
                name=name,
                role=Role.participant,
                secret_key=settings.secret_key,
                email=email,
            )
            session.commit()
        return Caller(name=name, token=token)

    return make
