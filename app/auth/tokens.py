"""API tokens: random secrets shown once, stored only as keyed hashes."""

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "pdm_"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str, *, secret_key: str) -> str:
    # Keyed, so a leaked database alone is not enough to forge or check tokens offline.
    return hmac.new(secret_key.encode(), token.encode(), hashlib.sha256).hexdigest()
