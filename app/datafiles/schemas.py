from datetime import datetime

from pydantic import BaseModel, ConfigDict


class DataFilePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    name: str
    size_bytes: int
    sha256: str
    created_at: datetime
