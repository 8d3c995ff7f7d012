from tests.registration.conftest import person  # noqa: F401  (a participant with an address)
