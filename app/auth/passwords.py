"""Password hashing for the web sign-in: Argon2id through pwdlib, with its recommended settings.

Those settings cost about 0.2 s of CPU a hash or a check (three passes over 64 MiB, four lanes),
which is the point against a stolen table, and most of the test suite's time when every test
signs in through the form. Under ``PODIUM_ENV=test`` (set by the suite for itself and the
servers and processes it starts) new hashes are Argon2id at its smallest cost instead; a check
reads the cost from the stored hash, so either kind verifies anywhere. Every other environment
(``development``, the default, and ``production``, which the Docker image and compose set)
hashes at the recommended cost: ``tests/auth/test_passwords.py`` holds both.
"""

import functools
import os

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

RECOMMENDED = Argon2Hasher()
# Argon2id still (the same algorithm and code path), at one pass over 1 MiB and one lane.
TEST_ONLY = Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1)


def _hasher_for(env: str | None) -> PasswordHash:
    return PasswordHash((TEST_ONLY if env == "test" else RECOMMENDED,))


_hasher = _hasher_for(os.environ.get("PODIUM_ENV"))

# Verified when the user is unknown, so a wrong name costs as long as a wrong password.
_DUMMY_HASH = _hasher.hash("podium-no-such-user")

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1024


@functools.cache
def _common_passwords() -> frozenset[str]:
    # zxcvbn's list of the 30,000 most used passwords (from leaked sets), loaded on first use.
    from zxcvbn.frequency_lists import FREQUENCY_LISTS

    return frozenset(FREQUENCY_LISTS["passwords"])


def password_problem(password: str, *, name: str = "", email: str = "") -> str | None:
    """Why ``password`` is refused for a new password, or None: at least 10 characters, not one
    of the most common passwords, not the user's own name or address."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"a password needs at least {MIN_PASSWORD_LENGTH} characters"
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"a password may have at most {MAX_PASSWORD_LENGTH} characters"
    lowered = password.lower()
    if lowered in _common_passwords() or lowered.strip("0123456789!") in _common_passwords():
        return (
            "this password is one of the most common ones; choose another (a few words work well)"
        )
    if lowered in {name.lower(), email.lower(), email.lower().partition("@")[0]} - {""}:
        return "a password may not be your user name or e-mail address"
    return None


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> bool:
    if password_hash is None:
        _hasher.verify(password, _DUMMY_HASH)
        return False
    return _hasher.verify(password, password_hash)
