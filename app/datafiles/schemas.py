from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DataFilePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    name: str
    size_bytes: int
    sha256: str
    created_at: datetime
    # "hidden": an input of code runs only, seen by the hosts alone.
    visibility: str = "public"
    # A public file held back until this phase starts, and that start: public from then on.
    release_with: str | None = None
    releases_at: datetime | None = None


class DataFileRelease(BaseModel):
    """When participants get a stored file: now (``public``), never (``hidden``: code runs
    only), or from a phase's start (``release_with``)."""

    model_config = ConfigDict(extra="forbid")

    visibility: Literal["public", "hidden"] | None = None
    release_with: str | None = Field(default=None, max_length=64)
