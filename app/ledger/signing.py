"""The server's Ed25519 key: it signs receipts and chain heads; anyone checks them with the
public key (``GET /api/v1/ledger/key``, printed by ``podium verify``)."""

import base64
import binascii
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from app.ledger.chain import canonical, sha256_hex

KEY_FILE = Path("ledger") / "ed25519.key"


class Signer:
    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = base64.b64encode(raw).decode()
        # A short name for the key, so a person can compare two at a glance.
        self.key_id = sha256_hex(raw)[:16]

    def sign(self, payload: dict[str, Any]) -> str:
        """The base64 signature of ``payload``'s canonical JSON."""
        return base64.b64encode(self._key.sign(canonical(payload).encode())).decode()

    def signed(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "signature": self.sign(payload)}


class SigningKeyError(ValueError):
    """The configured signing key is not a base64 Ed25519 seed."""


_signers: dict[tuple[Path, str | None], Signer] = {}
_making = threading.Lock()


def signer_for(data_dir: Path, configured: str | None) -> Signer:
    """The process's signer for these settings, made once (every upload asks for it; the first
    ones of a process may ask from several threads at once)."""
    found = _signers.get((data_dir, configured))
    if found is None:
        with _making:
            found = _signers.get((data_dir, configured))
            if found is None:
                found = _signers[(data_dir, configured)] = _signer(data_dir, configured)
    return found


def _signer(data_dir: Path, configured: str | None) -> Signer:
    if configured:
        try:
            seed = base64.b64decode(configured, validate=True)
        except binascii.Error:
            seed = b""
        if len(seed) != 32:
            raise SigningKeyError("PODIUM_LEDGER_SIGNING_KEY must be the base64 of 32 bytes")
        return Signer(Ed25519PrivateKey.from_private_bytes(seed))
    path = data_dir / KEY_FILE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole, then linked into place: two processes starting at once both keep the
        # first one's key, and neither reads a half-written file.
        draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(os.urandom(32))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    seed = path.read_bytes()
    if len(seed) != 32:
        raise SigningKeyError(f"{path} is not a 32-byte Ed25519 seed")
    return Signer(Ed25519PrivateKey.from_private_bytes(seed))


def verifies(public_key: str, payload: dict[str, Any], signature: str) -> bool:
    """Whether ``signature`` is ``public_key``'s over ``payload`` (all base64)."""
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(base64.b64decode(signature, validate=True), canonical(payload).encode())
    except (InvalidSignature, ValueError, binascii.Error, TypeError):
        return False
    return True
