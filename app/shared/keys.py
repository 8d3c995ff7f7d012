"""Keys as the shared stores file them: bounded, whatever a caller typed."""

import hashlib

MAX_KEY = 200


def bounded_key(key: str) -> str:
    """``key``, or its digest when longer than :data:`MAX_KEY` (a user name typed at the sign-in
    form is the caller's to choose)."""
    if len(key) <= MAX_KEY:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()
