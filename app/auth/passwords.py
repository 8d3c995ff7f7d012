"""Password hashing for the web sign-in: Argon2id through pwdlib, with its recommended settings.

Those settings cost about 0.2 s of CPU a hash or a check (three passes over 64 MiB, four lanes),
which is the point against a stolen table, and most of the test suite's time when every test
signs in through the form. Under ``PODIUM_ENV=test`` (set by the suite for itself and the
servers and processes it starts) new hashes are Argon2id at its smallest cost instead; a check
reads the cost from the stored hash, so either kind verifies anywhere. Every other environment
(``development``, the default, and ``production``, which the Docker image and compose set)
hashes at the recommended cost: ``tests/auth/test_passwords.py`` holds both.
"""

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

MIN_PASSWORD_LENGTH = 8


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> bool:
    if password_hash is None:
        _hasher.verify(password, _DUMMY_HASH)
        return False
    return _hasher.verify(password, password_hash)
