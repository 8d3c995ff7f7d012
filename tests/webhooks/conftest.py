from collections.abc import Iterator

import pytest

from app.config import Settings
from tests.conftest import app_settings
from tests.registration.conftest import person  # noqa: F401  (a user with an address)
from tests.webhooks.receiver import Receiver


@pytest.fixture
def settings(tmp_path) -> Settings:  # type: ignore[no-untyped-def]
    """The receiver runs on loopback: this server may send there (the SSRF test says no)."""
    return app_settings(tmp_path / "data").model_copy(
        update={"webhook_allow_private": True, "webhook_timeout_seconds": 1.0}
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()
