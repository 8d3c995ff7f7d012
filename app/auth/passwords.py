"""Password hashing for the web sign-in: Argon2id through pwdlib, with its recommended settings."""

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

_hasher = PasswordHash((Argon2Hasher(),))

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
