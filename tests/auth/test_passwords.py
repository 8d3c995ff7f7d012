"""The password hasher's cost: the recommended Argon2id everywhere but the test suite."""

import pytest

from app.auth.passwords import _hasher_for


@pytest.mark.parametrize("env", [None, "development", "production"])
def test_every_environment_but_tests_hashes_at_the_recommended_cost(env):
    hashed = _hasher_for(env).hash("correct horse battery")
    assert hashed.startswith("$argon2id$")
    assert "m=65536,t=3,p=4" in hashed


def test_the_suites_cheap_hashes_are_still_argon2id_and_verify_anywhere():
    cheap = _hasher_for("test").hash("correct horse battery")
    assert cheap.startswith("$argon2id$") and "m=1024,t=1,p=1" in cheap
    # A check reads the cost from the stored hash: each hasher verifies the other's.
    recommended = _hasher_for("production")
    assert recommended.verify("correct horse battery", cheap)
    assert not recommended.verify("wrong horse battery", cheap)
    assert _hasher_for("test").verify(
        "correct horse battery", recommended.hash("correct horse battery")
    )
