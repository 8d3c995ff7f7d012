from datetime import datetime
from typing import Any

from pydantic import BaseModel


class AuditEntryPublic(BaseModel):
    id: int
    actor: str
    action: str
    target: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    created_at: datetime
