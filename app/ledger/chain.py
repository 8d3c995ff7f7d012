"""The chain's arithmetic, shared by the server and ``podium verify``: canonical bodies, links
and sealed values. A leaf module: plain Python, no database, nothing of the app.

An entry's hash is ``sha256("<prev>:<seq>:<sha256 of its body>")`` in lower-case hex, the
first entry's ``prev`` being :data:`GENESIS`. Bodies are canonical JSON (sorted keys, no spaces,
ASCII), so a body read back from JSON hashes to what was stored. A sealed value is committed to
by ``HMAC-SHA256(key, canonical(values))`` with a random 32-byte key per entry: nobody can test
a guessed score against the commitment before the key is published at the reveal, and the server
cannot open it to another value afterwards.
"""

import hashlib
import hmac
import json
import math
import secrets
from typing import Any

GENESIS = "0" * 64


def plain(value: Any) -> Any:
    """``value`` with every float JSON can hold as it is, and the others (nan, inf) as text."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def canonical(value: Any) -> str:
    try:
        return _dumps(value)
    except ValueError:  # a nan or an infinity somewhere: written as text (rare)
        return _dumps(plain(value))


def _dumps(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def sha256_hex(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def link(prev: str, seq: int, body_sha256: str) -> str:
    """The hash of the entry at ``seq`` whose body hashes to ``body_sha256``, after ``prev``."""
    return sha256_hex(f"{prev}:{seq}:{body_sha256}")


def seal(values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A commitment to ``values`` and its opening (``{"key", "values"}``)."""
    key = secrets.token_hex(32)
    return commitment(key, values), {"key": key, "values": plain(values)}


def commitment(key: str, values: dict[str, Any]) -> str:
    return hmac.new(bytes.fromhex(key), canonical(values).encode(), hashlib.sha256).hexdigest()


def opens(sealed: str, opening: dict[str, Any]) -> bool:
    """Whether ``opening`` opens the commitment ``sealed``."""
    try:
        expected = commitment(str(opening["key"]), opening["values"])
    except (KeyError, TypeError, ValueError):
        return False
    return hmac.compare_digest(expected, sealed)
