from typing import Any

from pydantic import BaseModel


class LedgerKeyPublic(BaseModel):
    """The server's public key: receipts and chain heads are signed with its private half."""

    algorithm: str = "Ed25519"
    public_key: str
    key_id: str


# A receipt as the upload's 202 carries it: the entry, its position, the head, the signature.
Receipt = dict[str, Any]
