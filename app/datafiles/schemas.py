from datetime import datetime

from pydantic import BaseModel, ConfigDict


class DataFilePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    name: str
    size_bytes: int
    sha256: str
    created_at: datetime
    # "hidden": an input of code runs only, seen by the hosts alone.
    visibility: str = "public"
