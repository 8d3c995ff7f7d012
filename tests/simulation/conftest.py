"""Simulation tests run agents in the real jail."""

import pytest

from app.jail.bwrap import JailUnavailable, check_jail
from tests.conftest import skip_or_fail


@pytest.fixture(scope="session")
def jail() -> None:
    """One self-test of the jail for the whole session (check_jail remembers it passed)."""
    try:
        check_jail()
    except JailUnavailable as exc:
        skip_or_fail(f"the jail cannot start here: {exc}")


# The pages' signed-in browsers, for an agent's page.
from tests.web.conftest import browser, with_password  # noqa: E402, F401
